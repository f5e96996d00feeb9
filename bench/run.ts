// `npm run bench`: builds, starts the compiled server (memory, embedded, then Postgres) and two baselines (raw
// node:http and a bare Effect HttpApi serving the app's own bytes), drives each with autocannon from
// a separate process, and writes bench/results.md. Flags: --quick (3 s per run), --duration <s>,
// --connections <n>, --only <scenario,...>, --skip-postgres, --skip-embedded, --no-pin, --no-write, --node-args "<flags>"
// (added to the flags of `npm start`).
// `--profile <scenario> [--storage embedded|postgres]` instead runs one scenario against the app under
// `node --cpu-prof` and prints where the time goes (self time by function and by package).
// `--soak <duration>` instead drives a mixed load of many agents on each storage and reports per
// interval (bench/soak.ts); `--history` measures an agent's reads with 100k purchases behind it and
// the catalogue at 100k services over HTTP (bench/historyHttp.ts).
// Each app also gets the webhook rows: deliveries per second to 100 healthy endpoints, without and
// with one dead endpoint (accepts, never answers) holding 400 waiting events (`--only webhook`),
// and the push-order rows (bench/orders.ts, `--only "push orders"`).
import { build } from "esbuild"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse
} from "node:http"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import pg from "pg"
import { commerceServices } from "../src/seed/services.js"
import { startNodeFlags } from "../scripts/serverBuild.mjs"
import type { Fixture } from "./baseline.js"
import type { LoadResult, LoadSpec, LoadStep } from "./load.js"
import type { BenchKit } from "./soak.js"
import { ordersSection, type OrdersRow, pushOrders } from "./orders.js"
import { catalogueGrowth, growthSection, type GrowthRun } from "./catalogueGrowth.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const tmp = path.join(root, "bench", ".tmp")
/** Preload that binds every server of the run to 127.0.0.1. */
const loopbackOnly = pathToFileURL(path.join(root, "bench", "loopback.mjs")).href

// ---------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(name)
const option = (name: string) => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}

const USAGE = `Usage: npm run bench -- [options]

Builds the server, starts it in memory, embedded and Postgres mode plus two baselines, drives each
with autocannon and writes bench/results.md (about 10 minutes at the default duration).

Options:
  --quick                 3 s per run instead of 10 s
  --duration <s>          seconds per run
  --connections <n>       concurrent connections (default 10)
  --only <a,b,...>        run only these scenarios
  --skip-postgres         skip the Postgres run (also skipped without BENCH_DATABASE_URL / TEST_DATABASE_URL)
  --skip-embedded         skip the embedded (PGlite) run
  --no-pin                do not pin server and load to separate cores with taskset
  --no-write              print the results, do not write bench/results.md
  --node-args "<flags>"   extra node flags for the app process
  --profile <scenario>    profile one scenario under node --cpu-prof instead (with --storage memory|embedded|postgres)
  --soak <duration>       instead: a mixed load of many agents (a few heavy buyers) for <duration> (10m, 180s, 180)
                          on each storage, reported per interval: req/s, p99, server RSS, load average (bench/soak.ts)
  --soak-interval <d>     length of one reported interval (default 1m, or a third of a shorter soak)
  --soak-agents <n>       agents in the soak (default 50, of which 3 heavy)
  --history               instead: one agent with --purchases (100000) purchases against a fresh one, read by read,
                          and the catalogue seeded vs grown by --services (100000), over HTTP (bench/historyHttp.ts);
                          --duration is the seconds of each measured round (default 5 here), --rounds <n> (default 2)
                          the rounds per agent or catalogue, --only <a,b> narrows the reads (e.g. stats)
  --storage <a,b>         with --soak / --history: only these storages (memory, embedded, postgres)
  --help, -h              print this and exit
`
const flagsWithValue = new Set([
  "--duration",
  "--connections",
  "--only",
  "--node-args",
  "--profile",
  "--storage",
  "--soak",
  "--soak-interval",
  "--soak-agents",
  "--purchases",
  "--services",
  "--rounds"
])
const plainFlags = new Set(["--quick", "--skip-postgres", "--skip-embedded", "--no-pin", "--no-write", "--history"])
// Checked before anything starts: `--help` or a mistyped flag must never launch a 10-minute run.
{
  if (flag("--help") || flag("-h")) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (flagsWithValue.has(arg)) i++
    else if (!plainFlags.has(arg)) {
      process.stderr.write(`bench: unknown option ${arg}\n\n${USAGE}`)
      process.exit(2)
    }
  }
}
const quick = flag("--quick")
const durationSeconds = Number(option("--duration") ?? (quick ? 3 : 10))
const warmupSeconds = quick ? 1 : 2
const connections = Number(option("--connections") ?? 10)
const only = option("--only")?.split(",")
const pin = !flag("--no-pin") && os.cpus().length >= 2 && spawnSync("taskset", ["-V"]).status === 0
const appEntry = "dist/main.js"
/** The node flags `npm start` uses (package.json), so the bench measures the server as it ships. */
const startFlags = startNodeFlags()
/** Extra node flags for the app process (e.g. "--max-semi-space-size=4"), to measure their effect. */
const appNodeArgs = (option("--node-args") ?? "").split(" ").filter(Boolean)
const databaseAdminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
const postgresSkip = flag("--skip-postgres")
  ? "--skip-postgres given"
  : databaseAdminUrl
    ? undefined
    : "neither BENCH_DATABASE_URL nor TEST_DATABASE_URL is set"
/** Ceiling on the whole run; past it every child is killed and the run fails (the catalogue-growth rows add ~12 min). */
const HARD_LIMIT_MS = 45 * 60 * 1000

// ---------------------------------------------------------------------------------------------
// Processes

const children = new Set<ChildProcess>()
/** Temporary folders to remove at exit (the embedded store's data). */
const cleanups: Array<() => void> = []
const killAll = () => {
  for (const child of children) if (child.exitCode === null && child.pid !== undefined) child.kill("SIGKILL")
  for (const cleanup of cleanups.splice(0)) {
    try {
      cleanup()
    } catch {
      // best effort
    }
  }
}
process.on("exit", killAll)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    killAll()
    process.exit(130)
  })
}
setTimeout(() => {
  process.stderr.write(`bench: hard limit of ${HARD_LIMIT_MS / 60000} min reached, stopping\n`)
  killAll()
  process.exit(2)
}, HARD_LIMIT_MS).unref()

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      const port = typeof address === "object" && address ? address.port : 0
      s.close(() => resolve(port))
    })
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Spawns `node args` (pinned to `cpu` when pinning), keeps stderr for error reports. */
const spawnNode = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  cpu: number,
  stdin: "ignore" | "pipe" = "ignore"
) => {
  const command = pin ? "taskset" : process.execPath
  const full = pin ? ["-c", String(cpu), process.execPath, ...args] : [...args]
  const child = spawn(command, full, { cwd: root, env: { ...process.env, ...env }, stdio: [stdin, "pipe", "pipe"] })
  children.add(child)
  let stderr = ""
  child.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  child.stdout!.resume()
  child.on("exit", () => children.delete(child))
  return { child, stderr: () => stderr }
}

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once("exit", r))
  child.kill("SIGTERM")
  await Promise.race([exited, sleep(3000)])
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

/** Reads one field (kB) of /proc/<pid>/status, in MB. */
const procMb = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m ? Math.round(Number(m[1]) / 1024) : NaN
  } catch {
    return NaN
  }
}

/** CPU time (user + system) of one process so far, ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMsOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/** CPU time so far of every process named `postgres` (the server and its backends), ms by pid. */
const postgresCpuMs = (): Map<number, number> => {
  const byPid = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres")
        byPid.set(Number(entry), cpuMsOf(Number(entry)))
    } catch {
      // gone meanwhile
    }
  }
  return byPid
}

/** CPU Postgres used between two readings: per pid, so a backend that exited meanwhile is left out, not subtracted. */
const postgresCpuSince = (before: ReadonlyMap<number, number>): number => {
  let total = 0
  for (const [pid, ms] of postgresCpuMs()) total += ms - (before.get(pid) ?? 0)
  return total
}

