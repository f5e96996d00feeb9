// Out-of-process test harness: the server compiled as `npm start` runs it (esbuild → node), a
// throwaway PostgreSQL cluster of the test's own (initdb in a temp dir, a free loopback port),
// a round-robin front for several servers, and the ledger invariants checked with SQL. Every
// server process and front is under the OpenAPI contract (test/fixtures/contract.ts) like the
// in-process test servers: each response fetch() receives from it is checked.
import { startNodeFlags } from "../../scripts/serverBuild.mjs"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http"
import { createServer as createNetServer } from "node:net"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import pg from "pg"
import { COUNTER_DRIFT_SQL } from "../../src/layers/storage/postgres/counters.js"
import { bundled } from "../fixtures/bundle.js"
import { underContract } from "../fixtures/contract.js"
import { requireAdminDatabaseUrl } from "../fixtures/db.js"
import { eventually } from "../fixtures/wait.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createNetServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      const port = typeof address === "object" && address ? address.port : 0
      s.close(() => resolve(port))
    })
  })

// ---------------------------------------------------------------------------------------------
// The server, compiled

/** src/main.ts bundled as `npm run build` bundles it, once per test process (test/fixtures/bundle.ts). */
export const buildServer = (): Promise<string> => bundled("src/main.ts")

export interface ServerProcess {
  readonly baseUrl: string
  readonly port: number
  readonly child: ChildProcess
  readonly output: () => string
  /** SIGTERM, then SIGKILL after 10 s; throws when a response broke the OpenAPI contract. */
  readonly stop: () => Promise<void>
  /** kill -9, no cleanup at all; throws when a response broke the OpenAPI contract. */
  readonly kill9: () => Promise<void>
}

/**
 * V8's flags for a server these tests start beside `npm start`'s: PGlite's WebAssembly stays on its
 * baseline compiler. An embedded server otherwise has V8's optimising compiler take PostgreSQL's
 * parser at start-up, ~3 s of CPU and ~600 MB (docs/storage.md, "Memory"), in a process that lives a
 * few seconds; a compiler tier changes how fast the code runs, not what it does.
 */
const TEST_PROCESS_FLAGS = ["--liftoff-only"]

/**
 * Starts `node <bundle>` with the given environment, waits until /health answers (any status; an
 * exit before that fails with the output, and so does no answer within `readyTimeoutMs`) and puts
 * it under the OpenAPI contract of the document it serves.
 */
