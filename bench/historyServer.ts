// The server for `npm run bench -- --history` (bench/historyHttp.ts): the app exactly as
// src/main.ts assembles it (config from the environment, ServerLive), plus a command line on stdin
// that seeds its own storage through the stores the app uses, so the seeded rows live where the
// server reads them on every storage (the memory store has no file another process could fill):
//   {"cmd":"purchases","agentId":…,"n":…,…}  n completed purchases through PurchaseStore.insertTransaction
//   {"cmd":"services","n":…}                 n listed services through CatalogStore.insert
// each followed by VACUUM ANALYZE on the SQL stores (as autovacuum would after a bulk load; PGlite
// has none). Each command answers one JSON line on stdout. Bundled by bench/run.ts like dist/main.js.
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { createInterface } from "node:readline"
import { loadConfig } from "../src/layers/config.js"
import { LoggerLive, ServerLive } from "../src/layers/app.js"
import type { ServiceRecord } from "../src/schema/commerce/services.js"
import type { TransactionRecord } from "../src/schema/commerce/transactions.js"
import { AppConfig } from "../src/services/platform/AppConfig.js"
import { CatalogStore } from "../src/services/commerce/CatalogStore.js"
import { PurchaseStore } from "../src/services/purchases/PurchaseStore.js"
import { marketService, seededPurchase } from "./seedRows.js"

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

const purchase = (c: PurchasesCommand, i: number, now: number): TransactionRecord =>
  seededPurchase(
    {
      id: `tx_seed_${c.agentId}_${i}`,
      buyerAgentId: c.agentId,
      sellerAgentId: c.sellerAgentId,
      serviceId: c.serviceId,
      serviceName: c.serviceName,
      category: c.category,
      tierId: c.tierId,
      priceCents: c.priceCents
    },
    { i, n: c.n, days: c.days, now }
  )

/** A grown marketplace: the seed's categories in turn, 1 in 100 services about forecasts, prices 1–5000 cents. */
const service = (c: ServicesCommand, i: number, now: number): ServiceRecord =>
  marketService(i, {
    category: c.categories[i % c.categories.length],
    description: i % 100 === 7 ? `weekly demand forecast ${i % 997}` : `reports and analyses ${i % 997}`,
    now
  })

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
      const commerce = yield* PurchaseStore
      yield* Effect.forEach(
        Array.from({ length: command.n }, (_, i) => i),
        (i) => {
          const tx = purchase(command, i, now)
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
        { concurrency, discard: true }
      )
    } else {
      const catalog = yield* CatalogStore
      yield* Effect.forEach(
        Array.from({ length: command.n }, (_, i) => service(command, i, now)),
        (s) => catalog.insert(s),
        { concurrency, discard: true }
      )
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
    const outcome = yield* run(JSON.parse(String(next.value)) as Command).pipe(
      Effect.provideContext(context),
      Effect.result
    )
    process.stdout.write(
      `${JSON.stringify(outcome._tag === "Success" ? { ok: true, seconds: (performance.now() - started) / 1000 } : { ok: false, error: String(outcome.failure) })}\n`
    )
  }
}).pipe(
  Effect.scoped,
  Effect.provide(
    Layer.unwrap(Effect.map(loadConfig, (config) => LoggerLive.pipe(Layer.provide(Layer.succeed(AppConfig, config)))))
  ),
  Effect.withTracerEnabled(false)
)

NodeRuntime.runMain(program)
