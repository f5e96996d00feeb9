// `npm run bench -- --soak <duration>` (issue 23): a mixed load of many agents — a few heavy ones
// making most of the purchases, all of them reading their wallet, pages, usage, stats, reputation
// and the catalogue — against the compiled server on each storage, reported per interval: req/s,
// p50/p99, the server's RSS and the load average; then the last interval against the first
// (targets: req/s ≥ 0.9×, p99 ≤ 1.2×, RSS flat on the SQL stores). Started by bench/run.ts, which
// builds the server and passes what it shares (server start, agents, pinning, the database).
import type { ChildProcess } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import type { LoadResult, LoadSpec, MixEntry } from "./load.js"

type Storage = "memory" | "embedded" | "postgres"

export interface BenchTarget {
  readonly label: string
  readonly baseUrl: string
  readonly pid: number
  readonly child: ChildProcess
  readonly idleRssMb: number
}

/** What run.ts shares with the soak and the history bench. */
export interface BenchKit {
  readonly root: string
  readonly tmp: string
  readonly pin: boolean
  readonly connections: number
  readonly quick: boolean
  /** --duration when given. */
  readonly durationSeconds: number | undefined
  readonly option: (name: string) => string | undefined
  readonly write: boolean
  readonly storages: ReadonlyArray<{ readonly storage: Storage; readonly skipped?: string | undefined }>
  readonly startApp: (storage: Storage, databaseUrl?: string, entry?: string) => Promise<BenchTarget>
  readonly stop: (child: ChildProcess) => Promise<void>
  readonly newAgentKey: (base: string) => Promise<{ agentId: string; authorization: string }>
  /** Tops the agent's wallet up for `buys` purchases of the cheapest tier; returns that tier, or why not. */
  readonly topUp: (
    base: string,
    authorization: string,
    buys: number
  ) => Promise<{ serviceId: string; tierId: string; priceCents: number } | string>
  readonly call: (
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>
  ) => Promise<{ status: number; text: string }>
  readonly procMb: (pid: number, field: "VmRSS" | "VmHWM") => number
  /** An autocannon process (bench/load.ts) on the load core. */
  readonly spawnLoad: (spec: LoadSpec) => ChildProcess
  readonly database: () => Promise<{ url: string; version: string; drop: () => Promise<void> }>
  readonly startFlags: ReadonlyArray<string>
  readonly log: (line: string) => void
}

/** "10m", "90s", "90" → seconds. */
export const parseDuration = (text: string): number => {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|min|h)?$/.exec(text.trim())
  if (!m) throw new Error(`not a duration: ${text} (use e.g. 10m, 180s or 180)`)
  const n = Number(m[1])
  return Math.round(m[2] === "h" ? n * 3600 : m[2] === "m" || m[2] === "min" ? n * 60 : n)
}

/** CPU seconds (user + system) the process has used so far, from /proc/<pid>/stat. */
const cpuSeconds = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")

/** One autocannon run from the load process; the server's RSS sampled every 250 ms meanwhile. */
export const runLoad = async (kit: BenchKit, pid: number, spec: LoadSpec) => {
  let peakRssMb = kit.procMb(pid, "VmRSS")
  const sampler = setInterval(() => {
    const now = kit.procMb(pid, "VmRSS")
    if (now > peakRssMb) peakRssMb = now
  }, 250)
  try {
    const child = kit.spawnLoad(spec)
    let out = ""
    let err = ""
    child.stdout!.removeAllListeners("data")
    child.stdout!.on("data", (d: Buffer) => void (out += d.toString()))
    child.stderr!.on("data", (d: Buffer) => void (err = (err + d.toString()).slice(-2000)))
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)))
    if (code !== 0) throw new Error(`load generator failed (${code}): ${err}`)
    return {
      ...(JSON.parse(out.trim().split("\n").pop()!) as LoadResult),
      peakRssMb,
      endRssMb: kit.procMb(pid, "VmRSS")
    }
  } finally {
    clearInterval(sampler)
  }
}