export const startServerProcess = async (
  bundle: string,
  env: Record<string, string>,
  options: { readonly port?: number; readonly readyTimeoutMs?: number } = {}
): Promise<ServerProcess> => {
  const port = options.port ?? (await freePort())
  const baseUrl = `http://127.0.0.1:${port}`
  // bench/loopback.mjs binds the server to 127.0.0.1 only (the app itself listens on every interface).
  const loopbackOnly = pathToFileURL(path.join(root, "bench", "loopback.mjs")).href
  // The flags of `npm start`, plus source maps for readable stacks in a failing test's output.
  const child = spawn(
    process.execPath,
    [...startNodeFlags(), ...TEST_PROCESS_FLAGS, "--enable-source-maps", "--import", loopbackOnly, bundle],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        PORT: String(port),
        BASE_URL: baseUrl,
        LOG_LEVEL: "WARN",
        PAYMENTS: "fake",
        WEBHOOKS_ALLOW_LOOPBACK: "true",
        ...env
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const exited = () => child.exitCode !== null || child.signalCode !== null
  // Ready when /health answers (any status); an exit before that ends the wait at once.
  const ready = await eventually(
    // A request accepted before the app finished starting is never answered: time it out and ask again.
    async () =>
      exited() ? "exited" : (await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(5_000) })).status,
    () => true,
    { timeoutMs: options.readyTimeoutMs ?? 60_000, message: `server on ${baseUrl} did not answer /health` }
  ).catch((e: unknown) => {
    child.kill("SIGKILL")
    throw new Error(`${e instanceof Error ? e.message : String(e)}:\n${output}`)
  })
  if (ready === "exited")
    throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output}`)
  const waitExit = () => (exited() ? Promise.resolve() : new Promise<void>((r) => child.once("exit", () => r())))
  const { release } = await underContract(baseUrl)
  let released = false
  /** Once per process: a lie found at any response fails the test that stops it. */
  const releaseOnce = () => {
    if (released) return
    released = true
    release()
  }
  return {
    baseUrl,
    port,
    child,
    output: () => output,
    stop: async () => {
      if (!exited()) {
        child.kill("SIGTERM")
        // The exit event, or SIGKILL when it has not come 10 s after SIGTERM: longer than the server's
        // own graceful shutdown (5 s, src/layers/app.ts) plus closing its database, so a slow machine
        // does not turn a clean stop into a kill (at 3 s the embedded store's lock was left behind).
        const grace = setTimeout(() => child.kill("SIGKILL"), 10_000)
        await waitExit()
        clearTimeout(grace)
      }
      releaseOnce()
    },
    kill9: async () => {
      if (!exited()) {
        child.kill("SIGKILL")
        await waitExit()
      }
      releaseOnce()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A throwaway PostgreSQL cluster

export interface ThrowawayPostgres {
  readonly url: string
  readonly stop: () => void
  readonly start: () => void
  readonly destroy: () => void
}

const pgBin = (): string | undefined => {
  const base = "/usr/lib/postgresql"
  if (!existsSync(base)) return undefined
  const versions = readdirSync(base)
    .filter((v) => existsSync(path.join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? path.join(base, versions[0], "bin") : undefined
}

/** What is missing to make a throwaway cluster here, or undefined when nothing is. */
export const throwawayPostgresMissing = (): string | undefined => {
  if (!pgBin())
    return "no PostgreSQL binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql; .ci/run does)"
  if (process.getuid?.() === 0) {
    if (spawnSync("id", ["-u", "postgres"]).status !== 0)
      return "running as root and there is no postgres user to run initdb as"
    if (spawnSync("runuser", ["--help"]).status !== 0) return "running as root without runuser"
  }
  return undefined
}

/** initdb into a temp dir and start it on a free loopback port (as the postgres user when root). */
export const startThrowawayPostgres = async (): Promise<ThrowawayPostgres> => {
  const bin = pgBin()!
  const asRoot = process.getuid?.() === 0
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "fault-pg-"))
  const sockDir = mkdtempSync(path.join(os.tmpdir(), "fault-pgsock-"))
  const run = (cmd: string, args: ReadonlyArray<string>) => {
    const full = asRoot ? ["-u", "postgres", "--", path.join(bin, cmd), ...args] : [...args]
    const r = spawnSync(asRoot ? "runuser" : path.join(bin, cmd), full, { encoding: "utf8", timeout: 60_000 })
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`)
    return r.stdout
  }
  if (asRoot) {
    spawnSync("chown", ["-R", "postgres", dataDir, sockDir])
    chmodSync(dataDir, 0o700)
  }
  const port = await freePort()
  run("initdb", ["-D", dataDir, "-U", "fault", "--auth=trust", "-E", "UTF8"])
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${sockDir} -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
  const start = () =>
    run("pg_ctl", ["-D", dataDir, "-l", path.join(dataDir, "server.log"), "-w", "-t", "60", "-o", options, "start"])
  const stop = () => run("pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "stop"])
  start()
  return {
    url: `postgres://fault@127.0.0.1:${port}/postgres`,
    start: () => void start(),
    stop: () => void stop(),
    destroy: () => {
      try {
        run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"])
      } catch {
        // already stopped
      }
      rmSync(dataDir, { recursive: true, force: true })
      rmSync(sockDir, { recursive: true, force: true })
    }
  }
}