/** Busy CPU time of the whole machine so far (all cores, /proc/stat), ms. */
const machineBusyMs = (): number => {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
  const busy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!
  return busy * 10
}

/** The pid of the node process itself (taskset execs into it, so it is the child's pid). */
const serverPid = (child: ChildProcess) => child.pid!

const waitFor = async (url: string, timeoutMs: number, alive: () => boolean) => {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if (!alive()) throw new Error("process exited before it answered")
    try {
      // A request accepted before the app finished starting is never answered: time it out and retry.
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) })
      if (res.status < 500) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw new Error(`no answer from ${url} in ${timeoutMs} ms`)
}

interface Target {
  readonly label: string
  readonly baseUrl: string
  readonly pid: number
  readonly child: ChildProcess
  readonly idleRssMb: number
}

type Storage = "memory" | "embedded" | "postgres"

const startApp = async (
  storage: Storage,
  databaseUrl?: string,
  nodeArgs: ReadonlyArray<string> = [],
  entry = appEntry,
  env: Record<string, string> = {}
): Promise<Target> => {
  const port = await freePort()
  // The embedded store gets a fresh data folder per run (removed at exit).
  const dataDir = storage === "embedded" ? mkdtempSync(path.join(os.tmpdir(), "bench-data-")) : undefined
  if (dataDir) cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const baseUrl = `http://127.0.0.1:${port}`
  const { child, stderr } = spawnNode(
    [...startFlags, ...appNodeArgs, ...nodeArgs, "--import", loopbackOnly, entry],
    {
      PORT: String(port),
      BASE_URL: baseUrl,
      STORAGE: storage,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      PAYMENTS: "fake",
      LOG_LEVEL: "WARN",
      RATE_LIMIT_PER_MINUTE: "1000000",
      RATE_LIMIT_PER_DAY: "100000000",
      NEGOTIATION_DELAY_MS: "0",
      // The webhook rows deliver to receivers on 127.0.0.1 (the bench process).
      WEBHOOKS_ALLOW_LOOPBACK: "true",
      // The push-order rows: the dead seller's buys answer 202 after this wait (the healthy seller's
      // orders end in milliseconds, well inside it).
      ORDER_WAIT_MS: "2000",
      // Every bench tenant signs up from loopback: the per-address anonymous-write limit is raised.
      ANONYMOUS_WRITES_PER_MINUTE: "1000000",
      ANONYMOUS_WRITES_PER_DAY: "100000000",
      NODE_ENV: "production",
      // The bench measures the server as production runs it, with the simulated processor.
      FAKE_PAYMENTS_IN_PRODUCTION: "true",
      ...env
    },
    0,
    entry === appEntry ? "ignore" : "pipe"
  )
  try {
    await waitFor(`${baseUrl}/health`, 30_000, () => child.exitCode === null)
  } catch (e) {
    throw new Error(`app (${storage}) did not start: ${(e as Error).message}\n${stderr()}`)
  }
  await sleep(1000)
  return {
    label: `app (${storage})`,
    baseUrl,
    pid: serverPid(child),
    child,
    idleRssMb: procMb(serverPid(child), "VmRSS")
  }
}

type BaselineMode = "raw" | "effect" | "effect-quiet"
const BASELINE_LABEL: Record<BaselineMode, string> = {
  raw: "raw node:http",
  effect: "bare HttpApi",
  "effect-quiet": "bare HttpApi, no logger"
}

const startBaseline = async (
  mode: BaselineMode,
  fixturesFile: string,
  nodeArgs: ReadonlyArray<string> = []
): Promise<Target> => {
  const port = await freePort()
  const { child, stderr } = spawnNode(
    [...nodeArgs, "--import", loopbackOnly, path.join(tmp, "baseline.mjs"), mode, String(port), fixturesFile],
    {},
    0
  )
  const baseUrl = `http://127.0.0.1:${port}`
  try {
    await waitFor(`${baseUrl}/__ping`, 15_000, () => child.exitCode === null)
  } catch (e) {
    throw new Error(`${mode} baseline did not start: ${(e as Error).message}\n${stderr()}`)
  }
  await sleep(300)
  return {
    label: BASELINE_LABEL[mode],
    baseUrl,
    pid: serverPid(child),
    child,
    idleRssMb: procMb(serverPid(child), "VmRSS")
  }
}

/** One autocannon run from its own process; samples the server's RSS meanwhile. */
const load = async (target: Target, steps: ReadonlyArray<LoadStep>, seconds: number) => {
  const spec: LoadSpec = { url: target.baseUrl, connections, durationSeconds: seconds, steps }
  let peakRssMb = procMb(target.pid, "VmRSS")
  const sampler = setInterval(() => {
    const now = procMb(target.pid, "VmRSS")
    if (now > peakRssMb) peakRssMb = now
  }, 100)
  const before = { server: cpuMsOf(target.pid), postgres: postgresCpuMs(), machine: machineBusyMs() }
  try {
    const { child, stderr } = spawnNode([path.join(tmp, "load.mjs"), JSON.stringify(spec)], {}, 1)
    let out = ""
    child.stdout!.removeAllListeners("data")
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
    })
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)))
    if (code !== 0) throw new Error(`load generator failed (${code}): ${stderr()}`)
    const result = JSON.parse(out.trim().split("\n").pop()!) as LoadResult
    // Where the CPU went, per request: the server, Postgres (on the same two cores), the load
    // generator, and everything else on the machine (other work: the run is not alone).
    const server = cpuMsOf(target.pid) - before.server
    const postgres = postgresCpuSince(before.postgres)
    const machine = machineBusyMs() - before.machine
    const per = (ms: number) => (result.total > 0 ? Math.round((ms * 1000) / result.total) : 0)
    const cpuUsPerRequest = {
      server: per(server),
      postgres: per(postgres),
      load: per(result.loadCpuMs),
      other: per(Math.max(0, machine - server - postgres - result.loadCpuMs))
    }
    return { ...result, peakRssMb, cpuUsPerRequest }
  } finally {
    clearInterval(sampler)
  }
}

/** CPU µs per request: server / Postgres / load generator / other processes. */
const cpuLine = (r: { readonly cpuUsPerRequest: { server: number; postgres: number; load: number; other: number } }) =>
  `CPU µs/req server ${r.cpuUsPerRequest.server}, pg ${r.cpuUsPerRequest.postgres}, load ${r.cpuUsPerRequest.load}, other ${r.cpuUsPerRequest.other}`

// ---------------------------------------------------------------------------------------------
// HTTP helpers against the app (setup only; the measured traffic comes from the load process)

const call = async (base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
  })
  const text = await res.text()
  return {
    status: res.status,
    contentType: res.headers.get("content-type") ?? "application/json",
    text,
    headers: res.headers
  }
}
const json = (text: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(text) as unknown
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

const OPEN_WALLET = {
  autonomyLevel: "full_auto",
  approvalThresholdCents: 1_000_000_000,
  perTransactionLimitCents: null,
  dailyLimitCents: null,
  monthlyLimitCents: null
}

/** An account, an agent (its wallet without limits) and a key with every permission; returns the Authorization header. */
const newAgentKey = async (base: string, extra: ReadonlyArray<string> = []) => {
  const email = `bench-${randomBytes(5).toString("hex")}@example.com`
  const signup = await call(base, "POST", "/api/dashboard/signup", {
    email,
    password: "correct horse battery",
    name: "Bench"
  })
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`)
  const cookie = (signup.headers.get("set-cookie") ?? "").split(";")[0]
  const agent = await call(
    base,
    "POST",
    "/api/dashboard/agents",
    // New agents start with conservative limits ($20 a purchase, $50 a day, approval above $5:
    // docs/dashboard.md); the bench measures purchases, so the owner opens the wallet at creation.
    { name: "bench-agent", organization: "Bench", wallet: OPEN_WALLET },
    { cookie }
  )
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${agent.text}`)
  const agentId = String(json(agent.text).id)
  const all = ["catalog:read", "evaluate", "acquire", "invest", "create", "commerce:*", ...extra]
  const key = await call(
    base,
    "POST",
    `/api/dashboard/agents/${agentId}/keys`,
    { name: "bench", permissions: all },
    { cookie }
  )
  if (key.status !== 201) throw new Error(`key: ${key.status} ${key.text}`)
  return { agentId, cookie, authorization: `Bearer ${String(json(key.text).secret)}` }
}