const COMMERCE = "/api/v1/agent/commerce"
const HEAVY_AGENTS = 3
/** Share of all requests made by the heavy agents, and the share of buys in each group's requests. */
const HEAVY_SHARE = 0.3
const HEAVY_BUY_SHARE = 0.5
const LIGHT_BUY_SHARE = 0.1

/** The reads every agent makes, equally often. */
const READS: ReadonlyArray<string> = [
  "/api/v1/agent/me",
  `${COMMERCE}/wallet`,
  `${COMMERCE}/transactions?limit=20`,
  `${COMMERCE}/usage`,
  `${COMMERCE}/stats`,
  `${COMMERCE}/reputation`,
  `${COMMERCE}/services?limit=20`,
  `${COMMERCE}/services?category=translation&limit=20`,
  `${COMMERCE}/services?q=translate&limit=20`,
  `${COMMERCE}/recommend?limit=5`
]

interface Interval {
  readonly index: number
  readonly endSeconds: number
  readonly result: LoadResult & { readonly peakRssMb: number; readonly endRssMb: number }
  readonly loadAverage: string
  /** The server's CPU time per request in the interval: if it grows, the server does more per request; if req/s falls and it does not, the core was shared. */
  readonly cpuMsPerRequest: number
  /** The server's CPU use in the interval, in cores. */
  readonly cpuShare: number
}

interface SoakRun {
  readonly storage: Storage
  readonly skipped?: string
  readonly intervals: ReadonlyArray<Interval>
  readonly idleRssMb?: number
  readonly heavyPurchases?: ReadonlyArray<number>
  readonly loadStart?: string
  readonly loadEnd?: string
  readonly started?: string
}

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–")

