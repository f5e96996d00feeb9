// esbuild options for the server bundle, shared by `npm run build` (scripts/build.mjs), the
// scale-out and fault tests (test/scale/harness.ts) and the benchmark, so all run the same code.
//
// effect and @effect/* are bundled: they are side-effect-free ESM, so esbuild keeps only the
// modules the app uses (the package barrels would otherwise load every module, Swagger UI's 7 MB
// script included). Every other package stays external and is loaded from node_modules as usual.
// The source map is written beside the bundle without the sources' text; node reads it only when
// started with --enable-source-maps (NODE_OPTIONS), which costs ~35 MB of RSS, so `npm start`
// does not.
import { build } from "esbuild"
import { cpSync, existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { browserBuildOptions, browserEntries } from "./browserBuild.mjs"

const site = fileURLToPath(new URL("../src/http/site/", import.meta.url))

/** Bundles effect and @effect/*; leaves every other bare import external. */
export const bundleEffectOnly = {
  name: "bundle-effect-only",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path === "effect" || args.path.startsWith("effect/") || args.path.startsWith("@effect/")
        ? undefined
        : { path: args.path, external: true }
    )
  }
}

/**
 * Puts the site's files beside the bundle, in site/ (src/http/site/assets.ts looks there): the
 * stylesheets and the Markdown pages as they are, the browser scripts bundled.
 */
export const siteFiles = {
  name: "site-files",
  setup(server) {
    server.onEnd(async (result) => {
      if (result.errors.length > 0) return
      const options = server.initialOptions
      const out = join(options.outdir ?? dirname(options.outfile), "site")
      for (const dir of ["styles", "content"])
        if (existsSync(join(site, dir))) cpSync(join(site, dir), join(out, dir), { recursive: true })
      const entries = browserEntries.filter((name) => existsSync(join(site, "browser", `${name}.ts`)))
      if (entries.length === 0) return
      await build({
        ...browserBuildOptions,
        entryPoints: Object.fromEntries(entries.map((name) => [name, join(site, "browser", `${name}.ts`)])),
        outdir: join(out, "browser")
      })
    })
  }
}

/**
 * The server's bundles in dist/, by output name: `main` is what `npm start` runs (src/start.ts: it
 * sets malloc's trim threshold on Linux, then loads `server`, beside it), `server` the server itself.
 */
export const distEntries = () => ({ main: "src/start.ts", server: "src/main.ts" })

/** Options for one server entry point. */
export const serverBuildOptions = {
  bundle: true,
  platform: "node",
  target: "node24",
  format: "esm",
  plugins: [bundleEffectOnly, siteFiles],
  sourcemap: true,
  sourcesContent: false,
  // ASCII output (non-ASCII characters escaped): V8 keeps a Latin-1 source in one byte per
  // character instead of two, which halves the memory the bundle's source text takes.
  charset: "ascii",
  logLevel: "warning"
}

/**
 * The node flags `npm start` runs the server with, read from package.json's start script, so the
 * benchmark and the multi-process tests run the server exactly as it ships.
 */
export const startNodeFlags = () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  const words = String(pkg.scripts?.start ?? "").split(/\s+/)
  return words.slice(words.indexOf("node") + 1).filter((w) => w.startsWith("--"))
}
