// The catalogue-growth rows of `npm run bench` (issue 51, `--only "catalogue growth"`): on each
// storage a fresh server gets 1,000 services published over HTTP by 20 sellers, and the catalogue's
// reads (first page, a category, `q`, a price band, recommendations) are loaded; then 19,000 more
// are published as fast as the server takes them (16 at a time) and the same reads are loaded
// again at once, with no pause for the database to catch up. The row is the speed at 20,000 right
// after the burst ÷ the speed at 1,000 (target ≥ 0.8× in every round), with the load average.
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
  { label: "`?q=forecast` (1 %)", path: `${COMMERCE}/services?q=forecast&limit=20` },
  { label: "`?q=zyxwv` (none)", path: `${COMMERCE}/services?q=zyxwv&limit=20` },
  {
    label: "`?minPriceCents=1&maxPriceCents=10`",
    path: `${COMMERCE}/services?minPriceCents=1&maxPriceCents=10&limit=20`
  },
  { label: "`recommend?limit=5`", path: `${COMMERCE}/recommend?limit=5` }
]

type Measured = LoadResult & { readonly peakRssMb: number }

export interface GrowthRow {
  readonly label: string
  readonly before: ReadonlyArray<Measured>
  readonly after: ReadonlyArray<Measured>
  readonly rows: readonly [number, number]
}

export interface GrowthRun {
  readonly target: string
  readonly rows: ReadonlyArray<GrowthRow>
  /** Seconds the 19,000 took, and their rate. */
  readonly burstSeconds: number
  readonly loadBefore: string
  readonly loadAfter: string
  readonly rss: string
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
  readonly load: (steps: ReadonlyArray<LoadStep>, seconds: number) => Promise<Measured>
  readonly rssMb: () => number
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

/**
 * 1,000 services, the reads; 19,000 more in a burst, the reads again at once. Each read: a 1 s
 * warm-up, then `rounds` rounds of `seconds`, all reads in turn per round (so the first round after
 * the burst is the one right after it).
 */
export const catalogueGrowth = async (
  kit: GrowthKit,
  target: { readonly label: string; readonly baseUrl: string },
  seconds: number,
  rounds: number
): Promise<GrowthRun> => {
  const base = target.baseUrl
  const sellers: Array<string> = []
  for (let i = 0; i < SELLERS; i++) sellers.push((await kit.newAgentKey(base)).authorization)
  const buyer = { authorization: (await kit.newAgentKey(base)).authorization }
  // The server's own seed (12 services) is part of the catalogue: publish up to 1,000 in all.
  const seeded = (
    JSON.parse((await kit.call(base, "GET", `${COMMERCE}/services?limit=100`, undefined, buyer)).text) as {
      data: ReadonlyArray<unknown>
    }
  ).data.length
  await publish(kit, base, sellers, 0, GROWTH_BEFORE - seeded, 8)
  const rowsOf = async () => {
    const out: Array<number> = []
    for (const read of GROWTH_READS) {
      const r = await kit.call(base, "GET", read.path, undefined, buyer)
      if (r.status !== 200) throw new Error(`${read.path}: ${r.status} ${r.text.slice(0, 200)}`)
      out.push(((JSON.parse(r.text) as { data?: ReadonlyArray<unknown> }).data ?? []).length)
    }
    return out
  }
  const measure = async (who: string) => {
    const out: Array<Array<Measured>> = GROWTH_READS.map(() => [])
    for (let round = 0; round < rounds; round++) {
      for (const [i, read] of GROWTH_READS.entries()) {
        const steps: ReadonlyArray<LoadStep> = [{ method: "GET", path: read.path, headers: buyer }]
        if (round === 0) await kit.load(steps, 1)
        const r = await kit.load(steps, seconds)
        out[i]!.push(r)
        kit.log(
          `   ${read.label.padEnd(40)} ${who.padEnd(6)} ${fmt(r.requestsPerSecond).padStart(7)} req/s  p99 ${r.latencyP99Ms} ms${r.non2xx ? `  ⚠ ${r.non2xx} non-2xx` : ""}`
        )
      }
    }
    return out
  }
  const loadBefore = loadAverage()
  const rowsBefore = await rowsOf()
  const before = await measure("1k")
  const rssBefore = kit.rssMb()
  const started = performance.now()
  await publish(kit, base, sellers, GROWTH_BEFORE - seeded, GROWTH_AFTER - seeded, 16)
  const burstSeconds = (performance.now() - started) / 1000
  kit.log(
    `   published ${fmt(GROWTH_AFTER - GROWTH_BEFORE)} more in ${burstSeconds.toFixed(1)} s (${fmt((GROWTH_AFTER - GROWTH_BEFORE) / burstSeconds)}/s), load average ${loadAverage()}`
  )
  const after = await measure("20k")
  const rowsAfter = await rowsOf()
  return {
    target: target.label,
    rows: GROWTH_READS.map((r, i) => ({
      label: r.label,
      before: before[i]!,
      after: after[i]!,
      rows: [rowsBefore[i]!, rowsAfter[i]!] as const
    })),
    burstSeconds,
    loadBefore,
    loadAfter: loadAverage(),
    rss: `${rssBefore} MB at 1k, ${kit.rssMb()} MB at 20k`
  }
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/** The worst round's ratio: round k after ÷ the mean before. */
export const worstRatio = (row: GrowthRow) => {
  const before = mean(row.before.map((r) => r.requestsPerSecond))
  return Math.min(...row.after.map((r) => r.requestsPerSecond / before))
}

/** The section of bench/results.md. */
export const growthSection = (runs: ReadonlyArray<GrowthRun>): Array<string> => {
  if (runs.length === 0) return []
  const lines = [
    `Catalogue growth: on a fresh server, ${fmt(GROWTH_BEFORE)} services published over HTTP (20 sellers), each read loaded; then ${fmt(GROWTH_AFTER - GROWTH_BEFORE)} more published as fast as the server takes them (16 at a time) and the reads loaded again at once. req/s at ${fmt(GROWTH_BEFORE)} (mean of the rounds) / at ${fmt(GROWTH_AFTER)} per round; the ratio is the worst round's (target ≥ 0.8× in every round).`,
    ""
  ]
  for (const run of runs)
    lines.push(
      `- ${run.target}: burst ${run.burstSeconds.toFixed(1)} s (${fmt((GROWTH_AFTER - GROWTH_BEFORE) / run.burstSeconds)} publishes/s); load average ${run.loadBefore} before, ${run.loadAfter} after; RSS ${run.rss}.`
    )
  lines.push("")
  lines.push(`| read | ${runs.map((r) => r.target).join(" | ")} |`, `|---|${runs.map(() => "---").join("|")}|`)
  for (const [i, read] of GROWTH_READS.entries()) {
    const cells = runs.map((run) => {
      const row = run.rows[i]!
      const before = mean(row.before.map((r) => r.requestsPerSecond))
      const after = row.after.map((r) => fmt(r.requestsPerSecond)).join(", ")
      const p99 = `${Math.max(...row.before.map((r) => r.latencyP99Ms))} / ${Math.max(...row.after.map((r) => r.latencyP99Ms))}`
      const ratio = worstRatio(row)
      return `${fmt(before)} / ${after} req/s, p99 ${p99} ms, rows ${row.rows[0]} / ${row.rows[1]} — **${ratio.toFixed(2)}×**${ratio >= 0.8 ? "" : " (not met)"}`
    })
    lines.push(`| ${read.label} | ${cells.join(" | ")} |`)
  }
  lines.push("")
  return lines
}
