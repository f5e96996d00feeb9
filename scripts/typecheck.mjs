// Typechecks the server (tsconfig.json) and the browser scripts (tsconfig.browser.json). The server
// check runs on the TypeScript 7 compiler that carries the Effect language service (@effect/tsgo's
// build for linux-x64, an optional dependency), so Effect's diagnostics (a missing service in a
// layer, a floating effect, …) fail the check like type errors. Where that build is not installed
// (another platform) the plain compiler runs and says so; under CI=true that is a failure.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { createRequire } from "node:module"
import path from "node:path"

const require = createRequire(import.meta.url)
const plainTsc = path.join(path.dirname(require.resolve("typescript/package.json")), "bin", "tsc")
const tsVersion = require("typescript/package.json").version

const effectTsc = () => {
  try {
    const root = path.dirname(require.resolve("@effect/tsgo-linux-x64/package.json"))
    const dir = path.join(root, "artifacts", "typescript")
    const version = readdirSync(dir).find((v) => v === tsVersion)
    const exe = version && path.join(dir, version, "tsc")
    return exe && existsSync(exe) ? exe : undefined
  } catch {
    return undefined
  }
}

const run = (cmd, args) => spawnSync(cmd, args, { stdio: "inherit" }).status ?? 1

const effect = effectTsc()
if (effect === undefined) {
  const why = `the Effect language service build for TypeScript ${tsVersion} (@effect/tsgo-linux-x64) is not installed here`
  if (process.env.CI === "true") {
    console.error(`typecheck: ${why}; under CI=true that is a failure`)
    process.exit(1)
  }
  console.warn(`typecheck: ${why}; checking types without Effect's diagnostics`)
}
const server =
  effect === undefined
    ? run(process.execPath, [plainTsc, "--noEmit"])
    : run(effect, ["--noEmit", "-p", "tsconfig.json"])
const browser = run(process.execPath, [plainTsc, "--noEmit", "-p", "tsconfig.browser.json"])
process.exit(server || browser)