/** A fresh database on the shared test server (TEST_DATABASE_URL); dropped by `drop`. */
export const freshDatabaseUrl = async (adminUrl: string = requireAdminDatabaseUrl()) => {
  const name = `t_${randomBytes(6).toString("hex")}`
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: adminUrl })
    await c.connect()
    try {
      await c.query(text)
    } finally {
      await c.end()
    }
  }
  await admin(`CREATE DATABASE ${name}`)
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return { url: u.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

// ---------------------------------------------------------------------------------------------
// Round robin

/**
 * A tiny HTTP front that sends request n to upstream n mod k (bodies and headers passed through),
 * under the OpenAPI contract like the servers behind it (`close` throws when a response broke it).
 */
export const roundRobin = async (
  upstreams: ReadonlyArray<number>
): Promise<{ readonly baseUrl: string; readonly hits: Array<number>; readonly close: () => Promise<void> }> => {
  let next = 0
  const hits = upstreams.map(() => 0)
  const server: Server = createHttpServer((req, res) => {
    const i = next++ % upstreams.length
    hits[i]++
    const upstream = httpRequest(
      { host: "127.0.0.1", port: upstreams[i], method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, { ...up.headers, "x-upstream": String(i) })
        up.pipe(res)
      }
    )
    upstream.on("error", (e) => {
      res.writeHead(502, { "content-type": "application/json" })
      res.end(JSON.stringify({ type: "BadGateway", message: e.message }))
    })
    req.pipe(upstream)
  })
  server.keepAliveTimeout = 1000
  const port = await new Promise<number>((r) =>
    server.listen(0, "127.0.0.1", () => {
      const a = server.address()
      r(typeof a === "object" && a ? a.port : 0)
    })
  )
  const baseUrl = `http://127.0.0.1:${port}`
  const { release } = await underContract(baseUrl)
  return {
    baseUrl,
    hits,
    close: async () => {
      await new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      })
      release()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ledger invariants, straight from the tables

export interface LedgerInvariants {
  readonly totalCents: number
  readonly mismatched: ReadonlyArray<string>
  readonly negative: ReadonlyArray<string>
  /** References settled (purchase / escrow_settle) more than once, or both settled and released. */
  readonly doubleSettled: ReadonlyArray<string>
  /**
   * Completed purchases without their ledger entry (a `purchase` referenced by the transaction, or
   * the saga's `escrow_settle`), and purchase or saga-settlement entries without their transaction.
   */
  readonly unmatched: ReadonlyArray<string>
  readonly entries: number
  /** Running totals (spend per agent-day, usage per agent-day-service) that differ from the completed purchases (docs/commerce.md). */
  readonly spendDrift: ReadonlyArray<string>
  /** Per-agent counters (stats, reputation inputs, top services, categories; migration 0018) that differ from a recomputation. */
  readonly counterDrift: ReadonlyArray<string>
}

/** Runs one SQL text, returning its rows (a pg client, or PGlite opened on a data folder). */
export type RunQuery = <R>(text: string) => Promise<{ readonly rows: ReadonlyArray<R> }>

/** One statement on a database of its own connection, for tests that read or write a server's tables from outside it. */
export const query = async <R extends Record<string, unknown>>(
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = []
) => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query<R>(text, [...params])).rows
  } finally {
    await c.end()
  }
}

export const ledgerInvariants = async (databaseUrl: string): Promise<LedgerInvariants> => {
  const c = new pg.Client({ connectionString: databaseUrl })
  await c.connect()
  try {
    return await ledgerInvariantsOf(
      <R>(text: string) => c.query(text) as unknown as Promise<{ rows: ReadonlyArray<R> }>
    )
  } finally {
    await c.end()
  }
}

