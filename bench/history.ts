// Store-level cost of an agent's reads with a long history, and of catalogue reads in a large
// marketplace (issue 23): seeds an agent's purchases and the services through the stores
// themselves (memory, embedded, Postgres), then times each read for the heavy agent against a
// fresh one, and each catalogue read at the seeded catalogue against the grown one, in process (no
// HTTP). `npx tsx bench/history.ts [--purchases N] [--services N] [--iterations N] [--only memory,embedded,postgres]`.
// Postgres needs BENCH_DATABASE_URL or TEST_DATABASE_URL (a server where this user may CREATE DATABASE).
import { Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { randomBytes } from "node:crypto"
import os from "node:os"
import type { ServiceRecord } from "../src/schema/commerce/services.js"
import type { TransactionRecord } from "../src/schema/commerce/transactions.js"
import { CommerceSeedLive } from "../src/layers/seed/seedCommerce.js"
import { EmbeddedStorageLive, MemoryStorageLive, PgStorageLive } from "../src/layers/stores.js"
import { AppConfig } from "../src/services/platform/AppConfig.js"
import { CatalogStore } from "../src/services/commerce/CatalogStore.js"
import { PurchaseStore } from "../src/services/purchases/PurchaseStore.js"
import { DisputeStore } from "../src/services/commerce/DisputeStore.js"
import { AnalyticsStore } from "../src/services/reputation/AnalyticsStore.js"
import { WalletStore } from "../src/services/wallet/WalletStore.js"
import { marketService, seededPurchase } from "./seedRows.js"

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : fallback
}
const PURCHASES = Number(arg("purchases", "100000"))
const SERVICES = Number(arg("services", "100000"))
const ITERATIONS = Number(arg("iterations", "300"))
const ONLY = arg("only", "memory,embedded,postgres").split(",")
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL

const DAY = 86_400_000
const now = Date.now()
const dayStart = new Date(now - (now % DAY)).toISOString()
const monthStart = new Date(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1)).toISOString()

// Spread over the last 20 days, so the month's and usage's day rows are all present.
const purchase = (buyer: string, i: number): TransactionRecord =>
  seededPurchase(
    {
      id: `tx_h${buyer}_${i}`,
      buyerAgentId: buyer,
      sellerAgentId: `agt_hseller${i % 20}`,
      serviceId: "svc_translate_pro",
      serviceName: "Translate Pro",
      category: "translation",
      tierId: "standard",
      priceCents: 3
    },
    { i, n: PURCHASES, days: 20, now }
  )

const service = (i: number): ServiceRecord =>
  marketService(i, { category: `mcat${i % 50}`, description: `reports and analyses ${i % 997}`, now })

/** Mean microseconds per call of `read`, after a tenth as many unmeasured calls. */
const time = <A, E, R>(read: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    for (let i = 0; i < Math.ceil(ITERATIONS / 10); i++) yield* read
    const start = performance.now()
    for (let i = 0; i < ITERATIONS; i++) yield* read
    return ((performance.now() - start) * 1000) / ITERATIONS
  })

const agentReads = (agentId: string) =>
  Effect.gen(function* () {
    const wallets = yield* WalletStore
    const analytics = yield* AnalyticsStore
    const commerce = yield* PurchaseStore
    const disputes = yield* DisputeStore
    return [
      [
        "spent today + this month (wallet view, policy check)",
        Effect.all([wallets.spentSince(agentId, dayStart), wallets.spentSince(agentId, monthStart)])
      ],
      ["transactions page (20)", commerce.listTransactions({ agentId, limit: 20 })],
      [
        "usage, 30 days",
        analytics.usage(agentId, new Date(now - 29 * DAY - (now % DAY)).toISOString(), new Date(now + 1).toISOString())
      ],
      [
        "stats: totals + top bought + top sold",
        Effect.all([
          analytics.agentTotals(agentId),
          analytics.topServices({ buyer: agentId }, 5),
          analytics.topServices({ seller: agentId }, 5)
        ])
      ],
      ["reputation inputs", analytics.reputationInputs([agentId])],
      ["recommendations' history", analytics.categoryHistory(agentId)],
      ["disputes page", disputes.listForAgent(agentId, 20)]
    ] as const
  })

const catalogueReads = Effect.map(
  CatalogStore,
  (c) =>
    [
      ["first page", c.list({ limit: 21 })],
      ["?category=", c.list({ category: "translation", limit: 21 })],
      ["?q=forecast (matches only the seeded)", c.list({ q: "forecast", limit: 21 })],
      ["?q=analyses (matches most)", c.list({ q: "analyses", limit: 21 })],
      ["?minPriceCents=&maxPriceCents= (a narrow band)", c.list({ minPriceCents: 1, maxPriceCents: 10, limit: 21 })],
      [
        "recommend's candidates (20 of the kept ranking)",
        c.ranked({ sellers: null, categories: null, maxTierCents: null, limit: 20 })
      ]
    ] as const
)

/** What every storage layer provides: the stores and the configuration (the Postgres ones the SQL client too, read as optional). */
type StorageServices = Layer.Success<typeof MemoryStorageLive> | AppConfig

