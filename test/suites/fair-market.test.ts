// A fair market for sellers (docs/fulfilment.md "Judged by what it controls", docs/reputation.md), on
// every storage, each from what a seller is promised:
// - a push seller is judged on its own time only: a burst of buys queued by the platform does not
//   count as the seller's latency, every order the platform offers it can be answered in time by a
//   seller within its promised p95, and an order that expires without ever having been offered is
//   refunded to the buyer and never counted against the seller;
// - a pull seller's latency runs from when its list showed it the order;
// - the promise a sale was made under binds both sides: the SLA report and the dispute rule judge
//   each delivery by the p95 it was sold with; a tier changed since applies to later sales only.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeNodeTransport } from "../../src/layers/webhooks/WebhookTransport.node.js"
import { escrowAccount, walletAccount } from "../../src/schema/ledger/ledger.js"
import type { Order } from "../../src/schema/orders/orders.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { NoNegotiatedPrices } from "../../src/services/purchases/NegotiatedPrices.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { PushWorkerLive } from "../../src/services/purchases/PushWorker.js"
import { Ids } from "../../src/services/platform/Db.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"
import { WebhookTransport } from "../../src/services/webhooks/WebhookTransport.js"
import { commerceServices, commerceStack, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import type { StorageCase } from "../fixtures/db.js"
import { startPushSeller } from "../fixtures/pushSeller.js"
import { forEachStorage } from "../fixtures/suite.js"

const PRICE = 100
/** The wall clock, for the layer's fibers (the dispatcher, the expiry sweeper): pushes go over real sockets. */
const LiveClock = Layer.effect(Clock.Clock, TestClock.withLive(Clock.clockWith(Effect.succeed)))

const pushStack = (storage: ReturnType<StorageCase["layer"]>) =>
  PushWorkerLive.pipe(
    Layer.provideMerge(commerceServices),
    Layer.provideMerge(Orders.layer),
    Layer.provideMerge(NoNegotiatedPrices),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(SagaOrderOwnersLive),
    Layer.provideMerge(storage),
    Layer.provideMerge(Ids.Live),
    Layer.provideMerge(
      Layer.succeed(WebhookTransport, makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 8_000 }))
    ),
    Layer.provide(LiveClock)
  )

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))
const sla = (p95LatencyMs: number) => ({ uptimePct: 90, p95LatencyMs, supportWindow: "24/7" })

forEachStorage(
  "a fair market: queue time is not the seller's",
  pushStack,
  (it) => {
    it.effect(
      "20 buys at once of a push seller that answers in 3 s of its promised 5: every order offered is answered in time and judged by the seller's 3 s; the rest are refunded and not counted",
      () =>
        TestClock.withLive(
          Effect.scoped(
            Effect.gen(function* () {
              const server = yield* Effect.acquireRelease(
                Effect.promise(() =>
                  startPushSeller(
                    () =>
                      new Promise((resolve) =>
                        setTimeout(() => resolve({ status: 200, body: { status: "delivered", output: "done" } }), 3_000)
                      )
                  )
                ),
                (s) => Effect.promise(() => s.close())
              )
              const { caller } = yield* liveSellerAgent("honest push seller")
              const service = yield* Effect.flatMap(Catalog, (c) =>
                c.publish(
                  caller,
                  serviceBody("Honest", [{ ...tier("basic", PRICE), sla: sla(5_000) }], "testing", {
                    mode: "push",
                    url: server.url
                  })
                )
              )
              server.secret = service.fulfilmentSecret
              const buyer = yield* fundedBuyer(10_000)
              const commerce = yield* Commerce
              const orders = yield* Orders
              // 20 buys at once; the dispatcher pushes them 4 at a time, each buy waiting for its answer.
              const bought = yield* Effect.forEach(
                Array.from({ length: 20 }, (_, i) => i),
                (i) => commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "basic", input: i }),
                { concurrency: "unbounded" }
              )
              const ids = bought.map((b) => b.transaction!.id)
              // Every order ends (the deadline is 10 s from the buys).
              let ended: ReadonlyArray<Order> = []
              for (let i = 0; i < 80; i++) {
                ended = yield* Effect.forEach(ids, (id) => orders.get(buyer.agentId, id))
                if (ended.every((o) => o.status !== "pending")) break
                yield* Effect.sleep("250 millis")
              }
              const delivered = ended.filter((o) => o.status === "delivered")
              const expired = ended.filter((o) => o.status === "expired")
              expect(delivered.length + expired.length).toBe(20)
              expect(delivered.length).toBeGreaterThanOrEqual(4)
              // Judged on its own time: each delivered order's latency is the seller's 3 s, not the queue's.
              for (const o of delivered) {
                expect(o.latencyMs!).toBeGreaterThanOrEqual(2_900)
                expect(o.latencyMs!).toBeLessThan(5_000)
              }
              // Every order the platform offered was answered before its deadline: no work done and not paid.
              expect(ended.filter((o) => (o.push?.attempts ?? 0) > 0 && o.status !== "delivered")).toEqual([])
              expect(server.pushes.length).toBe(delivered.length)
              // The orders never offered are refunded in full and not counted against the seller.
              for (const o of expired) {
                expect(o.offeredAt ?? null).toBeNull()
                expect(yield* balance(escrowAccount(o.id))).toBe(0)
              }
              expect(yield* balance(walletAccount(buyer.agentId))).toBe(10_000 - delivered.length * PRICE)
              const report = yield* Effect.flatMap(Catalog, (c) => c.sla(service.id))
              expect(report.tiers[0]).toMatchObject({
                status: "compliant",
                deliveries: delivered.length,
                successes: delivered.length
              })
            })
          )
        ),
      60_000
    )
  },
  {},
  {}
)

