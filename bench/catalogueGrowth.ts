// The catalogue-growth rows of `npm run bench` (issue 51, `--only "catalogue growth"`): on each
// storage two fresh servers each get 1,000 services published over HTTP by 20 sellers; one of them
// then gets 19,000 more, published as fast as it takes them (16 at a time), and the catalogue's
// reads (first page, a category, `q`, a price band, recommendations) are loaded on the two in
// turn at once — 1,000, 20,000, 1,000, 20,000 … — so the machine's other work falls on both sides
// alike. The row is the speed at 20,000 right after the burst ÷ the speed at 1,000, by req/s and by
// CPU per request (target ≥ 0.8×), with the load average.
import os from "node:os"
import type { LoadResult, LoadStep } from "./load.js"
import { marketServiceBody } from "./seedRows.js"

const COMMERCE = "/api/v1/agent/commerce"
const SELLERS = 20
export const GROWTH_BEFORE = 1_000
export const GROWTH_AFTER = 20_000

/** The reads, as a buyer makes them. `q=forecast` matches 1 % of the services (seedRows.ts). */
export const GROWTH_READS: ReadonlyArray<{ readonly label: string; readonly path: string }> = [
  { label: "first page `services?limit=20`", path: `${COMMERCE}/services?limit=20` },
  { label: "`?category=translation`", path: `${COMMERCE}/services?category=translation&limit=20` },
  { label: "`?q=forecast` (1 %: 10 rows / 20)", path: `${COMMERCE}/services?q=forecast&limit=20` },
  // The same word with a page both catalogues fill: the answer's size apart from the catalogue's.
  { label: "`?q=forecast&limit=5` (5 rows on both)", path: `${COMMERCE}/services?q=forecast&limit=5` },
  { label: "`?q=zyxwv` (none)", path: `${COMMERCE}/services?q=zyxwv&limit=20` },
  {
    label: "`?minPriceCents=1&maxPriceCents=10` (8 rows / 20)",
    path: `${COMMERCE}/services?minPriceCents=1&maxPriceCents=10&limit=20`
  },
  {
    label: "`?minPriceCents=1&maxPriceCents=10&limit=5` (5 rows on both)",
    path: `${COMMERCE}/services?minPriceCents=1&maxPriceCents=10&limit=5`
  },
  { label: "`recommend?limit=5`", path: `${COMMERCE}/recommend?limit=5` }
]

type Measured = LoadResult & {
  readonly peakRssMb: number
  /** CPU per request of the server and of PostgreSQL's processes (bench/run.ts `load`). */
  readonly cpuUsPerRequest: { readonly server: number; readonly postgres: number }
}

export interface GrowthRow {
  readonly label: string
  /** Round by round, the server at 1,000 and the one at 20,000. */
  readonly small: ReadonlyArray<Measured>
  readonly grown: ReadonlyArray<Measured>
  readonly rows: readonly [number, number]
}

export interface GrowthRun {
  readonly target: string
  readonly rows: ReadonlyArray<GrowthRow>
  /** Seconds the 19,000 took. */
  readonly burstSeconds: number
  readonly loadBefore: string
  readonly loadAfter: string
  readonly rss: string
}

/** One server of the pair, as bench/run.ts starts it. */
export interface GrowthServer {
  readonly baseUrl: string
  readonly load: (steps: ReadonlyArray<LoadStep>, seconds: number) => Promise<Measured>
  readonly rssMb: () => number
}

export interface GrowthKit {
  readonly newAgentKey: (base: string) => Promise<{ agentId: string; authorization: string }>
  readonly call: (
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>
  ) => Promise<{ status: number; text: string }>
  readonly log: (line: string) => void
}

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–")

/** Publishes services `from` … `to − 1` (seedRows.ts marketServiceBody), `parallel` requests at a time, sellers in turn. */
const publish = async (
  kit: GrowthKit,
  base: string,
  sellers: ReadonlyArray<string>,
  from: number,
  to: number,
  parallel: number
) => {
  let next = from
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < to) {
        const i = next++
        const r = await kit.call(base, "POST", `${COMMERCE}/services`, marketServiceBody(i), {
          authorization: sellers[i % sellers.length]!
        })
        if (r.status !== 201) throw new Error(`publishing service ${i}: ${r.status} ${r.text.slice(0, 200)}`)
      }
    })
  )
}

/** Sellers and a buyer on one server, and its catalogue brought to 1,000 services (its 12 seeded ones included). */
const prepare = async (kit: GrowthKit, server: GrowthServer) => {
  const base = server.baseUrl
  const sellers: Array<string> = []
  for (let i = 0; i < SELLERS; i++) sellers.push((await kit.newAgentKey(base)).authorization)
  const buyer = { authorization: (await kit.newAgentKey(base)).authorization }
  const seeded = (
    JSON.parse((await kit.call(base, "GET", `${COMMERCE}/services?limit=100`, undefined, buyer)).text) as {
      data: ReadonlyArray<unknown>
    }
  ).data.length
  await publish(kit, base, sellers, 0, GROWTH_BEFORE - seeded, 8)
  return { server, sellers, buyer, seeded }
}

/**
 * Two servers at 1,000 services; each read warmed on both (2 s: the JIT and PGlite's WebAssembly
 * tiers settle); 19,000 more on the second; then `rounds` rounds of every read, `seconds` each, on
 * the small server and the grown one in turn.
 */