/** True when the app has no such route (the global 404 names resource "route"). */
const routeMissing = async (base: string, method: string, p: string, headers: Record<string, string>) => {
  const r = await call(base, method, p, method === "GET" ? undefined : "{}", headers)
  const body = json(r.text)
  return (
    r.status === 404 &&
    (body.resource === "route" ||
      /No procedure/.test(String((body.error as Record<string, unknown> | undefined)?.message ?? "")))
  )
}

// ---------------------------------------------------------------------------------------------
// Scenarios

type Kind = "public read" | "authenticated read" | "JSON POST"

interface Prepared {
  readonly steps: ReadonlyArray<LoadStep>
  /** Optional: report these as rounds (requests per round) rather than requests. */
  readonly requestsPerRound?: number
  readonly note?: string
}

interface Scenario {
  readonly name: string
  readonly kind: Kind
  /** Only for this storage (the 1M-row page is seeded with SQL). */
  readonly storage?: "postgres"
  /** Returns the steps, or a reason to skip. */
  readonly prepare: (ctx: AppContext) => Promise<Prepared | string>
}

interface AppContext {
  readonly base: string
  readonly storage: Storage
  readonly databaseUrl?: string
  readonly auth: Record<string, string>
  readonly agentId: string
  readonly commerce: CommerceSetup | undefined
  /** Set-up shared between scenarios of one app run (seeded agents). */
  readonly cache: Map<string, unknown>
}

const TRPC_PUBLIC = "marketplace.getTemplates,subscription.getPlans,publicApi.catalog,publicApi.knowledgeBase"
const COMMERCE = "/api/v1/agent/commerce"

interface CommerceSetup {
  readonly serviceId: string
  readonly tierId: string
  readonly priceCents: number
}

/** Buys a run could make at most (generous), to size the wallet top-ups. */
const plannedBuys = () => Math.ceil(durationSeconds + warmupSeconds) * 10_000

/** A seeded service tier of at least 10 USD (for negotiations, when GET /services is not there). */
const seedTier = (): CommerceSetup => {
  for (const s of commerceServices) {
    for (const t of s.tiers)
      if (t.priceCents >= 1000) return { serviceId: s.id, tierId: t.id, priceCents: t.priceCents }
  }
  throw new Error("no seeded service tier of at least 1000 cents")
}

/** Finds a cheap service tier to buy and tops the wallet up (fake payments). */
const setupCommerce = async (
  base: string,
  auth: Record<string, string>,
  buys: number
): Promise<CommerceSetup | string> => {
  if (await routeMissing(base, "GET", `${COMMERCE}/services`, auth)) return "GET /services does not exist yet"
  const list = await call(base, "GET", `${COMMERCE}/services`, undefined, auth)
  if (list.status !== 200) return `GET /services answered ${list.status}`
  const parsed = JSON.parse(list.text) as unknown
  const services = (
    Array.isArray(parsed)
      ? parsed
      : ((parsed as Record<string, unknown>).items ??
        (parsed as Record<string, unknown>).services ??
        (parsed as Record<string, unknown>).data)
  ) as ReadonlyArray<Record<string, unknown>> | undefined
  let best: CommerceSetup | undefined
  for (const s of services ?? []) {
    for (const t of (s.tiers as ReadonlyArray<Record<string, unknown>> | undefined) ?? []) {
      const price = Number(t.priceCents ?? t.price_cents ?? t.price)
      if (Number.isInteger(price) && price > 0 && (!best || price < best.priceCents)) {
        best = { serviceId: String(s.id), tierId: String(t.id), priceCents: price }
      }
    }
  }
  if (!best) return "no service tier with an integer priceCents in GET /services"
  if (await routeMissing(base, "POST", `${COMMERCE}/wallet/topup`, auth)) return "POST /wallet/topup does not exist yet"
  // Top-ups are at most 1,000,000 cents each (TOPUP_MAX_CENTS); enough of them for the planned buys.
  let owed = best.priceCents * buys
  for (let i = 0; i < 20 && owed > 0; i++) {
    const amountCents = Math.min(owed, 1_000_000)
    const topup = await call(base, "POST", `${COMMERCE}/wallet/topup`, { amountCents }, auth)
    if (topup.status >= 300) return `wallet top-up answered ${topup.status}: ${topup.text.slice(0, 200)}`
    owed -= amountCents
  }
  return best
}

const scenarios: ReadonlyArray<Scenario> = [
  {
    name: "GET /api/discover",
    kind: "public read",
    prepare: async (ctx) =>
      (await routeMissing(ctx.base, "GET", "/api/discover", {}))
        ? "GET /api/discover does not exist yet"
        : { steps: [{ method: "GET", path: "/api/discover" }] }
  },
  {
    name: "tRPC batch (4 public procedures)",
    kind: "public read",
    prepare: async () => ({ steps: [{ method: "GET", path: `/api/trpc/${TRPC_PUBLIC}?batch=1&input=%7B%7D` }] })
  },
  {
    name: "GET /me",
    kind: "authenticated read",
    prepare: async (ctx) => ({ steps: [{ method: "GET", path: "/api/v1/agent/me", headers: ctx.auth }] })
  },
  {
    name: "GET /services",
    kind: "authenticated read",
    prepare: async (ctx) =>
      (await routeMissing(ctx.base, "GET", `${COMMERCE}/services`, ctx.auth))
        ? "GET /services does not exist yet"
        : { steps: [{ method: "GET", path: `${COMMERCE}/services`, headers: ctx.auth }] }
  },
  {
    name: "POST /buy",
    kind: "JSON POST",
    prepare: async (ctx) => {
      if (typeof ctx.commerce === "undefined") return "commerce setup unavailable (see above)"
      const body = JSON.stringify({
        serviceId: ctx.commerce.serviceId,
        tierId: ctx.commerce.tierId,
        input: { prompt: "bench" }
      })
      return { steps: [{ method: "POST", path: `${COMMERCE}/buy`, headers: ctx.auth, body }] }
    }
  },
  {
    name: "POST /buy (10 buyers, one per connection)",
    kind: "JSON POST",
    prepare: async (ctx) => {
      if (typeof ctx.commerce === "undefined") return "commerce setup unavailable (see above)"
      const pool: Array<Record<string, string>> = []
      for (let i = 0; i < connections; i++) {
        const agent = await newAgentKey(ctx.base)
        const auth = { authorization: agent.authorization }
        const setup = await setupCommerce(ctx.base, auth, Math.ceil(plannedBuys() / connections) + 100)
        if (typeof setup === "string") return setup
        pool.push(auth)
      }
      const body = JSON.stringify({
        serviceId: ctx.commerce.serviceId,
        tierId: ctx.commerce.tierId,
        input: { prompt: "bench" }
      })
      return { steps: [{ method: "POST", path: `${COMMERCE}/buy`, headers: pool[0], headerPool: pool, body }] }
    }
  },
  {
    // The buyer proposes and reads the negotiation back; the automatic seller answers in the
    // background (NEGOTIATION_DELAY_MS=0), so its work is part of the measured CPU.
    name: "negotiation round (propose + read)",
    kind: "JSON POST",
    prepare: async (ctx) => {
      if (await routeMissing(ctx.base, "POST", `${COMMERCE}/negotiate`, ctx.auth))
        return "POST /negotiate does not exist yet"
      const tier = ctx.commerce ?? seedTier()
      const body = JSON.stringify({
        serviceId: tier.serviceId,
        tierId: tier.tierId,
        proposedPriceCents: Math.max(1, Math.floor(tier.priceCents * 0.8))
      })
      return {
        steps: [
          { method: "POST", path: `${COMMERCE}/negotiate`, headers: ctx.auth, body, capture: "id" },
          { method: "GET", path: `${COMMERCE}/negotiations/{id}`, headers: ctx.auth }
        ],
        requestsPerRound: 2
      }
    }
  },
  {
    name: "GET /transactions page (1k rows)",
    kind: "authenticated read",
    prepare: (ctx) => transactionsScenario(ctx, 1_000, "first")
  },
  {
    name: "GET /transactions page (1M rows)",
    kind: "authenticated read",
    storage: "postgres",
    prepare: (ctx) => transactionsScenario(ctx, 1_000_000, "first")
  },
  {
    name: "GET /transactions?role=buyer page (1M rows)",
    kind: "authenticated read",
    storage: "postgres",
    prepare: (ctx) => transactionsScenario(ctx, 1_000_000, "buyer")
  },
  {
    name: "GET /transactions?role=buyer deep page (1M rows, cursor at row 500k)",
    kind: "authenticated read",
    storage: "postgres",
    prepare: (ctx) => transactionsScenario(ctx, 1_000_000, "deep")
  }
]