const pullStack = (storage: ReturnType<StorageCase["layer"]>) =>
  Layer.mergeAll(Orders.layer).pipe(Layer.provideMerge(commerceStack(storage)))

forEachStorage("a fair market: the promise sold binds both sides", pullStack, (it) => {
  const pullSeller = (p95LatencyMs: number) =>
    Effect.gen(function* () {
      const { agentId, caller } = yield* liveSellerAgent("pull seller")
      const service = yield* Effect.flatMap(Catalog, (c) =>
        c.publish(
          caller,
          serviceBody("Pulled", [{ ...tier("basic", PRICE), sla: sla(p95LatencyMs) }], "testing", { mode: "pull" })
        )
      )
      return { agentId, caller, service }
    })

  it.effect("a pull seller's latency runs from when its list showed it the order", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-11-28T10:00:00.000Z"))
      const seller = yield* pullSeller(5_000)
      const buyer = yield* fundedBuyer(1_000)
      const bought = yield* Effect.flatMap(Commerce, (c) =>
        c.buy({ caller: buyer.caller, serviceId: seller.service.id, tierId: "basic", input: "x" })
      )
      const orders = yield* Orders
      yield* TestClock.adjust(4_000) // in the platform's queue, not yet seen by the seller
      const listed = yield* orders.list(seller.agentId, { status: "pending" })
      expect(listed.orders.map((o) => o.offeredAt)).toEqual(["2026-11-28T10:00:04.000Z"])
      yield* TestClock.adjust(1_500)
      const delivered = yield* orders.deliver(seller.agentId, bought.transaction!.id, { output: "ok" })
      expect(delivered.latencyMs).toBe(1_500)
    })
  )

  it.effect(
    "the SLA report and the dispute rule judge a delivery by the p95 it was sold with; a tier changed since applies to later sales",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-28T11:00:00.000Z"))
        const seller = yield* pullSeller(1_000)
        const buyer = yield* fundedBuyer(10_000)
        const commerce = yield* Commerce
        const orders = yield* Orders
        const catalog = yield* Catalog
        const sale = Effect.gen(function* () {
          const bought = yield* commerce.buy({
            caller: buyer.caller,
            serviceId: seller.service.id,
            tierId: "basic",
            input: "x"
          })
          yield* orders.list(seller.agentId, { status: "pending" })
          yield* TestClock.adjust(2_500)
          yield* orders.deliver(seller.agentId, bought.transaction!.id, { output: "late" })
          return bought.transaction!.id
        })
        // Sold with a p95 of 1 s, delivered in 2.5 s: breached.
        const first = yield* sale
        expect((yield* catalog.sla(seller.service.id)).tiers[0]).toMatchObject({
          status: "breached",
          latencyCompliant: false
        })
        // The seller raises the tier's p95 to an hour: the sale made before is still judged by 1 s.
        yield* catalog.update(seller.caller, seller.service.id, {
          tiers: [{ ...tier("basic", PRICE), sla: sla(3_600_000) }]
        } as never)
        expect((yield* catalog.sla(seller.service.id)).tiers[0]).toMatchObject({
          status: "breached",
          latencyCompliant: false
        })
        // Contested, the dispute of that sale is refunded by the latency rule: 2.5 s > the 1 s it was sold with.
        const disputes = yield* Disputes
        const opened = yield* disputes.open(buyer.agentId, { transactionId: first, reason: "too slow" })
        yield* disputes.respond(seller.agentId, opened.id, { action: "contest", note: "within the tier" })
        yield* TestClock.adjust(8 * 86_400_000)
        yield* disputes.resolveDue
        expect((yield* disputes.get(buyer.agentId, opened.id)).status).toBe("resolved_refunded")
        // A later sale is judged by the hour it was sold with: 2.5 s is within it.
        const tx = (yield* commerce.getTransaction(buyer.agentId, yield* sale)).sla
        expect(tx).toEqual({ p95LatencyMs: 3_600_000, uptimePct: 90 })
      })
  )
})
