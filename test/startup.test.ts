// Startup answers or says why: the port is bound only once storage, migrations, seeding and services
// are ready, so requests fired from the moment the port accepts connections are all answered (and
// each answer is checked against the OpenAPI document like every test server's).
import { Effect } from "effect"
import { build } from "esbuild"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { connect, createServer, type AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it, vi } from "vitest"
import { apiDocument } from "../src/http/openapi.js"
import { underContract } from "./fixtures/contract.js"
import { freshDatabase, postgresSkipReason } from "./fixtures/db.js"
import { bundleEffectOnly, distEntries, serverBuildOptions, startNodeFlags } from "../scripts/serverBuild.mjs"
import { buildServer } from "./scale/harness.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port
      s.close(() => resolve(port))
    })
  })

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/**
 * Starts the server, waits for the first accepted connection, then fires `count` requests at once;
 * returns their statuses once the server, sent SIGTERM, has exited (its DATA_DIR lock released).
 */
const fireFromFirstAccept = async (env: Record<string, string>, count: number) => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  // The document this source serves: the server is not asked for it, so the first requests are the test's.
  const bundle = await buildServer()
  const { release } = await underContract(baseUrl, { document: apiDocument(baseUrl) })
  // As `npm start` runs it: the bundle, with its node flags.
  const child = spawn(process.execPath, [...startNodeFlags(), bundle], {
    cwd: root,
    env: { ...process.env, BASE_URL: "", LOG_LEVEL: "Warning", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += String(d)))
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    // The first accepted connection (asked every 5 ms: the requests go out as early as they can), or
    // the child's exit, which ends the wait at once.
    const first = await vi
      .waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) return "exited"
          if (!(await accepts(port))) throw new Error("not accepting yet")
          return "accepted"
        },
        { timeout: 60_000, interval: 5 }
      )
      .catch(() => "never")
    if (first !== "accepted") throw new Error(`the server never accepted a connection (${first}): ${stderr}`)
    const paths = ["/health", "/api/discover", "/api/trpc/marketplace.getTemplates"]
    // Each answered, or reported unanswered after 30 s: the bound tells a hang (a request accepted
    // before the app was ready is never answered) from a slow answer, far beyond any answer's time.
    return await Promise.all(
      Array.from({ length: count }, (_, i) =>
        fetch(`${baseUrl}${paths[i % paths.length]}`, { signal: AbortSignal.timeout(30_000) }).then(
          (r) => r.status,
          (e: unknown) => `no answer: ${String(e)}`
        )
      )
    )
  } finally {
    child.kill("SIGTERM")
    // Its exit (SIGKILL if it has not come 10 s after SIGTERM).
    const grace = setTimeout(() => child.kill("SIGKILL"), 10_000)
    await exit
    clearTimeout(grace)
    release()
  }
}

describe("startup", () => {
  it("memory: every request fired from the first accepted connection is answered", async () => {
    const statuses = await fireFromFirstAccept({ STORAGE: "memory" }, 70)
    expect(statuses.filter((s) => s !== 200)).toEqual([])
  }, 90_000)

  it("embedded (the default, a fresh DATA_DIR): every request fired from the first accepted connection is answered", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agent-commerce-startup-"))
    try {
      const env = { STORAGE: "", DATA_DIR: dataDir }
      expect((await fireFromFirstAccept(env, 70)).filter((s) => s !== 200)).toEqual([])
      // Again on the existing folder (its lock released by SIGTERM: the first process has exited).
      expect((await fireFromFirstAccept(env, 70)).filter((s) => s !== 200)).toEqual([])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)

  it.skipIf(postgresSkipReason !== undefined)(
    `Postgres: every request fired from the first accepted connection is answered (migrations ran first)${postgresSkipReason ? ` — ${postgresSkipReason}` : ""}`,
    async () => {
      const statuses = await Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(freshDatabase, (db) =>
            Effect.promise(() => fireFromFirstAccept({ STORAGE: "postgres", DATABASE_URL: db.url }, 70))
          )
        )
      )
      expect(statuses.filter((s) => s !== 200)).toEqual([])
    },
    90_000
  )
})

/**
 * dist/ as `npm run build` lays it out, in a folder of its own: the entry `npm start` runs
 * (src/start.ts) as main.mjs, and beside it server.js, a link to this process's server bundle.
 */
const distFolder = async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "agent-commerce-dist-"))
  await build({
    ...serverBuildOptions,
    plugins: [bundleEffectOnly],
    entryPoints: [path.join(root, distEntries().main)],
    outfile: path.join(dir, "main.mjs"),
    sourcemap: false,
    logLevel: "error"
  })
  symlinkSync(await buildServer(), path.join(dir, "server.js"))
  return dir
}

/** `node <npm start's flags> dist/main.js` with `env`; what /proc shows of the process once it answers. */
const startedAs = async (dir: string, env: Record<string, string | undefined>) => {
  const port = await freePort()
  const entry = path.join(dir, "main.mjs")
  const child = spawn(process.execPath, [...startNodeFlags(), entry], {
    cwd: root,
    env: { ...process.env, STORAGE: "memory", BASE_URL: "", LOG_LEVEL: "Warning", PORT: String(port), ...env },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += String(d)))
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    const health = await vi.waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`the server exited: ${stderr}`)
        return (await fetch(`http://127.0.0.1:${port}/health`)).status
      },
      { timeout: 30_000, interval: 50 }
    )
    // The process the spawn made (same pid), as it runs now.
    const environ = readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0")
    const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0").filter(Boolean)
    return { health, trim: environ.find((v) => v.startsWith("MALLOC_TRIM_THRESHOLD_=")), cmdline, entry }
  } finally {
    child.kill("SIGTERM")
    const grace = setTimeout(() => child.kill("SIGKILL"), 10_000)
    await exit
    clearTimeout(grace)
  }
}

// docs/storage.md, "Memory": glibc keeps up to 64 MB of freed memory per heap unless the process
// starts with a trim threshold; the embedded default idled ~70 MB higher for it.
describe.skipIf(process.platform !== "linux")("npm start's entry (dist/main.js) on Linux", () => {
  it("runs the server in the same process with malloc's trim threshold at 1 MiB, its arguments and node flags kept; an operator's own threshold is kept", async () => {
    const dir = await distFolder()
    try {
      const plain = await startedAs(dir, { MALLOC_TRIM_THRESHOLD_: undefined })
      expect(plain.health).toBe(200)
      expect(plain.trim).toBe("MALLOC_TRIM_THRESHOLD_=1048576")
      expect(plain.cmdline).toEqual([process.execPath, ...startNodeFlags(), plain.entry])
      const own = await startedAs(dir, { MALLOC_TRIM_THRESHOLD_: "4194304" })
      expect(own.health).toBe(200)
      expect(own.trim).toBe("MALLOC_TRIM_THRESHOLD_=4194304")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)
})
