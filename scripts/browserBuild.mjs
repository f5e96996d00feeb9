// esbuild options for the browser scripts (src/http/site/browser/*.ts): one self-contained classic
// script per page, for the browsers the site supports. Used by the server build (scripts/serverBuild.mjs
// writes them beside the bundle) and by the server itself when it runs from src (tests, `npm run dev`).
export const browserBuildOptions = {
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  sourcemap: false,
  logLevel: "warning"
}

/** The browser entry points (src/http/site/browser/<name>.ts), each served as /assets/<name>.js. */
export const browserEntries = ["dashboard", "owner", "checkout"]
