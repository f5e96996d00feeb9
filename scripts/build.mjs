// Compiles the server (and the operator CLI) to plain JavaScript in dist/ with esbuild: one
// bundle per entry (scripts/serverBuild.mjs says what is bundled). `npm start` runs the result with
// node: dist/main.js (src/start.ts, a few lines) starts the server, dist/server.js (src/main.ts).
import { build } from "esbuild"
import { existsSync } from "node:fs"
import { distEntries, serverBuildOptions } from "./serverBuild.mjs"

const started = Date.now()
const entryPoints = distEntries()
if (existsSync("src/cli/keys.ts")) entryPoints.keys = "src/cli/keys.ts"
await build({ ...serverBuildOptions, entryPoints, outdir: "dist" })
console.log(`built dist/ in ${Date.now() - started} ms`)