interface TransactionsAgent {
  readonly agentId: string
  readonly auth: Record<string, string>
}

/**
 * An agent with `rows` transactions as buyer: up to 1k bought over HTTP, the rest copies of its own
 * rows inserted by one SQL statement (older timestamps, fresh ids). Cached per row count, so the
 * three 1M scenarios share one seeding.
 */
const transactionsAgent = async (ctx: AppContext, rows: number): Promise<TransactionsAgent | string> => {
  const cached = ctx.cache.get(`tx:${rows}`)
  if (cached) return cached as TransactionsAgent | string
  const made = await (async (): Promise<TransactionsAgent | string> => {
    if (await routeMissing(ctx.base, "GET", `${COMMERCE}/transactions`, ctx.auth))
      return "GET /transactions does not exist yet"
    const agent = await newAgentKey(ctx.base)
    const auth = { authorization: agent.authorization }
    const seedOverHttp = Math.min(rows, 1000)
    const setup = await setupCommerce(ctx.base, auth, seedOverHttp + 10)
    if (typeof setup === "string") return setup
    const buyBody = { serviceId: setup.serviceId, tierId: setup.tierId, input: { prompt: "seed" } }
    for (let i = 0; i < seedOverHttp; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, seedOverHttp - i) }, () =>
          call(ctx.base, "POST", `${COMMERCE}/buy`, buyBody, auth)
        )
      )
      const bad = batch.find((r) => r.status >= 300)
      if (bad) return `seeding buy answered ${bad.status}: ${bad.text.slice(0, 200)}`
    }
    if (rows > seedOverHttp) {
      if (!ctx.databaseUrl) return "needs Postgres (rows seeded with SQL)"
      const started = Date.now()
      const seeded = await seedTransactionsSql(ctx.databaseUrl, agent.agentId, rows - seedOverHttp)
      if (typeof seeded === "string") return seeded
      log(`   seeded ${rows - seedOverHttp} transactions with SQL in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    }
    return { agentId: agent.agentId, auth }
  })()
  ctx.cache.set(`tx:${rows}`, made)
  return made
}

/** A page of an agent's transactions: the first page (any role, as agents call it), the first buyer page, or a buyer page deep in the history. */
const transactionsScenario = async (
  ctx: AppContext,
  rows: number,
  page: "first" | "buyer" | "deep"
): Promise<Prepared | string> => {
  const agent = await transactionsAgent(ctx, rows)
  if (typeof agent === "string") return agent
  if (page === "first")
    return { steps: [{ method: "GET", path: `${COMMERCE}/transactions?limit=20`, headers: agent.auth }] }
  if (page === "buyer")
    return { steps: [{ method: "GET", path: `${COMMERCE}/transactions?role=buyer&limit=20`, headers: agent.auth }] }
  if (!ctx.databaseUrl) return "needs Postgres"
  const client = new pg.Client({ connectionString: ctx.databaseUrl })
  await client.connect()
  try {
    const r = await client.query<{ created_at: Date; id: string }>(
      "SELECT created_at, id FROM commerce_transactions WHERE buyer_agent_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1",
      [agent.agentId, Math.floor(rows / 2)]
    )
    if (!r.rows[0]) return "no row at the middle of the history"
    // The service's cursor: base64url of {"c": createdAt, "i": id} (src/services/commerce/Commerce.ts).
    const cursor = Buffer.from(JSON.stringify({ c: r.rows[0].created_at.toISOString(), i: r.rows[0].id })).toString(
      "base64url"
    )
    return {
      steps: [
        { method: "GET", path: `${COMMERCE}/transactions?role=buyer&limit=20&cursor=${cursor}`, headers: agent.auth }
      ]
    }
  } finally {
    await client.end()
  }
}

/** Copies the agent's transaction rows `extra` more times with fresh ids and older times (one INSERT … SELECT). */
const seedTransactionsSql = async (databaseUrl: string, agentId: string, extra: number): Promise<true | string> => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const table = (
      await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN ('commerce_transactions', 'transactions') ORDER BY table_name"
      )
    ).rows[0]?.table_name
    if (!table) return "no transactions table to seed"
    const cols = await client.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
      [table]
    )
    const names = cols.rows.map((c) => c.column_name)
    const agentColumn = ["buyer_agent_id", "agent_id"].find((c) => names.includes(c))
    if (!agentColumn) return `${table} has no buyer agent column (${names.join(", ")})`
    const select = names.map((c) => {
      if (c === "id") return `t.id || '_' || g`
      if (c === "created_at") return `t.created_at - make_interval(secs => g)`
      if (c === "idempotency_key") return "NULL"
      return `t.${c}`
    })
    await client.query("SET synchronous_commit = off")
    await client.query("SET statement_timeout = '300s'")
    await client.query(
      `INSERT INTO ${table} (${names.join(", ")})
       SELECT ${select.join(", ")}
       FROM (SELECT * FROM ${table} WHERE ${agentColumn} = $1 ORDER BY created_at LIMIT 1) t, generate_series(1, $2::int) g`,
      [agentId, extra]
    )
    await client.query(`ANALYZE ${table}`)
    return true
  } catch (e) {
    return `SQL seeding failed: ${(e as Error).message}`
  } finally {
    await client.end()
  }
}

// ---------------------------------------------------------------------------------------------
// Postgres database for the run

const withDatabase = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}
const admin = async (text: string) => {
  const client = new pg.Client({ connectionString: databaseAdminUrl })
  await client.connect()
  try {
    return await client.query(text)
  } finally {
    await client.end()
  }
}

// ---------------------------------------------------------------------------------------------
// The run

interface Row {
  readonly target: string
  readonly scenario: string
  readonly kind: Kind
  readonly result?: LoadResult & {
    readonly peakRssMb: number
    readonly cpuUsPerRequest: { server: number; postgres: number; load: number; other: number }
  }
  readonly requestsPerRound?: number
  readonly skipped?: string
  readonly fixture?: Fixture
}

const rows: Array<Row> = []

// ---------------------------------------------------------------------------------------------
// Webhook deliveries (not autocannon: the app's worker sends, receivers in this process count)

interface WebhookRow {
  readonly target: string
  readonly endpoints: number
  readonly events: number
  readonly healthyPerSecond: number
  readonly withDeadPerSecond: number
  readonly deadPending: number
}
const webhookRows: Array<WebhookRow> = []
const wantWebhooks = !only || only.some((o) => "webhook deliveries".includes(o.toLowerCase()))
const WEBHOOK_ENDPOINTS = 100
const orderRows: Array<OrdersRow> = []
const wantOrders = !only || only.some((o) => "push orders".includes(o.toLowerCase()))
const growthRuns: Array<GrowthRun> = []
const wantGrowth = !only || only.some((o) => "catalogue growth".includes(o.toLowerCase()))
const WEBHOOK_EVENTS_PER_ENDPOINT = 10
const DEAD_BACKLOG = 400

const listenHttp = async (
  handler: (req: IncomingMessage, res: ServerResponse) => void
): Promise<{ server: HttpServer; port: number }> => {
  const server = createHttpServer(handler)
  const port = await new Promise<number>((r) =>
    server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port))
  )
  return { server, port }
}

/** Runs `f` over `items`, `n` at a time. */
const inParallel = async <A>(items: ReadonlyArray<A>, n: number, f: (a: A) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await f(items[next++])
    })
  )
}

/**
 * Deliveries per second from the first queued event to the last delivery: events are queued with
 * POST /webhook/test (10 per endpoint, 20 requests at a time) while the worker already sends.
 * Then the same again beside one more endpoint that accepts connections and never answers, its
 * 400 events queued first. Each event is counted once (by webhook-id).
 */
const webhookDeliveries = async (app: Target) => {
  const seen = new Map<string, number>()
  const rx = await listenHttp((req, res) => {
    req.resume()
    req.on("end", () => {
      seen.set(String(req.headers["webhook-id"]), performance.now())
      res.writeHead(204).end()
    })
  })
  const dead = await listenHttp(() => {})
  try {
    const put = async (authorization: string, url: string) => {
      const r = await call(app.baseUrl, "PUT", "/api/v1/agent/webhook", { url }, { authorization })
      if (r.status !== 200) throw new Error(`PUT /webhook: ${r.status} ${r.text}`)
    }
    const ping = async (authorization: string) => {
      const r = await call(app.baseUrl, "POST", "/api/v1/agent/webhook/test", {}, { authorization })
      if (r.status !== 202) throw new Error(`POST /webhook/test: ${r.status} ${r.text}`)
      return String(json(r.text).eventId)
    }
    const agents: Array<string> = []
    await inParallel(
      Array.from({ length: WEBHOOK_ENDPOINTS }, (_, i) => i),
      10,
      async (i) => {
        const k = await newAgentKey(app.baseUrl, ["webhooks:manage"])
        await put(k.authorization, `http://127.0.0.1:${rx.port}/endpoint/${i}`)
        agents.push(k.authorization)
      }
    )
    const round = async () => {
      const jobs = agents.flatMap((a) => Array.from({ length: WEBHOOK_EVENTS_PER_ENDPOINT }, () => a))
      const ids: Array<string> = []
      const started = performance.now()
      await inParallel(jobs, 20, async (a) => void ids.push(await ping(a)))
      const until = Date.now() + 180_000
      while (ids.some((id) => !seen.has(id))) {
        if (Date.now() > until)
          throw new Error(
            `webhook round: ${ids.filter((id) => seen.has(id)).length} of ${ids.length} delivered in 180 s`
          )
        await sleep(20)
      }
      const last = Math.max(...ids.map((id) => seen.get(id)!))
      return ids.length / ((last - started) / 1000)
    }
    await round() // warm-up: the first round also pays for JIT and connection set-up
    const healthy = await round()
    const d = await newAgentKey(app.baseUrl, ["webhooks:manage"])
    await put(d.authorization, `http://127.0.0.1:${dead.port}/never-answers`)
    await inParallel(Array.from({ length: DEAD_BACKLOG }), 20, async () => void (await ping(d.authorization)))
    await sleep(500)
    const withDead = await round()
    const shown = json(
      (await call(app.baseUrl, "GET", "/api/v1/agent/webhook", undefined, { authorization: d.authorization })).text
    )
    const row: WebhookRow = {
      target: app.label,
      endpoints: WEBHOOK_ENDPOINTS,
      events: WEBHOOK_ENDPOINTS * WEBHOOK_EVENTS_PER_ENDPOINT,
      healthyPerSecond: healthy,
      withDeadPerSecond: withDead,
      deadPending: Number(shown.pendingCount)
    }
    webhookRows.push(row)
    log(
      `   ${"webhook deliveries, 100 endpoints".padEnd(40)} ${fmt(healthy).padStart(8)} /s  beside a dead endpoint ${fmt(withDead)} /s (${(withDead / healthy).toFixed(2)}×; its pending: ${row.deadPending})`
    )
  } finally {
    for (const s of [rx.server, dead.server]) {
      s.closeAllConnections()
      s.close()
    }
  }
}
const log = (line: string) => process.stdout.write(`${line}\n`)