const soakOne = async (
  kit: BenchKit,
  storage: Storage,
  seconds: number,
  intervalSeconds: number,
  agentsWanted: number
): Promise<SoakRun> => {
  let db: { url: string; version: string; drop: () => Promise<void> } | undefined
  if (storage === "postgres") db = await kit.database()
  try {
    const app = await kit.startApp(storage, db?.url)
    const loadStart = loadAverage()
    const started = new Date().toISOString()
    kit.log(`\n== soak, app (${storage}): idle RSS ${app.idleRssMb} MB, load average ${loadStart}`)
    // Agents with keys made through the dashboard API, wallets topped up through the API.
    const agents: Array<{ agentId: string; authorization: string; heavy: boolean }> = []
    let tier: { serviceId: string; tierId: string; priceCents: number } | undefined
    for (let i = 0; i < agentsWanted; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, agentsWanted - i) }, async (_, j) => {
          const heavy = i + j < HEAVY_AGENTS
          const k = await kit.newAgentKey(app.baseUrl)
          const t = await kit.topUp(app.baseUrl, k.authorization, heavy ? 2_000_000 : 200_000)
          if (typeof t === "string") throw new Error(`top-up: ${t}`)
          tier = t
          return { ...k, heavy }
        })
      )
      agents.push(...batch)
    }
    const body = JSON.stringify({ serviceId: tier!.serviceId, tierId: tier!.tierId, input: { prompt: "soak" } })
    const heavy = agents.filter((a) => a.heavy)
    const light = agents.filter((a) => !a.heavy)
    const mix: Array<MixEntry> = []
    for (const [group, share, buyShare] of [
      [heavy, HEAVY_SHARE, HEAVY_BUY_SHARE],
      [light, 1 - HEAVY_SHARE, LIGHT_BUY_SHARE]
    ] as const) {
      const perAgent = share / group.length
      for (const a of group) {
        const headers = { authorization: a.authorization }
        mix.push({ weight: perAgent * buyShare, method: "POST", path: `${COMMERCE}/buy`, headers, body })
        for (const p of READS)
          mix.push({ weight: (perAgent * (1 - buyShare)) / READS.length, method: "GET", path: p, headers })
      }
    }
    const buyShare = HEAVY_SHARE * HEAVY_BUY_SHARE + (1 - HEAVY_SHARE) * LIGHT_BUY_SHARE
    kit.log(
      `   ${agents.length} agents (${heavy.length} heavy: ${Math.round(HEAVY_SHARE * 100)} % of requests, half of them buys), ${Math.round(buyShare * 100)} % buys in all (${Math.round((100 * HEAVY_SHARE * HEAVY_BUY_SHARE) / buyShare)} % of them by the heavy agents), ${kit.connections} connections`
    )
    // Unmeasured warm-up: JIT, connection pools.
    await runLoad(kit, app.pid, {
      url: app.baseUrl,
      connections: kit.connections,
      durationSeconds: kit.quick ? 3 : 10,
      steps: [],
      mix
    })
    const intervals: Array<Interval> = []
    const count = Math.max(1, Math.round(seconds / intervalSeconds))
    for (let i = 0; i < count; i++) {
      const cpuBefore = cpuSeconds(app.pid)
      const wallBefore = performance.now()
      const result = await runLoad(kit, app.pid, {
        url: app.baseUrl,
        connections: kit.connections,
        durationSeconds: intervalSeconds,
        steps: [],
        mix
      })
      const cpu = cpuSeconds(app.pid) - cpuBefore
      const interval: Interval = {
        index: i + 1,
        endSeconds: (i + 1) * intervalSeconds,
        result,
        loadAverage: loadAverage(),
        cpuMsPerRequest: (cpu * 1000) / Math.max(1, result.total),
        cpuShare: cpu / ((performance.now() - wallBefore) / 1000)
      }
      intervals.push(interval)
      kit.log(
        `   ${String(i + 1).padStart(3)} ${fmt(result.requestsPerSecond).padStart(7)} req/s  p50 ${result.latencyP50Ms} ms  p99 ${result.latencyP99Ms} ms  RSS ${result.endRssMb} MB (peak ${result.peakRssMb})  CPU ${interval.cpuMsPerRequest.toFixed(3)} ms/request, ${interval.cpuShare.toFixed(2)} cores  load ${interval.loadAverage}${result.non2xx ? `  ⚠ ${result.non2xx} non-2xx ${JSON.stringify(result.statusCodes)}` : ""}`
      )
    }
    // How long the heavy agents' histories got (their own stats).
    const heavyPurchases: Array<number> = []
    for (const a of heavy) {
      const stats = await kit.call(app.baseUrl, "GET", `${COMMERCE}/stats`, undefined, {
        authorization: a.authorization
      })
      heavyPurchases.push(
        stats.status === 200
          ? Number((JSON.parse(stats.text) as { agent?: { purchases?: number } }).agent?.purchases ?? NaN)
          : NaN
      )
    }
    const loadEnd = loadAverage()
    await kit.stop(app.child)
    return { storage, intervals, idleRssMb: app.idleRssMb, heavyPurchases, loadStart, loadEnd, started }
  } finally {
    await db?.drop().catch(() => undefined)
  }
}