export const catalogueGrowth = async (
  kit: GrowthKit,
  label: string,
  servers: readonly [GrowthServer, GrowthServer],
  seconds: number,
  rounds: number
): Promise<GrowthRun> => {
  const [small, grown] = [await prepare(kit, servers[0]), await prepare(kit, servers[1])]
  const steps = (side: typeof small, path: string): ReadonlyArray<LoadStep> => [
    { method: "GET", path, headers: side.buyer }
  ]
  for (const read of GROWTH_READS) for (const side of [small, grown]) await side.server.load(steps(side, read.path), 2)
  const loadBefore = loadAverage()
  const started = performance.now()
  await publish(kit, grown.server.baseUrl, grown.sellers, GROWTH_BEFORE - grown.seeded, GROWTH_AFTER - grown.seeded, 16)
  const burstSeconds = (performance.now() - started) / 1000
  kit.log(
    `   published ${fmt(GROWTH_AFTER - GROWTH_BEFORE)} more in ${burstSeconds.toFixed(1)} s (${fmt((GROWTH_AFTER - GROWTH_BEFORE) / burstSeconds)}/s), load average ${loadAverage()}`
  )
  const measured = GROWTH_READS.map(() => ({ small: [] as Array<Measured>, grown: [] as Array<Measured> }))
  for (let round = 0; round < rounds; round++) {
    for (const [i, read] of GROWTH_READS.entries()) {
      const a = await small.server.load(steps(small, read.path), seconds)
      const b = await grown.server.load(steps(grown, read.path), seconds)
      measured[i]!.small.push(a)
      measured[i]!.grown.push(b)
      kit.log(
        `   ${read.label.padEnd(62)} 1k ${fmt(a.requestsPerSecond).padStart(6)} req/s ${fmt(cpu(a)).padStart(6)} µs   20k ${fmt(b.requestsPerSecond).padStart(6)} req/s ${fmt(cpu(b)).padStart(6)} µs`
      )
    }
  }
  const rowsOf = async (side: typeof small) => {
    const out: Array<number> = []
    for (const read of GROWTH_READS) {
      const r = await kit.call(side.server.baseUrl, "GET", read.path, undefined, side.buyer)
      if (r.status !== 200) throw new Error(`${read.path}: ${r.status} ${r.text.slice(0, 200)}`)
      out.push(((JSON.parse(r.text) as { data?: ReadonlyArray<unknown> }).data ?? []).length)
    }
    return out
  }
  const [rowsSmall, rowsGrown] = [await rowsOf(small), await rowsOf(grown)]
  return {
    target: label,
    rows: GROWTH_READS.map((r, i) => ({
      label: r.label,
      small: measured[i]!.small,
      grown: measured[i]!.grown,
      rows: [rowsSmall[i]!, rowsGrown[i]!] as const
    })),
    burstSeconds,
    loadBefore,
    loadAfter: loadAverage(),
    rss: `${small.server.rssMb()} MB at 1k, ${grown.server.rssMb()} MB at 20k`
  }
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0
    ? NaN
    : s.length % 2 === 1
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** CPU per request where the read runs: the server's and, on Postgres, its backends'. */
const cpu = (r: Measured) => r.cpuUsPerRequest.server + r.cpuUsPerRequest.postgres

/** Round by round, the grown server's speed ÷ the small one's: by req/s and by CPU per request. */
export const growthRatios = (row: GrowthRow) => ({
  rps: row.grown.map((b, k) => b.requestsPerSecond / Math.max(1, row.small[k]!.requestsPerSecond)),
  cpu: row.grown.map((b, k) => cpu(row.small[k]!) / Math.max(1, cpu(b)))
})

/** The section of bench/results.md. */
export const growthSection = (runs: ReadonlyArray<GrowthRun>): Array<string> => {
  if (runs.length === 0) return []
  const lines = [
    `Catalogue growth: two fresh servers per storage, each with ${fmt(GROWTH_BEFORE)} services published over HTTP (20 sellers); each read warmed on both; then ${fmt(GROWTH_AFTER - GROWTH_BEFORE)} more published to the second as fast as it takes them (16 at a time), and the reads loaded on the two in turn at once (1k, 20k, 1k, 20k …, ${runs[0]!.rows[0]!.small.length} rounds). Medians of the rounds: req/s and CPU µs per request (server + PostgreSQL), at 1,000 / at 20,000; the ratio is 20,000 ÷ 1,000 in speed, the median of the rounds' ratios, by req/s / by CPU (the worst round in brackets; target ≥ 0.8×).`,
    ""
  ]
  for (const run of runs)
    lines.push(
      `- ${run.target}: burst ${run.burstSeconds.toFixed(1)} s (${fmt((GROWTH_AFTER - GROWTH_BEFORE) / run.burstSeconds)} publishes/s); load average ${run.loadBefore} before it, ${run.loadAfter} after the reads; RSS ${run.rss}.`
    )
  lines.push("")
  lines.push(`| read | ${runs.map((r) => r.target).join(" | ")} |`, `|---|${runs.map(() => "---").join("|")}|`)
  for (const [i, read] of GROWTH_READS.entries()) {
    const cells = runs.map((run) => {
      const row = run.rows[i]!
      const r = growthRatios(row)
      const rps = median(r.rps)
      const us = median(r.cpu)
      const met = [rps < 0.8 ? "req/s" : "", us < 0.8 ? "CPU" : ""].filter(Boolean).join(", ")
      return `${fmt(median(row.small.map((m) => m.requestsPerSecond)))} / ${fmt(median(row.grown.map((m) => m.requestsPerSecond)))} req/s, ${fmt(median(row.small.map(cpu)))} / ${fmt(median(row.grown.map(cpu)))} µs, rows ${row.rows[0]} / ${row.rows[1]} — **${rps.toFixed(2)}× / ${us.toFixed(2)}×** (${Math.min(...r.rps).toFixed(2)}× / ${Math.min(...r.cpu).toFixed(2)}×)${met ? ` not met: ${met}` : ""}`
    })
    lines.push(`| ${read.label} | ${cells.join(" | ")} |`)
  }
  lines.push("")
  return lines
}