/**
 * The rows whose receivers are in this process (webhook deliveries, push orders) run on a second
 * instance of the app with production off: production sends only to https and public addresses,
 * and these receivers are http on 127.0.0.1. The code that delivers is the same.
 */
const deliveryRows = async (storage: Storage, databaseUrl?: string) => {
  const app = await startApp(storage, databaseUrl, [], appEntry, {
    NODE_ENV: "development",
    FAKE_PAYMENTS_IN_PRODUCTION: "false"
  })
  log(`   (webhook and push-order rows: a second app, production off, loopback receivers)`)
  try {
    if (wantWebhooks)
      await webhookDeliveries(app).catch((e: Error) => log(`   webhook deliveries failed: ${e.message}`))
    if (wantOrders) {
      await pushOrders({ call, listenHttp, sleep, log }, app, seedTier())
        .then((row) => void orderRows.push(row))
        .catch((e: Error) => log(`   push orders failed: ${e.message}`))
    }
  } finally {
    await stop(app.child)
  }
}

/**
 * The catalogue-growth rows (bench/catalogueGrowth.ts) on two fresh apps of their own (one stays at
 * 1,000 services, the other grows to 20,000), so the other scenarios read the seeded catalogue.
 * On Postgres each app gets a database of its own.
 */
const growthRows = async (storage: Storage) => {
  const names: Array<string> = []
  const apps: Array<Target> = []
  try {
    for (let i = 0; i < 2; i++) {
      let url: string | undefined
      if (storage === "postgres") {
        const name = `bench_${randomBytes(5).toString("hex")}`
        await admin(`CREATE DATABASE ${name}`)
        names.push(name)
        url = withDatabase(databaseAdminUrl!, name)
      }
      apps.push(await startApp(storage, url))
    }
    log(
      `   (catalogue growth: two fresh apps, idle RSS ${apps.map((a) => a.idleRssMb).join(" and ")} MB, load average ${loadNow()})`
    )
    const server = (app: Target) => ({
      baseUrl: app.baseUrl,
      load: (steps: ReadonlyArray<LoadStep>, seconds: number) => load(app, steps, seconds),
      rssMb: () => procMb(app.pid, "VmRSS")
    })
    const run = await catalogueGrowth(
      {
        newAgentKey: async (base) => {
          const k = await newAgentKey(base)
          return { agentId: k.agentId, authorization: k.authorization }
        },
        call: async (base, method, p, body, headers) => {
          const r = await call(base, method, p, body, headers)
          return { status: r.status, text: r.text }
        },
        log
      },
      `app (${storage})`,
      [server(apps[0]!), server(apps[1]!)],
      Math.min(durationSeconds, 4),
      quick ? 1 : 3
    )
    growthRuns.push(run)
  } catch (e) {
    log(`   catalogue growth failed: ${(e as Error).message}`)
  } finally {
    for (const app of apps) await stop(app.child)
    for (const name of names) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
  }
}

const loadNow = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")