const run = (name: string, storage: Layer.Layer<StorageServices, unknown, never>) =>
  Effect.gen(function* () {
    const commerce = yield* PurchaseStore
    const catalog = yield* CatalogStore
    const t0 = performance.now()
    const fresh = "agt_hfresh"
    const heavy = "agt_hheavy"
    // The fresh agent has a page's worth (25), so both read full pages.
    yield* Effect.forEach(
      Array.from({ length: 25 }, (_, i) => purchase(fresh, i * Math.floor(PURCHASES / 25))),
      (tx) =>
        commerce.insertTransaction(tx, {
          transactionId: tx.id,
          serviceId: tx.serviceId,
          tierId: tx.tierId,
          success: true,
          latencyMs: 1,
          output: null,
          error: null,
          deliveredAt: tx.createdAt
        }),
      { discard: true }
    )
    const seeded = yield* Effect.forEach(
      Array.from({ length: PURCHASES }, (_, i) => i),
      (i) => {
        const tx = purchase(heavy, i)
        return commerce.insertTransaction(tx, {
          transactionId: tx.id,
          serviceId: tx.serviceId,
          tierId: tx.tierId,
          success: true,
          latencyMs: 1,
          output: null,
          error: null,
          deliveredAt: tx.createdAt
        })
      },
      { concurrency: name === "postgres" ? 8 : 1, discard: true }
    ).pipe(Effect.as(PURCHASES))
    const seedSeconds = (performance.now() - t0) / 1000
    if (name !== "memory") {
      // As autovacuum would on Postgres after a bulk load (PGlite has none): the 100k upserts of the
      // agent's counter and day rows left dead row versions behind, and the planner no statistics.
      const { SqlClient } = yield* Effect.promise(() => import("effect/sql"))
      const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
      yield* sql`VACUUM ANALYZE`
    }
    const reads: Array<{ read: string; freshUs: number; heavyUs: number }> = []
    const freshReads = yield* agentReads(fresh)
    const heavyReads = yield* agentReads(heavy)
    for (let i = 0; i < freshReads.length; i++) {
      const f = yield* time(freshReads[i][1] as Effect.Effect<unknown, unknown, never>)
      const h = yield* time(heavyReads[i][1] as Effect.Effect<unknown, unknown, never>)
      reads.push({ read: freshReads[i][0], freshUs: f, heavyUs: h })
    }
    const before: Array<{ read: string; us: number }> = []
    for (const [label, read] of yield* catalogueReads)
      before.push({ read: label, us: yield* time(read as Effect.Effect<unknown, unknown, never>) })
    const t1 = performance.now()
    yield* Effect.forEach(
      Array.from({ length: SERVICES }, (_, i) => service(i)),
      (s) => catalog.insert(s),
      { concurrency: name === "postgres" ? 8 : 1, discard: true }
    )
    const servicesSeconds = (performance.now() - t1) / 1000
    if (name !== "memory") {
      // As an operator would after a bulk load: fresh planner statistics.
      const { SqlClient } = yield* Effect.promise(() => import("effect/sql"))
      const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
      yield* sql`ANALYZE`
    }
    const after: Array<{ read: string; us: number }> = []
    for (const [label, read] of yield* catalogueReads)
      after.push({ read: label, us: yield* time(read as Effect.Effect<unknown, unknown, never>) })
    return {
      name,
      seeded,
      seedSeconds,
      servicesSeconds,
      reads,
      catalogue: before.map((b, i) => ({ read: b.read, seededUs: b.us, grownUs: after[i].us }))
    }
  }).pipe(Effect.provide(Layer.provideMerge(CommerceSeedLive, storage)), Effect.scoped)

const admin = async (text: string) => {
  const c = new pg.Client({ connectionString: adminUrl })
  await c.connect()
  try {
    await c.query(text)
  } finally {
    await c.end()
  }
}

const main = async () => {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")
  console.log(
    `# bench/history.ts — ${new Date().toISOString()}, ${PURCHASES.toLocaleString("en")} purchases, ${SERVICES.toLocaleString("en")} services, ${ITERATIONS} calls per read; load average ${load}`
  )
  const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(0)} µs`)
  for (const name of ONLY) {
    let storage: Layer.Layer<StorageServices, unknown, never>
    let drop: (() => Promise<void>) | undefined
    if (name === "memory") storage = MemoryStorageLive.pipe(Layer.provideMerge(AppConfig.test({ storage: "memory" })))
    else if (name === "embedded")
      storage = EmbeddedStorageLive.pipe(
        Layer.provideMerge(AppConfig.test({ storage: "embedded", dataDir: "memory://" }))
      )
    else {
      if (adminUrl === undefined) {
        console.log("postgres: skipped (no BENCH_DATABASE_URL / TEST_DATABASE_URL)")
        continue
      }
      const db = `bench_h_${randomBytes(4).toString("hex")}`
      await admin(`CREATE DATABASE ${db}`)
      const u = new URL(adminUrl)
      u.pathname = `/${db}`
      storage = PgStorageLive.pipe(
        Layer.provideMerge(
          AppConfig.test({ storage: "postgres", databaseUrl: Option.some(Redacted.make(u.toString())) })
        )
      )
      drop = () => admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
    }
    try {
      const r = await Effect.runPromise(run(name, storage))
      console.log(
        `\n## ${name} (seeded ${r.seeded.toLocaleString("en")} purchases in ${r.seedSeconds.toFixed(0)} s, ${SERVICES.toLocaleString("en")} services in ${r.servicesSeconds.toFixed(0)} s)\n`
      )
      console.log("| read | fresh agent | agent with the purchases | heavy ÷ fresh |\n|---|---:|---:|---:|")
      for (const x of r.reads)
        console.log(`| ${x.read} | ${fmt(x.freshUs)} | ${fmt(x.heavyUs)} | ${(x.heavyUs / x.freshUs).toFixed(2)}× |`)
      console.log("\n| catalogue read | seeded (12) | grown | grown ÷ seeded |\n|---|---:|---:|---:|")
      for (const x of r.catalogue)
        console.log(`| ${x.read} | ${fmt(x.seededUs)} | ${fmt(x.grownUs)} | ${(x.grownUs / x.seededUs).toFixed(2)}× |`)
    } finally {
      await drop?.()
    }
  }
  console.log(
    `\nload average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}`
  )
}

void main()