/** The ledger's invariants, read with `query`: balanced, balances equal postings, nothing settled twice. */
export const ledgerInvariantsOf = async (query: RunQuery): Promise<LedgerInvariants> => {
  const c = { query: <R>(text: string) => query<R>(text) }
  {
    const total = await c.query<{ total: string }>(
      "SELECT COALESCE(SUM(amount), 0)::text AS total FROM ledger_postings"
    )
    const mismatched = await c.query<{ account: string }>(`
      SELECT b.account FROM ledger_account_balances b
      LEFT JOIN (SELECT account, SUM(amount) AS s FROM ledger_postings GROUP BY account) p USING (account)
      WHERE b.balance <> COALESCE(p.s, 0)
      UNION
      SELECT p.account FROM (SELECT account, SUM(amount) AS s FROM ledger_postings GROUP BY account) p
      LEFT JOIN ledger_account_balances b USING (account) WHERE b.account IS NULL AND p.s <> 0`)
    const negative = await c.query<{ account: string }>(
      "SELECT account FROM ledger_account_balances WHERE balance < 0 AND account NOT LIKE 'external:%'"
    )
    const doubled = await c.query<{ reference: string }>(`
      SELECT reference FROM ledger_entries
      WHERE kind IN ('purchase', 'escrow_settle', 'escrow_release', 'refund')
      GROUP BY reference
      HAVING COUNT(*) FILTER (WHERE kind IN ('purchase', 'escrow_settle')) > 1
          OR COUNT(*) FILTER (WHERE kind = 'escrow_release') > 1
          OR COUNT(*) FILTER (WHERE kind = 'refund') > 1
          OR (COUNT(*) FILTER (WHERE kind = 'escrow_settle') > 0 AND COUNT(*) FILTER (WHERE kind = 'escrow_release') > 0)`)
    const entries = await c.query<{ n: string }>("SELECT COUNT(*)::text AS n FROM ledger_entries")
    const hasTransactions =
      (await c.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'commerce_transactions'")).rows
        .length > 0
    const hasSpendDays =
      (await c.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'agent_spend_days'")).rows.length > 0
    const hasCounters =
      (await c.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'agent_counters'")).rows.length > 0
    const unmatched = hasTransactions
      ? await c.query<{ ref: string }>(`
          SELECT 'transaction without entry: ' || t.id AS ref FROM commerce_transactions t
          WHERE t.status IN ('completed', 'refunded')
            AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = t.ledger_entry_id
              AND ((e.kind = 'purchase' AND e.reference = t.id) OR e.kind = 'escrow_settle'))
          UNION ALL
          SELECT 'entry without transaction: ' || e.reference FROM ledger_entries e
          WHERE e.kind = 'purchase' AND NOT EXISTS (SELECT 1 FROM commerce_transactions t WHERE t.id = e.reference)
          UNION ALL
          SELECT 'saga settlement without transaction: ' || e.reference FROM ledger_entries e
          WHERE e.kind = 'escrow_settle' AND NOT EXISTS (SELECT 1 FROM commerce_transactions t WHERE t.ledger_entry_id = e.id)`)
      : { rows: [] as Array<{ ref: string }> }
    return {
      totalCents: Number(total.rows[0].total),
      mismatched: mismatched.rows.map((r) => r.account),
      negative: negative.rows.map((r) => r.account),
      doubleSettled: doubled.rows.map((r) => r.reference),
      unmatched: unmatched.rows.map((r) => r.ref),
      entries: Number(entries.rows[0].n),
      spendDrift: hasSpendDays
        ? (
            await c.query<{ k: string }>(`
              SELECT COALESCE(k.agent_id, r.agent_id) || '/' || COALESCE(k.day, r.day)::text || ': kept ' || COALESCE(k.spent_cents, 0) || ', recomputed ' || COALESCE(r.cents, 0) AS k
              FROM agent_spend_days k
              FULL OUTER JOIN (SELECT buyer_agent_id AS agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, SUM(price_cents) AS cents
                FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, 2) r ON r.agent_id = k.agent_id AND r.day = k.day
              WHERE COALESCE(k.spent_cents, 0) <> COALESCE(r.cents, 0)
              UNION ALL
              SELECT COALESCE(k.agent_id, r.agent_id) || '/' || COALESCE(k.day, r.day)::text || '/' || COALESCE(k.service_id, r.service_id)
                || ': kept ' || COALESCE(k.calls, 0) || ' calls ' || COALESCE(k.spent_cents, 0) || ' cents, recomputed ' || COALESCE(r.calls, 0) || ' calls ' || COALESCE(r.cents, 0) || ' cents' AS k
              FROM agent_usage_days k
              FULL OUTER JOIN (SELECT buyer_agent_id AS agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, service_id, count(*) AS calls, SUM(price_cents) AS cents
                FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, 2, 3) r ON r.agent_id = k.agent_id AND r.day = k.day AND r.service_id = k.service_id
              WHERE COALESCE(k.spent_cents, 0) <> COALESCE(r.cents, 0) OR COALESCE(k.calls, 0) <> COALESCE(r.calls, 0)`)
          ).rows.map((r) => r.k)
        : [],
      counterDrift: hasCounters
        ? (
            await c.query<{ agent_id: string; counter: string; kept: string; recomputed: string }>(COUNTER_DRIFT_SQL)
          ).rows.map((r) => `${r.agent_id}/${r.counter}: kept ${r.kept}, recomputed ${r.recomputed}`)
        : []
    }
  }
}

/** The cheapest priced tier in a GET /services answer (a page `{ data }`, or a bare array). */
export const cheapestTier = (
  listed: unknown
): { readonly serviceId: string; readonly tierId: string; readonly priceCents: number } | undefined => {
  const services = (Array.isArray(listed) ? listed : ((listed as { data?: unknown }).data ?? [])) as ReadonlyArray<{
    readonly id: string
    readonly tiers?: ReadonlyArray<{ readonly id: string; readonly priceCents: number }>
  }>
  let best: { serviceId: string; tierId: string; priceCents: number } | undefined
  for (const s of services) {
    for (const t of s.tiers ?? []) {
      if (t.priceCents > 0 && (!best || t.priceCents < best.priceCents))
        best = { serviceId: s.id, tierId: t.id, priceCents: t.priceCents }
    }
  }
  return best
}