const runApp = async (storage: Storage, databaseUrl?: string) => {
  const app = await startApp(storage, databaseUrl)
  log(`\n== ${app.label}: idle RSS ${app.idleRssMb} MB`)
  const agent = await newAgentKey(app.baseUrl)
  const auth = { authorization: agent.authorization }
  const commerceSetup = await setupCommerce(app.baseUrl, auth, plannedBuys())
  if (typeof commerceSetup === "string") log(`   commerce scenarios: ${commerceSetup}`)
  const ctx: AppContext = {
    base: app.baseUrl,
    storage,
    databaseUrl,
    auth,
    agentId: agent.agentId,
    commerce: typeof commerceSetup === "string" ? undefined : commerceSetup,
    cache: new Map()
  }
  const fixtures: Array<Fixture> = []
  const prepared = new Map<string, Prepared>()
  for (const s of scenarios) {
    if (only && !only.some((o) => s.name.toLowerCase().includes(o.toLowerCase()))) continue
    if (s.storage && s.storage !== storage) {
      rows.push({
        target: app.label,
        scenario: s.name,
        kind: s.kind,
        skipped: `${s.storage} only (rows seeded with SQL)`
      })
      continue
    }
    const p = await s.prepare(ctx).catch((e: Error) => `setup failed: ${e.message}`)
    if (typeof p === "string") {
      log(`   skip ${s.name}: ${p}`)
      rows.push({ target: app.label, scenario: s.name, kind: s.kind, skipped: p })
      continue
    }
    prepared.set(s.name, p)
    const recorded = await recordSteps(app.baseUrl, s.name, p.steps)
    fixtures.push(...recorded.fixtures)
    prepared.set(`${s.name}#baseline`, { steps: recorded.steps })
    await load(app, p.steps, warmupSeconds)
    const result = await load(app, p.steps, durationSeconds)
    rows.push({ target: app.label, scenario: s.name, kind: s.kind, result, requestsPerRound: p.requestsPerRound })
    log(
      `   ${s.name.padEnd(40)} ${fmt(result.requestsPerSecond).padStart(8)} req/s  p50 ${result.latencyP50Ms} ms  p99 ${result.latencyP99Ms} ms  RSS ${result.peakRssMb} MB  ${cpuLine(result)}${result.non2xx ? `  (${result.non2xx} non-2xx: ${JSON.stringify(result.statusCodes)})` : ""}`
    )
  }
  const peak = procMb(app.pid, "VmHWM")
  await stop(app.child)
  if (wantWebhooks || wantOrders) await deliveryRows(storage, databaseUrl)
  if (wantGrowth) await growthRows(storage)
  return { label: app.label, idleRssMb: app.idleRssMb, peakRssMb: peak, fixtures, prepared }
}

/**
 * The app's answer to each step of a scenario, recorded once: the baselines serve these exact
 * bytes, driven by the same steps without credentials.
 */
const recordSteps = async (base: string, name: string, steps: ReadonlyArray<LoadStep>) => {
  let id: unknown
  const fixtures: Array<Fixture> = []
  const concrete: Array<LoadStep> = []
  for (const step of steps) {
    const pathNow = step.path.replace("{id}", String(id))
    const r = await call(base, step.method, pathNow, step.body, step.headers ?? {})
    if (step.capture) id = json(r.text)[step.capture]
    fixtures.push({
      name,
      method: step.method,
      path: pathNow.split("?")[0],
      status: r.status,
      contentType: r.contentType,
      body: r.text
    })
    concrete.push({ method: step.method, path: pathNow, ...(step.body !== undefined ? { body: step.body } : {}) })
    if (r.status >= 400) log(`   warning: ${name} answered ${r.status} before the run: ${r.text.slice(0, 200)}`)
  }
  return { fixtures, steps: concrete }
}

const runBaselines = async (fixtures: ReadonlyArray<Fixture>, prepared: ReadonlyMap<string, Prepared>) => {
  // One fixture per (method, path): the first recording wins.
  const unique = [...new Map(fixtures.map((f) => [`${f.method} ${f.path}`, f])).values()]
  const file = path.join(tmp, "fixtures.json")
  writeFileSync(file, JSON.stringify(unique))
  const out: Array<{ label: string; idleRssMb: number; peakRssMb: number }> = []
  for (const mode of ["raw", "effect", "effect-quiet"] as const) {
    const target = await startBaseline(mode, file)
    log(`\n== ${target.label}: idle RSS ${target.idleRssMb} MB`)
    for (const s of scenarios) {
      const p = prepared.get(`${s.name}#baseline`)
      if (!p) continue
      await load(target, p.steps, warmupSeconds)
      const result = await load(target, p.steps, durationSeconds)
      rows.push({
        target: target.label,
        scenario: s.name,
        kind: s.kind,
        result,
        requestsPerRound: prepared.get(s.name)?.requestsPerRound
      })
      log(
        `   ${s.name.padEnd(40)} ${fmt(result.requestsPerSecond).padStart(8)} req/s  p50 ${result.latencyP50Ms} ms  p99 ${result.latencyP99Ms} ms  RSS ${result.peakRssMb} MB  ${cpuLine(result)}${result.non2xx ? `  (${result.non2xx} non-2xx)` : ""}`
      )
    }
    out.push({ label: target.label, idleRssMb: target.idleRssMb, peakRssMb: procMb(target.pid, "VmHWM") })
    await stop(target.child)
  }
  return out
}

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–")
const ratio = (a: number | undefined, b: number | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : "–")

const versions = () => {
  const v = (name: string) => {
    try {
      return (
        JSON.parse(readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }
      ).version
    } catch {
      return "?"
    }
  }
  return ["effect", "@effect/platform-node", "@effect/sql-pg", "autocannon", "esbuild"]
    .map((n) => `${n} ${v(n)}`)
    .join(", ")
}

/** Target check for one app row: which bar applies, and whether it is met. */
const targetFor = (
  row: Row,
  raw: Row | undefined,
  bare: Row | undefined,
  storage: string
): { bar: string; met: boolean | undefined } => {
  const rps = row.result?.requestsPerSecond
  if (!rps) return { bar: "–", met: undefined }
  if (row.scenario.startsWith("POST /buy")) {
    const need = storage === "memory" ? 1500 : 400
    const p99 = row.result!.latencyP99Ms
    const vsBare = bare?.result ? rps / bare.result.requestsPerSecond : undefined
    return {
      bar: `≥ ${need}/s, p99 < 50 ms, ≥ 1.1× bare`,
      met: rps >= need && p99 < 50 && (vsBare === undefined || vsBare >= 1.1)
    }
  }
  if (row.scenario.includes("(1M rows")) {
    // Keyset pagination: a page at 1M rows costs what it costs at 1k (within 20 %).
    const small = rows.find(
      (r) => r.target === row.target && r.scenario === "GET /transactions page (1k rows)" && r.result
    )
    const ratio1k = small?.result ? rps / small.result.requestsPerSecond : undefined
    return {
      bar: `flat: ≥ 0.8× the 1k page (${ratio1k === undefined ? "–" : `${ratio1k.toFixed(2)}×`})`,
      met: ratio1k === undefined ? undefined : ratio1k >= 0.8
    }
  }
  if (row.kind === "public read") {
    const r = raw?.result ? rps / raw.result.requestsPerSecond : undefined
    return { bar: "≥ 0.35× raw", met: r === undefined ? undefined : r >= 0.35 }
  }
  const factor = row.kind === "authenticated read" ? 1.2 : 1.1
  const r = bare?.result ? rps / bare.result.requestsPerSecond : undefined
  return { bar: `≥ ${factor}× bare HttpApi`, met: r === undefined ? undefined : r >= factor }
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly hitCount?: number
}