export const runSoak = async (kit: BenchKit) => {
  const seconds = parseDuration(kit.option("--soak") ?? "10m")
  const intervalOption = kit.option("--soak-interval")
  const intervalSeconds = intervalOption
    ? parseDuration(intervalOption)
    : seconds >= 180
      ? 60
      : Math.max(5, Math.round(seconds / 3))
  const agents = Number(kit.option("--soak-agents") ?? 50)
  if (!(agents > HEAVY_AGENTS)) throw new Error(`--soak-agents must be more than ${HEAVY_AGENTS}`)
  const uptimeStart = loadAverage()
  kit.log(
    `soak: ${seconds} s per storage in ${intervalSeconds} s intervals, ${agents} agents, ${kit.connections} connections, ${kit.pin ? "server on CPU 0, load on CPU 1" : "no CPU pinning"}; load average ${uptimeStart}`
  )
  const runs: Array<SoakRun> = []
  for (const { storage, skipped } of kit.storages) {
    if (skipped) {
      kit.log(`\n== soak, app (${storage}): skipped — ${skipped}`)
      runs.push({ storage, skipped, intervals: [] })
      continue
    }
    runs.push(await soakOne(kit, storage, seconds, intervalSeconds, agents))
  }

  const lines: Array<string> = []
  lines.push("# Soak results", "")
  lines.push(
    `Generated by \`npm run bench -- --soak ${kit.option("--soak")}${intervalOption ? ` --soak-interval ${intervalOption}` : ""}\` on ${new Date().toISOString()}: ${agents} agents (${HEAVY_AGENTS} heavy: ${HEAVY_SHARE * 100} % of the requests, half of them buys; the others 10 % buys), each read of /me, wallet, transactions?limit=20, usage, stats, reputation, services (first page, category, q), recommend equally often, ${kit.connections} connections, ${intervalSeconds} s intervals after an unmeasured warm-up; ${kit.pin ? "server pinned to CPU 0, autocannon to CPU 1" : "no CPU pinning"}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, shared; load average (1 / 5 / 15 min) in each row.`,
    ""
  )
  for (const r of runs) {
    if (r.skipped) {
      lines.push(`## ${r.storage}: skipped (${r.skipped})`, "")
      continue
    }
    lines.push(`## ${r.storage}`, "")
    lines.push(
      `Started ${r.started}, load average ${r.loadStart} at the start and ${r.loadEnd} at the end; idle RSS ${r.idleRssMb} MB; the heavy agents' purchases at the end: ${(r.heavyPurchases ?? []).map((n) => fmt(n)).join(", ")}.`,
      ""
    )
    lines.push(
      "| interval | ends at | req/s | p50 ms | p99 ms | non-2xx | RSS MB at end | peak RSS MB | server CPU ms / request | server CPU, cores | load average |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    for (const i of r.intervals) {
      lines.push(
        `| ${i.index} | ${i.endSeconds} s | ${fmt(i.result.requestsPerSecond)} | ${i.result.latencyP50Ms} | ${i.result.latencyP99Ms} | ${i.result.non2xx} | ${i.result.endRssMb} | ${i.result.peakRssMb} | ${i.cpuMsPerRequest.toFixed(3)} | ${i.cpuShare.toFixed(2)} | ${i.loadAverage} |`
      )
    }
    lines.push("")
  }
  const measured = runs.filter((r) => !r.skipped && r.intervals.length > 0)
  if (measured.length > 0) {
    lines.push(
      "First against last interval (targets: req/s ≥ 0.9×, p99 ≤ 1.2×, RSS flat (≤ 1.1×) on the SQL stores):",
      ""
    )
    lines.push(
      "| storage | req/s first → last | ratio | p99 ms first → last | ratio | RSS MB first → last | ratio | met |",
      "|---|---:|---:|---:|---:|---:|---:|---|"
    )
    for (const r of measured) {
      const first = r.intervals[0]!.result
      const last = r.intervals[r.intervals.length - 1]!.result
      const rps = last.requestsPerSecond / first.requestsPerSecond
      const p99 = last.latencyP99Ms / first.latencyP99Ms
      const rss = last.endRssMb / first.endRssMb
      const sql = r.storage !== "memory"
      const met = rps >= 0.9 && p99 <= 1.2 && (!sql || rss <= 1.1)
      lines.push(
        `| ${r.storage} | ${fmt(first.requestsPerSecond)} → ${fmt(last.requestsPerSecond)} | ${rps.toFixed(2)}× | ${first.latencyP99Ms} → ${last.latencyP99Ms} | ${p99.toFixed(2)}× | ${first.endRssMb} → ${last.endRssMb} | ${rss.toFixed(2)}×${sql ? "" : " (no target)"} | ${met ? "yes" : "**no**"} |`
      )
    }
    lines.push("")
  }
  lines.push(`Load average ${uptimeStart} at the start of the soak, ${loadAverage()} at the end.`, "")
  const report = lines.join("\n")
  kit.log(`\n${report}`)
  if (kit.write) {
    writeFileSync(path.join(kit.root, "bench", "results-soak.md"), `${report}\n`)
    kit.log("wrote bench/results-soak.md")
  }
}
