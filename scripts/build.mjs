// Compiles the server (and the operator CLI) to plain JavaScript in dist/ with esbuild: one
// bundle per entry, dependencies left external. `npm start` runs the result with node.
import { build } from "esbuild"
import { existsSync } from "node:fs"

const started = Date.now()
const entryPoints = { main: "src/main.ts" }
if (existsSync("src/cli/keys.ts")) entryPoints.keys = "src/cli/keys.ts"
await build({
  entryPoints,
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  logLevel: "warning"
})
console.log(`built dist/ in ${Date.now() - started} ms`)