/** Self time of a .cpuprofile by function and by package, in percent of all samples. */
export const summariseProfile = (file: string, top = 25) => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: ReadonlyArray<ProfileNode>
    samples: ReadonlyArray<number>
  }
  const total = profile.samples.length || 1
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  const packageOf = (url: string, name: string) => {
    if (name.startsWith("(")) return name
    if (url === "") return "(native / V8 builtins)"
    if (url.startsWith("node:")) return "node internals"
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
    if (m) return m[1]
    if (url.includes("/dist/")) return "app (dist/)"
    return url.replace(/^file:\/\//, "")
  }
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0
    if (hits === 0) continue
    const { functionName, url, lineNumber } = node.callFrame
    const pkg = packageOf(url, functionName)
    const file =
      /node_modules\/(.*)$/.exec(url)?.[1]?.replace(/\/dist\/(esm|cjs)\//, "/") ??
      (url.startsWith("file://") ? path.relative(root, fileURLToPath(url)) : url)
    const key = `${functionName || "(anonymous)"}  ${functionName.startsWith("(") ? "" : `${file || pkg}:${lineNumber + 1}`}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits)
  }
  const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)} %`
  const lines = [`${total} samples`, "", "self time by package:"]
  for (const [k, v] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`  ${pct(v)}  ${k}`)
  lines.push("", `top ${top} functions by self time:`)
  for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(v)}  ${k}`)
  return lines.join("\n")
}

const profileRun = async (wanted: string) => {
  const asked = option("--storage")
  const storage: Storage = asked === "postgres" || asked === "embedded" ? asked : "memory"
  const scenario = scenarios.find((s) => s.name.toLowerCase().includes(wanted.toLowerCase()))
  if (!scenario) throw new Error(`no scenario matches "${wanted}": ${scenarios.map((s) => s.name).join("; ")}`)
  const dir = path.join(tmp, `prof-${Date.now()}`)
  mkdirSync(dir, { recursive: true })
  let dbName: string | undefined
  let databaseUrl: string | undefined
  if (storage === "postgres") {
    if (postgresSkip) throw new Error(`--storage postgres: ${postgresSkip}`)
    dbName = `bench_${randomBytes(5).toString("hex")}`
    await admin(`CREATE DATABASE ${dbName}`)
    databaseUrl = withDatabase(databaseAdminUrl!, dbName)
  }
  try {
    log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" / ")} at the start`
    )
    const app = await startApp(storage, databaseUrl, ["--cpu-prof", "--cpu-prof-dir", dir])
    const agent = await newAgentKey(app.baseUrl)
    const auth = { authorization: agent.authorization }
    const commerce = await setupCommerce(app.baseUrl, auth, 200_000)
    const ctx: AppContext = {
      base: app.baseUrl,
      storage,
      databaseUrl,
      auth,
      agentId: agent.agentId,
      commerce: typeof commerce === "string" ? undefined : commerce,
      cache: new Map()
    }
    const p = await scenario.prepare(ctx)
    if (typeof p === "string") throw new Error(`${scenario.name}: ${p}`)
    const recorded = await recordSteps(app.baseUrl, scenario.name, p.steps)
    await load(app, p.steps, warmupSeconds)
    const result = await load(app, p.steps, durationSeconds)
    log(
      `${scenario.name} (${storage}): ${fmt(result.requestsPerSecond)} req/s, p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms, RSS ${result.peakRssMb} MB, ${cpuLine(result)} (under --cpu-prof)`
    )
    await stop(app.child)
    const profileIn = (folder: string) => {
      const file = readdirSync(folder)
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => path.join(folder, f))[0]
      if (!file) throw new Error("the server wrote no .cpuprofile (did it exit cleanly?)")
      log(`profile: ${path.relative(root, file)} (open it in Chrome DevTools → Performance)\n`)
      log(summariseProfile(file))
    }
    profileIn(dir)
    // The bare HttpApi serving the same bytes, with and without its request logger, profiled the
    // same way in the same run: the framework's own floor for this request.
    const fixturesFile = path.join(dir, "fixtures.json")
    writeFileSync(fixturesFile, JSON.stringify(recorded.fixtures))
    for (const mode of ["effect", "effect-quiet"] as const) {
      const folder = path.join(dir, mode)
      mkdirSync(folder, { recursive: true })
      const bare = await startBaseline(mode, fixturesFile, ["--cpu-prof", "--cpu-prof-dir", folder])
      await load(bare, recorded.steps, warmupSeconds)
      const r = await load(bare, recorded.steps, durationSeconds)
      log(
        `\n${bare.label}, ${scenario.name}: ${fmt(r.requestsPerSecond)} req/s, p50 ${r.latencyP50Ms} ms, p99 ${r.latencyP99Ms} ms, ${cpuLine(r)} (under --cpu-prof)`
      )
      await stop(bare.child)
      profileIn(folder)
    }
    log(
      `\nload average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" / ")} at the end`
    )
  } finally {
    if (dbName) await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined)
  }
}

/** What bench/soak.ts and bench/historyHttp.ts use of this file: the server start, agents, pinning, the database. */
const kit = (): BenchKit => {
  const wanted = option("--storage")?.split(",")
  const storages: Array<{ storage: Storage; skipped?: string }> = (["memory", "embedded", "postgres"] as const).map(
    (storage) => ({
      storage,
      skipped:
        wanted && !wanted.includes(storage)
          ? "not in --storage"
          : storage === "embedded" && flag("--skip-embedded")
            ? "--skip-embedded given"
            : storage === "postgres"
              ? postgresSkip
              : undefined
    })
  )
  return {
    root,
    tmp,
    pin,
    connections,
    quick,
    durationSeconds: option("--duration") === undefined ? undefined : durationSeconds,
    option,
    write: !flag("--no-write"),
    storages,
    startApp: (storage, databaseUrl, entry) =>
      startApp(storage, databaseUrl, [], entry === undefined ? appEntry : entry),
    stop,
    newAgentKey: async (base) => {
      const k = await newAgentKey(base)
      return { agentId: k.agentId, authorization: k.authorization }
    },
    topUp: async (base, authorization, buys) => setupCommerce(base, { authorization }, buys),
    call: async (base, method, p, body, headers) => {
      const r = await call(base, method, p, body, headers)
      return { status: r.status, text: r.text }
    },
    procMb,
    spawnLoad: (spec) => spawnNode([path.join(tmp, "load.mjs"), JSON.stringify(spec)], {}, 1).child,
    database: async () => {
      const name = `bench_${randomBytes(5).toString("hex")}`
      await admin(`CREATE DATABASE ${name}`)
      const version = String((await admin("SHOW server_version")).rows[0].server_version)
      return {
        url: withDatabase(databaseAdminUrl!, name),
        version,
        drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)
      }
    },
    startFlags,
    log
  }
}

const runSoakOrHistory = async () => {
  if (flag("--history")) {
    await build({
      ...(await import("../scripts/serverBuild.mjs")).serverBuildOptions,
      entryPoints: [path.join(root, "bench", "historyServer.ts")],
      outfile: path.join(tmp, "historyServer.mjs")
    } as Parameters<typeof build>[0])
    return (await import("./historyHttp.js")).runHistory(kit())
  }
  return (await import("./soak.js")).runSoak(kit())
}

const loadAtStart = os
  .loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ")

