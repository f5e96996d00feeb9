// `npm run bench -- --history` (issue 23's two tables over HTTP): on each storage, one server
// (bench/historyServer.ts: the app as src/main.ts assembles it, plus a stdin command that seeds its
// own storage through the stores) with two agents made through the dashboard API; one of them gets
// 100k completed purchases through PurchaseStore (then VACUUM ANALYZE on the SQL stores), the
// other 25. Each per-agent read is loaded for both, interleaved (fresh, heavy, fresh, heavy), and
// the ratio heavy ÷ fresh reported. Then each catalogue read on the seeded catalogue, 100k services
// inserted through CatalogStore (then ANALYZE), the same reads again: ratio grown ÷ seeded.
import { writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import type { LoadResult } from "./load.js"
import { type BenchKit, type BenchTarget, loadAverage, runLoad } from "./soak.js"

type Storage = "memory" | "embedded" | "postgres"
const COMMERCE = "/api/v1/agent/commerce"

interface Read {
  readonly label: string
  readonly method: "GET" | "POST"
  readonly path: string
  readonly buy?: boolean
}

const AGENT_READS: ReadonlyArray<Read> = [
  { label: "`GET /commerce/wallet`", method: "GET", path: `${COMMERCE}/wallet` },
  { label: "`GET /commerce/transactions?limit=20`", method: "GET", path: `${COMMERCE}/transactions?limit=20` },
  { label: "`GET /commerce/usage`", method: "GET", path: `${COMMERCE}/usage` },
  { label: "`GET /commerce/reputation`", method: "GET", path: `${COMMERCE}/reputation` },
  { label: "`GET /commerce/stats`", method: "GET", path: `${COMMERCE}/stats` },
  { label: "`GET /me`", method: "GET", path: "/api/v1/agent/me" },
  { label: "`POST /commerce/buy`", method: "POST", path: `${COMMERCE}/buy`, buy: true }
]

const CATALOGUE_READS: ReadonlyArray<Read> = [
  { label: "first page `services?limit=20`", method: "GET", path: `${COMMERCE}/services?limit=20` },
  // The seed has 12 services: its first page of 20 holds 12 rows, the grown one 20; a page of 10 is
  // the same size on both, so this row separates the page's size from the catalogue's.
  { label: "first page `services?limit=10` (10 rows on both)", method: "GET", path: `${COMMERCE}/services?limit=10` },
  { label: "`?category=translation`", method: "GET", path: `${COMMERCE}/services?category=translation&limit=20` },
  // The seed lists 2 translation services and 5 in the narrow band: pages of that size answer the
  // same number of rows on both catalogues (what the rows above cannot separate from the page's size).
  {
    label: "`?category=translation&limit=2` (2 rows on both)",
    method: "GET",
    path: `${COMMERCE}/services?category=translation&limit=2`
  },
  {
    label: "`?q=forecast` (none of the seed, 1 % of the grown)",
    method: "GET",
    path: `${COMMERCE}/services?q=forecast&limit=20`
  },
  { label: "`?q=zyxwv` (matches nothing)", method: "GET", path: `${COMMERCE}/services?q=zyxwv&limit=20` },
  {
    label: "`?minPriceCents=1&maxPriceCents=10`",
    method: "GET",
    path: `${COMMERCE}/services?minPriceCents=1&maxPriceCents=10&limit=20`
  },
  {
    label: "`?minPriceCents=1&maxPriceCents=10&limit=5` (5 rows on both)",
    method: "GET",
    path: `${COMMERCE}/services?minPriceCents=1&maxPriceCents=10&limit=5`
  },
  { label: "`recommend?limit=5`", method: "GET", path: `${COMMERCE}/recommend?limit=5` }
]

type Measured = LoadResult & { readonly peakRssMb: number; readonly endRssMb: number }

interface Pair {
  readonly label: string
  /** Rows in the answer (catalogue reads) on each side. */
  readonly rows?: readonly [number, number]
  readonly a: ReadonlyArray<Measured>
  readonly b: ReadonlyArray<Measured>
}

interface HistoryRun {
  readonly storage: Storage
  readonly skipped?: string
  readonly reads?: ReadonlyArray<Pair>
  readonly catalogue?: ReadonlyArray<Pair>
  readonly seeding?: string
  readonly loadStart?: string
  readonly loadEnd?: string
  readonly started?: string
  readonly rss?: string
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–")

/** Sends one seeding command to the history server and waits for its answer line. */
const command = (app: BenchTarget, body: Record<string, unknown>) =>
  new Promise<{ seconds: number }>((resolve, reject) => {
    let buffer = ""
    const onData = (d: Buffer) => {
      buffer += d.toString()
      const nl = buffer.indexOf("\n")
      if (nl === -1) return
      app.child.stdout!.off("data", onData)
      app.child.off("exit", onExit)
      try {
        const reply = JSON.parse(buffer.slice(0, nl)) as { ok: boolean; seconds: number; error?: string }
        if (reply.ok) resolve(reply)
        else reject(new Error(`seeding failed: ${reply.error}`))
      } catch (e) {
        reject(new Error(`seeding answered ${buffer.slice(0, 200)}: ${(e as Error).message}`))
      }
    }
    const onExit = () => reject(new Error("the history server exited while seeding"))
    app.child.stdout!.on("data", onData)
    app.child.once("exit", onExit)
    app.child.stdin!.write(`${JSON.stringify(body)}\n`)
  })

const historyOne = async (
  kit: BenchKit,
  storage: Storage,
  purchases: number,
  services: number,
  seconds: number,
  connections: number,
  rounds: number,
  agentReads: ReadonlyArray<Read>,
  catalogueReads: ReadonlyArray<Read>
): Promise<HistoryRun> => {
  let db: { url: string; version: string; drop: () => Promise<void> } | undefined
  if (storage === "postgres") db = await kit.database()
  try {
    const loadStart = loadAverage()
    const started = new Date().toISOString()
    const app = await kit.startApp(storage, db?.url, path.join(kit.tmp, "historyServer.mjs"))
    kit.log(`\n== history, app (${storage}): idle RSS ${app.idleRssMb} MB, load average ${loadStart}`)
    const fresh = await kit.newAgentKey(app.baseUrl)
    const heavy = await kit.newAgentKey(app.baseUrl)
    let tier: { serviceId: string; tierId: string; priceCents: number } | undefined
    for (const a of [fresh, heavy]) {
      const t = await kit.topUp(app.baseUrl, a.authorization, 10_000_000)
      if (typeof t === "string") throw new Error(`top-up: ${t}`)
      tier = t
    }
    const svc = JSON.parse(
      (
        await kit.call(app.baseUrl, "GET", `${COMMERCE}/services/${tier!.serviceId}`, undefined, {
          authorization: fresh.authorization
        })
      ).text
    ) as {
      name: string
      category: string
      sellerAgentId: string
    }
    const seed = (agentId: string, n: number) =>
      command(app, {
        cmd: "purchases",
        agentId,
        n,
        serviceId: tier!.serviceId,
        serviceName: svc.name,
        category: svc.category,
        tierId: tier!.tierId,
        sellerAgentId: svc.sellerAgentId,
        priceCents: tier!.priceCents,
        days: 20
      })
    // The fresh agent gets a page's worth (25), so both read full pages.
    await seed(fresh.agentId, 25)
    const seeded = await seed(heavy.agentId, purchases)
    const seeding = `${fmt(purchases)} purchases in ${seeded.seconds.toFixed(0)} s`
    kit.log(`   seeded ${seeding} (RSS now ${kit.procMb(app.pid, "VmRSS")} MB)`)
    const body = JSON.stringify({ serviceId: tier!.serviceId, tierId: tier!.tierId, input: { prompt: "history" } })
    const load = (read: Read, authorization: string, s: number) =>
      runLoad(kit, app.pid, {
        url: app.baseUrl,
        connections,
        durationSeconds: s,
        steps: [{ method: read.method, path: read.path, headers: { authorization }, ...(read.buy ? { body } : {}) }]
      })
    const show = (label: string, who: string, r: Measured) =>
      kit.log(
        `   ${label.padEnd(58)} ${who.padEnd(7)} ${fmt(r.requestsPerSecond).padStart(7)} req/s  p99 ${r.latencyP99Ms} ms${r.non2xx ? `  ⚠ ${r.non2xx} non-2xx ${JSON.stringify(r.statusCodes)}` : ""}`
      )
    const reads: Array<Pair> = []
    for (const read of agentReads) {
      await load(read, fresh.authorization, 1)
      await load(read, heavy.authorization, 1)
      const f: Array<Measured> = []
      const h: Array<Measured> = []
      for (let round = 0; round < rounds; round++) {
        f.push(await load(read, fresh.authorization, seconds))
        show(read.label, "fresh", f.at(-1)!)
        h.push(await load(read, heavy.authorization, seconds))
        show(read.label, "heavy", h.at(-1)!)
      }
      reads.push({ label: read.label, a: f, b: h })
    }
    /** How many rows each catalogue read answers: a page of 0 and a page of 20 are not the same work. */
    const rowsOf = async () => {
      const out: Array<number> = []
      for (const read of catalogueReads) {
        const r = await kit.call(app.baseUrl, "GET", read.path, undefined, { authorization: fresh.authorization })
        out.push(((JSON.parse(r.text) as { data?: ReadonlyArray<unknown> }).data ?? []).length)
      }
      return out
    }
    const measureCatalogue = async (who: string) => {
      const out: Array<ReadonlyArray<Measured>> = []
      for (const read of catalogueReads) {
        await load(read, fresh.authorization, 1)
        const rs: Array<Measured> = []
        for (let round = 0; round < rounds; round++) {
          rs.push(await load(read, fresh.authorization, seconds))
          show(read.label, who, rs.at(-1)!)
        }
        out.push(rs)
      }
      return out
    }
    if (catalogueReads.length === 0) {
      const rssEnd = kit.procMb(app.pid, "VmRSS")
      await kit.stop(app.child)
      return {
        storage,
        reads,
        catalogue: [],
        seeding,
        loadStart,
        loadEnd: loadAverage(),
        started,
        rss: `idle ${app.idleRssMb} MB, ${rssEnd} MB at the end`
      }
    }
    const rowsBefore = await rowsOf()
    const before = await measureCatalogue("seeded")
    const rssBefore = kit.procMb(app.pid, "VmRSS")
    const grown = await command(app, {
      cmd: "services",
      n: services,
      categories: [
        "translation",
        "transcription",
        "image-generation",
        "moderation",
        "data-extraction",
        "embeddings",
        "code-review",
        "summarization"
      ]
    })
    kit.log(
      `   inserted ${fmt(services)} services in ${grown.seconds.toFixed(0)} s (RSS ${rssBefore} → ${kit.procMb(app.pid, "VmRSS")} MB)`
    )
    const rowsAfter = await rowsOf()
    const after = await measureCatalogue("grown")
    const rss = `idle ${app.idleRssMb} MB, ${rssBefore} MB with the purchases, ${kit.procMb(app.pid, "VmRSS")} MB with the services too`
    await kit.stop(app.child)
    return {
      storage,
      reads,
      catalogue: catalogueReads.map((r, i) => ({
        label: r.label,
        a: before[i]!,
        b: after[i]!,
        rows: [rowsBefore[i]!, rowsAfter[i]!] as const
      })),
      seeding: `${seeding}, ${fmt(services)} services in ${grown.seconds.toFixed(0)} s`,
      loadStart,
      loadEnd: loadAverage(),
      started,
      rss
    }
  } finally {
    await db?.drop().catch(() => undefined)
  }
}

export const runHistory = async (kit: BenchKit) => {
  const purchases = Number(kit.option("--purchases") ?? 100_000)
  const services = Number(kit.option("--services") ?? 100_000)
  const seconds = kit.durationSeconds ?? (kit.quick ? 2 : 5)
  const connections = Number(kit.option("--connections") ?? 8)
  const rounds = Number(kit.option("--rounds") ?? 2)
  // --only narrows the reads (substring of the label), e.g. --only stats to re-measure one row.
  const only = kit.option("--only")?.split(",")
  const wanted = (r: Read) => !only || only.some((o) => r.label.toLowerCase().includes(o.toLowerCase()))
  const agentReads = AGENT_READS.filter(wanted)
  const catalogueReads = CATALOGUE_READS.filter(wanted)
  const uptimeStart = loadAverage()
  kit.log(
    `history over HTTP: ${fmt(purchases)} purchases, ${fmt(services)} services, ${seconds} s per round, ${connections} connections; load average ${uptimeStart}`
  )
  const runs: Array<HistoryRun> = []
  for (const { storage, skipped } of kit.storages) {
    if (skipped) {
      kit.log(`\n== history, app (${storage}): skipped — ${skipped}`)
      runs.push({ storage, skipped })
      continue
    }
    runs.push(
      await historyOne(kit, storage, purchases, services, seconds, connections, rounds, agentReads, catalogueReads)
    )
  }
  const measured = runs.filter((r) => !r.skipped)
  const lines: Array<string> = []
  lines.push("# History and catalogue over HTTP", "")
  lines.push(
    `Generated by \`npm run bench -- --history\` on ${new Date().toISOString()}: per storage one server (bench/historyServer.ts, the app as src/main.ts builds it, ${kit.pin ? "pinned to CPU 0, autocannon on CPU 1" : "not pinned"}), ${connections} connections, ${seconds} s per round after a 1 s warm-up; two agents with keys from the dashboard API, one with ${fmt(purchases)} completed purchases seeded through PurchaseStore.insertTransaction over the last 20 days (then VACUUM ANALYZE on the SQL stores), the other with 25. Each read: fresh, heavy, … (${rounds} rounds each); req/s is the mean of the rounds, p99 the worse. Catalogue: two rounds on the seeded catalogue (12 services), ${fmt(services)} services inserted through CatalogStore.insert (then VACUUM ANALYZE), two rounds again. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, shared.`,
    ""
  )
  for (const r of measured)
    lines.push(
      `- ${r.storage}: started ${r.started}, load average ${r.loadStart} → ${r.loadEnd}; seeded ${r.seeding}; RSS ${r.rss}.`
    )
  for (const r of runs.filter((x) => x.skipped)) lines.push(`- ${r.storage}: skipped (${r.skipped}).`)
  lines.push("")
  const cell = (p: Pair) => {
    const a = mean(p.a.map((x) => x.requestsPerSecond))
    const b = mean(p.b.map((x) => x.requestsPerSecond))
    const pa = Math.max(...p.a.map((x) => x.latencyP99Ms))
    const pb = Math.max(...p.b.map((x) => x.latencyP99Ms))
    const bad = [...p.a, ...p.b].reduce((n, x) => n + x.non2xx, 0)
    return `${fmt(a)} / ${fmt(b)} req/s, p99 ${pa} / ${pb} ms${p.rows ? `, rows ${p.rows[0]} / ${p.rows[1]}` : ""} — **${(b / a).toFixed(2)}×**${bad ? ` ⚠ ${bad} non-2xx` : ""}`
  }
  if (measured.length > 0) {
    lines.push(`Per-agent reads, fresh / ${fmt(purchases)} purchases (target ≥ 0.9×):`, "")
    lines.push(
      `| read | ${measured.map((r) => r.storage).join(" | ")} |`,
      `|---|${measured.map(() => "---").join("|")}|`
    )
    for (let i = 0; i < agentReads.length; i++)
      lines.push(`| ${agentReads[i]!.label} | ${measured.map((r) => cell(r.reads![i]!)).join(" | ")} |`)
    lines.push("")
    lines.push(`Catalogue reads, seeded (12) / ${fmt(services)} services (target ≥ 0.9×):`, "")
    lines.push(
      `| read | ${measured.map((r) => r.storage).join(" | ")} |`,
      `|---|${measured.map(() => "---").join("|")}|`
    )
    for (let i = 0; i < catalogueReads.length; i++)
      lines.push(`| ${catalogueReads[i]!.label} | ${measured.map((r) => cell(r.catalogue![i]!)).join(" | ")} |`)
    lines.push("")
  }
  lines.push(`Load average ${uptimeStart} at the start, ${loadAverage()} at the end.`, "")
  const report = lines.join("\n")
  kit.log(`\n${report}`)
  if (kit.write) {
    writeFileSync(path.join(kit.root, "bench", "results-history.md"), `${report}\n`)
    kit.log("wrote bench/results-history.md")
  }
}
