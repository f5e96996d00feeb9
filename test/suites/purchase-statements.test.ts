// What a purchase costs the database, counted on the wire (test/fixtures/statementProxy.ts: every
// statement the client sends, BEGIN and COMMIT included): a buy of a simulated service, and an agent
// seller's buy plus its delivery, each a fixed number of statements whatever the buyer's or the
// seller's history. A change that adds a round trip to either path fails here; the failure lists
// the statements. docs/architecture.md walks them one by one.
//
// Postgres only (the embedded store runs the same SQL); without a server the suite skips and says
// so, under CI it fails (test/fixtures/db.ts).
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { PgStorageLive } from "../../src/layers/stores.js"
import { commerceStack, fundedBuyer, liveSellerAgent, sellerWith, serviceBody, tier } from "../fixtures/money.js"
import { freshDatabase, postgresSkipReason } from "../fixtures/db.js"
import { countStatements, type StatementLog, statementProxy } from "../fixtures/statementProxy.js"

class Wire extends Context.Service<Wire, StatementLog>()("test/Wire") {}

/** The commerce services over a fresh database reached through the counting proxy; no workers. */
const stack = Layer.unwrap(
  Effect.gen(function* () {
    const { url } = yield* freshDatabase
    const proxy = yield* statementProxy(url)
    const storage = PgStorageLive.pipe(
      Layer.provideMerge(
        AppConfig.test({ storage: "postgres", databaseUrl: Option.some(Redacted.make(proxy.url)), workers: false })
      )
    )
    return Orders.layer.pipe(
      Layer.provideMerge(commerceStack(storage)),
      Layer.provideMerge(Layer.succeed(Wire, proxy.log))
    )
  })
)

const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flatMap(Wire, (log) => countStatements(log, effect))

describe.skipIf(postgresSkipReason !== undefined)(
  `purchase statements [postgres]${postgresSkipReason ? ` — ${postgresSkipReason}` : ""}`,
  () => {
    layer(stack, { timeout: "60 seconds" })((it) => {
      it.effect("a buy of a simulated service: BEGIN, open, write, COMMIT — the same with a long history", () =>
        Effect.gen(function* () {
          const seller = yield* sellerWith("Simulated", [tier("basic", 100)])
          const buyer = yield* fundedBuyer(1_000_000)
          const commerce = yield* Commerce
          const buy = counted(
            commerce.buy({ caller: buyer.caller, serviceId: seller.service.id, tierId: "basic", input: "x" })
          )
          const first = yield* buy
          expect(first.result.status).toBe("completed")
          for (let i = 0; i < 50; i++) yield* buy
          const later = yield* buy
          expect(later.statements, later.ran).toBe(4)
        })
      )

      it.effect(
        "an agent seller's buy and its delivery: 4 statements each, 8 in all, the same with a long history",
        () =>
          Effect.gen(function* () {
            const seller = yield* liveSellerAgent("pull seller")
            const service = yield* Effect.flatMap(Catalog, (c) =>
              c.publish(seller.caller, serviceBody("Pulled", [tier("basic", 100)], "testing", { mode: "pull" }))
            )
            const buyer = yield* fundedBuyer(1_000_000)
            const commerce = yield* Commerce
            const orders = yield* Orders
            const sale = Effect.gen(function* () {
              const bought = yield* counted(
                commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "basic", input: "x" })
              )
              expect(bought.result.status).toBe("pending")
              const delivered = yield* counted(
                orders.deliver(seller.agentId, bought.result.transaction!.id, { output: { ok: true } })
              )
              expect(delivered.result.status).toBe("delivered")
              return { buy: bought, deliver: delivered }
            })
            yield* sale
            for (let i = 0; i < 50; i++) yield* sale
            const later = yield* sale
            expect(later.buy.statements, later.buy.ran).toBe(4)
            expect(later.deliver.statements, later.deliver.ran).toBe(4)
          })
      )

      it.effect(
        "ten sellers' lists waiting 2.5 s for their next order cost one read each and the process's one reader's, not a read a second each",
        () =>
          TestClock.withLive(
            Effect.gen(function* () {
              const sellers = yield* Effect.forEach(
                Array.from({ length: 10 }, (_, i) => i),
                (i) => Effect.map(liveSellerAgent(`waiting seller ${i}`), (s) => s.agentId)
              )
              const orders = yield* Orders
              const waited = yield* counted(
                Effect.forEach(sellers, (seller) => orders.list(seller, { status: "pending", waitMs: 2_500 }), {
                  concurrency: "unbounded"
                })
              )
              expect(waited.result.every((page) => page.orders.length === 0)).toBe(true)
              // Each list's first read, then the reader's one read a second for all of them (≤ 4 in 2.5 s).
              // A list that read the store every second itself would have cost 10 × 3.
              expect(waited.statements, waited.ran).toBeLessThanOrEqual(10 + 4)
            })
          ),
        30_000
      )
    })
  }
)