const main = async () => {
  const started = Date.now()
  if (option("--soak") === undefined && !flag("--history"))
    log(
      `bench: ${durationSeconds} s per run (+${warmupSeconds} s warm-up), ${connections} connections, ${pin ? "server on CPU 0, load on CPU 1" : "no CPU pinning"}`
    )
  const b = spawnSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" })
  if (b.status !== 0) throw new Error("npm run build failed")
  mkdirSync(tmp, { recursive: true })
  for (const name of ["baseline", "load"]) {
    await build({
      entryPoints: [path.join(root, "bench", `${name}.ts`)],
      outfile: path.join(tmp, `${name}.mjs`),
      bundle: true,
      platform: "node",
      target: "node20",
      format: "esm",
      packages: "external",
      logLevel: "warning"
    })
  }

  const profile = option("--profile")
  if (profile) return profileRun(profile)
  if (option("--soak") !== undefined || flag("--history")) return runSoakOrHistory()

  const memory = await runApp("memory")
  const memFixtures = memory.fixtures
  const memPrepared = memory.prepared

  const processes: Array<{ label: string; idleRssMb: number; peakRssMb: number }> = [memory]
  if (flag("--skip-embedded")) log("\n== app (embedded): skipped — --skip-embedded given")
  else processes.push(await runApp("embedded"))
  let postgresVersion = "not run"
  if (postgresSkip) {
    log(`\n== app (postgres): skipped — ${postgresSkip}`)
  } else {
    const name = `bench_${randomBytes(5).toString("hex")}`
    await admin(`CREATE DATABASE ${name}`)
    try {
      postgresVersion = String((await admin("SHOW server_version")).rows[0].server_version)
      const pgRun = await runApp("postgres", withDatabase(databaseAdminUrl!, name))
      processes.push(pgRun)
    } finally {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
    }
  }

  processes.push(...(await runBaselines(memFixtures, memPrepared)))

  // Report
  const cpu = os.cpus()[0]?.model ?? "?"
  const lines: Array<string> = []
  lines.push("# Benchmark results", "")
  lines.push(
    `Generated by \`npm run bench${argv.length ? ` ${argv.join(" ")}` : ""}\` on ${new Date().toISOString()} (${Math.round((Date.now() - started) / 1000)} s).`,
    ""
  )
  lines.push("| | |", "|---|---|")
  lines.push(
    `| machine | ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ${os.type()} ${os.release()} |`
  )
  lines.push(
    `| load average | ${loadAtStart} at the start, ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(
        " / "
      )} at the end (1 / 5 / 15 min; the run keeps two cores busy itself, so the start value says whether the machine was shared: above ~0.5 the figures are low) |`
  )
  lines.push(`| node | ${process.version} |`)
  lines.push(`| packages | ${versions()} |`)
  lines.push(`| PostgreSQL | ${postgresVersion}${postgresSkip ? ` (skipped: ${postgresSkip})` : ""} |`)
  lines.push(
    `| load | autocannon in its own process, ${connections} connections, ${durationSeconds} s per run after a ${warmupSeconds} s warm-up; ${pin ? "server pinned to CPU 0, load generator to CPU 1 (taskset)" : "no CPU pinning"} |`
  )
  lines.push(
    `| server | \`${["node", ...startFlags, ...appNodeArgs, "dist/main.js"].join(" ")}\` (as \`npm start\` runs it, compiled by esbuild: scripts/serverBuild.mjs), rate limits raised for the run, fake payments, LOG_LEVEL=WARN |`
  )
  lines.push(
    `| baselines | raw node:http, a bare Effect HttpApi with HttpRouter.serve's defaults (its request logger prints a line per request to the bench's pipe; the bars are against this one) and the same without its logger (as the app serves: its own access log writes nothing at WARN), serving the bytes the app returned for the same request |`
  )
  lines.push("")
  lines.push(
    "| target | scenario | req/s | p50 ms | p99 ms | peak RSS MB | CPU µs/req: server / pg / load / other | vs raw | vs bare HttpApi | vs bare, no logger | bar | met |"
  )
  lines.push("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
  const find = (target: string, scenario: string) =>
    rows.find((r) => r.target === target && r.scenario === scenario && r.result)
  for (const row of rows) {
    if (row.skipped) {
      lines.push(`| ${row.target} | ${row.scenario} | – | – | – | – | – | – | – | – | skipped: ${row.skipped} | |`)
      continue
    }
    const r = row.result!
    const isApp = row.target.startsWith("app")
    const raw = find("raw node:http", row.scenario)
    const bare = find("bare HttpApi", row.scenario)
    const quiet = find("bare HttpApi, no logger", row.scenario)
    const isBare = row.target.startsWith("bare HttpApi")
    const t = isApp
      ? targetFor(
          row,
          raw,
          bare,
          row.target.includes("postgres") ? "postgres" : row.target.includes("embedded") ? "embedded" : "memory"
        )
      : { bar: "", met: undefined }
    const rps = row.requestsPerRound
      ? `${fmt(r.requestsPerSecond)} (${fmt(r.requestsPerSecond / row.requestsPerRound)} rounds/s)`
      : fmt(r.requestsPerSecond)
    const non2xx = r.non2xx ? ` ⚠ ${r.non2xx} non-2xx ${JSON.stringify(r.statusCodes)}` : ""
    lines.push(
      `| ${row.target} | ${row.scenario}${non2xx} | ${rps} | ${r.latencyP50Ms} | ${r.latencyP99Ms} | ${r.peakRssMb} | ${r.cpuUsPerRequest.server} / ${r.cpuUsPerRequest.postgres} / ${r.cpuUsPerRequest.load} / ${r.cpuUsPerRequest.other} | ${isApp || isBare ? ratio(r.requestsPerSecond, raw?.result?.requestsPerSecond) : ""} | ${isApp ? ratio(r.requestsPerSecond, bare?.result?.requestsPerSecond) : ""} | ${isApp ? ratio(r.requestsPerSecond, quiet?.result?.requestsPerSecond) : ""} | ${t.bar} | ${t.met === undefined ? "" : t.met ? "yes" : "**no**"} |`
    )
  }
  lines.push("")
  // Each stored app against the memory store of the same run, scenario by scenario.
  const stored = ["app (embedded)", "app (postgres)"].filter((t) => rows.some((r) => r.target === t && r.result))
  if (stored.length > 0) {
    lines.push(
      `| scenario | ${stored.map((t) => `${t.slice(5, -1)} ÷ memory`).join(" | ")} |`,
      `|---|${stored.map(() => "---:").join("|")}|`
    )
    for (const row of rows.filter((r) => r.target === "app (memory)" && r.result)) {
      const cells = stored.map((t) =>
        ratio(find(t, row.scenario)?.result?.requestsPerSecond ?? 0, row.result!.requestsPerSecond)
      )
      lines.push(`| ${row.scenario} | ${cells.join(" | ")} |`)
    }
    lines.push("")
  }
  if (webhookRows.length > 0) {
    lines.push(
      `Webhook deliveries: ${WEBHOOK_ENDPOINTS} healthy endpoints (receivers in the bench process, answering 204 at once), ${WEBHOOK_EVENTS_PER_ENDPOINT} events each queued with POST /webhook/test, deliveries/s from the first queued event to the last delivery (after one unmeasured warm-up round); then again beside one endpoint that accepts connections and never answers, its ${DEAD_BACKLOG} events queued first (docs/webhooks.md).`,
      ""
    )
    lines.push(
      "| target | deliveries/s, 100 healthy | beside one dead endpoint | ratio | dead endpoint's pending after |",
      "|---|---:|---:|---:|---:|"
    )
    for (const w of webhookRows) {
      lines.push(
        `| ${w.target} | ${fmt(w.healthyPerSecond)} | ${fmt(w.withDeadPerSecond)} | ${(w.withDeadPerSecond / w.healthyPerSecond).toFixed(2)}× | ${w.deadPending} |`
      )
    }
    lines.push("")
  }
  lines.push(...ordersSection(orderRows))
  lines.push(...growthSection(growthRuns))
  lines.push(
    "| process | idle RSS MB | peak RSS MB during the buy rows | peak RSS MB (VmHWM, start-up included) | bar |",
    "|---|---:|---:|---:|---|"
  )
  for (const p of processes) {
    const buys = rows.filter((r) => r.target === p.label && r.scenario.startsWith("POST /buy") && r.result)
    const underBuys = buys.length === 0 ? undefined : Math.max(...buys.map((r) => r.result!.peakRssMb))
    const yes = (ok: boolean) => (ok ? "yes" : "**no**")
    // The embedded store's own bars (issue 51): it holds a whole PostgreSQL.
    const bar =
      p.label === "app (embedded)"
        ? `idle ≤ 250 (${yes(p.idleRssMb <= 250)}), during buys ≤ 350 (${underBuys === undefined ? "not run" : yes(underBuys <= 350)})`
        : p.label.startsWith("app")
          ? `idle < 150 (${yes(p.idleRssMb < 150)}), peak < 300 (${yes(p.peakRssMb < 300)})`
          : ""
    lines.push(`| ${p.label} | ${p.idleRssMb} | ${underBuys ?? "–"} | ${p.peakRssMb} | ${bar} |`)
  }
  lines.push("")
  const report = lines.join("\n")
  log(`\n${report}`)
  if (!flag("--no-write")) {
    writeFileSync(path.join(root, "bench", "results.md"), `${report}\n`)
    log("wrote bench/results.md")
  }
}

main()
  .then(() => {
    killAll()
    process.exit(0)
  })
  .catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    killAll()
    process.exit(1)
  })
