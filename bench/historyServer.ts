// The server for `npm run bench -- --history` (bench/historyHttp.ts): the app exactly as
// src/main.ts assembles it (config from the environment, ServerLive), plus a command line on stdin
// that seeds its own storage through the stores the app uses, so the seeded rows live where the
// server reads them on every storage (the memory store has no file another process could fill):
//   {"cmd":"purchases","agentId":…,"n":…,…}  n completed purchases through CommerceStore.insertTransaction
//   {"cmd":"services","n":…}                 n listed services through CatalogStore.insert
// each followed by VACUUM ANALYZE on the SQL stores (as autovacuum would after a bulk load; PGlite
// has none). Each command answers one JSON line on stdout. Bundled by bench/run.ts like dist/main.js.
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { createInterface } from "node:readline"
import { loadConfig } from "../src/layers/config.js"
import { LoggerLive, ServerLive } from "../src/layers/app.js"
import type { ServiceRecord, TransactionRecord } from "../src/schema/commerce.js"
import { AppConfig } from "../src/services/AppConfig.js"
import { CatalogStore } from "../src/services/Catalog.js"
import { CommerceStore } from "../src/services/Commerce.js"

const DAY = 86_400_000

interface PurchasesCommand {
  readonly cmd: "purchases"
  readonly agentId: string
  readonly n: number
  readonly serviceId: string
  readonly serviceName: string
  readonly category: string
  readonly tierId: string
  readonly sellerAgentId: string
  readonly priceCents: number
  /** Spread over this many days before now (the wallet's month and usage's 30 days see them all). */
  readonly days: number
}
interface ServicesCommand {
  readonly cmd: "services"
  readonly n: number
  readonly categories: ReadonlyArray<string>
}
type Command = PurchasesCommand | ServicesCommand

const purchase = (c: PurchasesCommand, i: number, now: number): TransactionRecord => {
  const createdAt = new Date(now - c.days * DAY + Math.floor((i * c.days * DAY) / Math.max(1, c.n))).toISOString()
  return {
    id: `tx_seed_${c.agentId}_${i}`,
    buyerAgentId: c.agentId,
    sellerAgentId: c.sellerAgentId,
    serviceId: c.serviceId,
    serviceName: c.serviceName,
    category: c.category,
    pricingModel: "per_call",
    tierId: c.tierId,
    listPriceCents: c.priceCents,
    priceCents: c.priceCents,
    sellerCents: c.priceCents,
    feeCents: 0,
    negotiationId: null,
    approvalId: null,
    idempotencyKey: null,
    status: "completed",
    ledgerEntryId: null,
    createdAt,
    refundedAt: null
  } as TransactionRecord
}

/** A grown marketplace: the seed's categories in turn, 1 in 100 services about forecasts, prices 1–5000 cents. */
const service = (c: ServicesCommand, i: number, now: number): ServiceRecord =>
  ({
    id: `svc_m${String(i).padStart(6, "0")}`,
    sellerAgentId: `agt_mseller${i % 2000}`,
    name: `Market service ${i}`,
    description: i % 100 === 7 ? `weekly demand forecast ${i % 997}` : `reports and analyses ${i % 997}`,
    category: c.categories[i % c.categories.length],
    pricingModel: "per_call",
    tags: [],
    tiers: [{ id: "unit", name: "unit", priceCents: 1 + (i % 5000), unit: "call", includedUnits: null, sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" } }],
    negotiation: { floorPct: 80, counterStepPct: 20 },
    status: "active",
    ratingSum: 0,
    ratingCount: 0,
    createdAt: new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString()
  }) as unknown as ServiceRecord

const vacuum = Effect.gen(function* () {
  const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
  if (Option.isSome(sql)) yield* sql.value`VACUUM ANALYZE`
})

const run = (command: Command) =>
  Effect.gen(function* () {
    const now = Date.now()
    const config = yield* AppConfig
    const concurrency = config.storage === "postgres" ? 8 : 1
    if (command.cmd === "purchases") {
      const commerce = yield* CommerceStore
      yield* Effect.forEach(
        Array.from({ length: command.n }, (_, i) => i),
        (i) => {
          const tx = purchase(command, i, now)
          return commerce.insertTransaction(tx, { transactionId: tx.id, serviceId: tx.serviceId, tierId: tx.tierId, success: true, latencyMs: 1, output: null, error: null, deliveredAt: tx.createdAt })
        },
        { concurrency, discard: true }
      )
    } else {
      const catalog = yield* CatalogStore
      yield* Effect.forEach(Array.from({ length: command.n }, (_, i) => service(command, i, now)), (s) => catalog.insert(s), { concurrency, discard: true })
    }
    yield* vacuum
  })

const program = Effect.gen(function* () {
  const config = yield* loadConfig
  const ConfigLive = Layer.succeed(AppConfig, config)
  const context = yield* Layer.build(ServerLive(config.port).pipe(Layer.provideMerge(ConfigLive)))
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  while (true) {
    const next = yield* Effect.promise(() => lines.next())
    if (next.done) return
    const started = performance.now()
    const outcome = yield* run(JSON.parse(String(next.value)) as Command).pipe(Effect.provideContext(context), Effect.result)
    process.stdout.write(
      `${JSON.stringify(outcome._tag === "Success" ? { ok: true, seconds: (performance.now() - started) / 1000 } : { ok: false, error: String(outcome.failure) })}\n`
    )
  }
}).pipe(
  Effect.scoped,
  Effect.provide(Layer.unwrap(Effect.map(loadConfig, (config) => LoggerLive.pipe(Layer.provide(Layer.succeed(AppConfig, config)))))),
  Effect.withTracerEnabled(false)
)

NodeRuntime.runMain(program)
