// What a saga's buyer and an agent seller are promised when the saga buys a service its seller
// fulfils itself (docs/saga.md, docs/fulfilment.md), on every storage: the seller sees the saga's
// order like any other and its output is what the buyer gets; the seller is paid 85 % once, on
// delivery, from the saga's escrow (no second hold); a failure or a missed deadline gives the buyer
// everything back and leaves no escrow; the saga shows it is waiting on the seller; the seller's
// answer racing the saga's deadline ends one way only. The platform's simulated sellers keep their
// instant, simulated delivery.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { escrowAccount, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { orderDeadlineMs } from "../../src/schema/orders/orders.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Events } from "../../src/services/events/Events.js"
import { Ledger, LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { NegotiatedPricesLive } from "../../src/services/negotiation/NegotiatedPricesLive.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { OrderStore } from "../../src/services/purchases/OrderStore.js"
import { Ids } from "../../src/services/platform/Db.js"
import { AnalyticsStore } from "../../src/services/reputation/AnalyticsStore.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { SagaStore } from "../../src/services/saga/SagaStore.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { commerceServices, fundedBuyer, liveSellerAgent, sellerWith, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"

const PRICE = 100
/** The tier's p95 is 1 s: the seller has orderDeadlineMs = 10 s. */
const DEADLINE_MS = orderDeadlineMs(tier("basic", PRICE))

const stack = (storage: Parameters<Parameters<typeof forEachStorage>[1]>[0]) =>
  Layer.mergeAll(commerceServices, Orders.layer, Sagas.layer).pipe(
    Layer.provideMerge(NegotiatedPricesLive),
    Layer.provideMerge(Negotiations.layer),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(SagaOrderOwnersLive),
    Layer.provideMerge(storage),
    Layer.provideMerge(Ids.Live)
  )

/** A seller agent of an ordinary account with a pull service (what an agent publishes by default). */
const pullSeller = Effect.gen(function* () {
  const { agentId, caller } = yield* liveSellerAgent("pull seller")
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(caller, serviceBody("Uppercase", [tier("basic", PRICE)], "testing", { mode: "pull" }))
  )
  return { agentId, service }
})

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))
const booksClean = Effect.map(
  Effect.flatMap(Ledger, (l) => l.check),
  (c) => c.ok
)
const noDrift = Effect.gen(function* () {
  const counters = yield* Effect.flatMap(AnalyticsStore, (a) => a.counterDrift)
  const spend = yield* Effect.flatMap(WalletStore, (w) => w.spendDrift)
  return [...counters, ...spend]
})
const stepsOf = (saga: { readonly steps: ReadonlyArray<{ readonly name: string; readonly status: string }> }) =>
  Object.fromEntries(saga.steps.map((s) => [s.name, s.status]))

/** A pull seller, a buyer with 1 000 cents, and a saga of the buyer's waiting on the seller's order. */
const waiting = Effect.gen(function* () {
  const seller = yield* pullSeller
  const buyer = yield* fundedBuyer(1_000)
  const sagas = yield* Sagas
  const saga = yield* sagas.start(buyer.caller, { serviceId: seller.service.id, tierId: "basic", input: "hello" })
  return { seller, buyer, saga, orderId: saga.transactionId! }
})

forEachStorage(
  "orders placed by sagas",
  stack,
  (it) => {
    it.effect("the seller sees the saga's order; the saga waits on it with the price held once, in its escrow", () =>
      Effect.gen(function* () {
        const { seller, buyer, saga, orderId } = yield* waiting
        expect(saga).toMatchObject({ status: "running", currentStep: "deliver", output: null })
        expect(stepsOf(saga)).toEqual({
          quote: "succeeded",
          escrow: "succeeded",
          deliver: "running",
          settle: "pending",
          confirm: "pending"
        })
        expect(saga.steps.find((s) => s.name === "deliver")?.detail).toContain(orderId)
        const page = yield* Effect.flatMap(Orders, (o) => o.list(seller.agentId, {}))
        expect(page.orders).toHaveLength(1)
        expect(page.orders[0]).toMatchObject({ id: orderId, input: "hello", priceCents: PRICE, status: "pending" })
        const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 10))
        expect(events.find((e) => e.type === "order.created")?.data).toMatchObject({ orderId, input: "hello" })
        // One hold: the saga's escrow; the order holds nothing of its own, and the limits count the price once.
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
        expect(yield* balance(escrowAccount(saga.id))).toBe(PRICE)
        expect(yield* balance(escrowAccount(orderId))).toBe(0)
        expect(yield* Effect.flatMap(WalletStore, (w) => w.heldCents(buyer.agentId))).toBe(PRICE)
        // The buyer sees the purchase pending, under the id the saga will settle it by.
        const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
        expect(tx).toMatchObject({ status: "pending", sellerCents: 0, delivery: null })
        // Nothing moves while the seller has not answered, however often the saga is looked at.
        yield* Effect.flatMap(Sagas, (s) => s.runDue())
        expect((yield* Effect.flatMap(Sagas, (s) => s.get(buyer.agentId, saga.id))).currentStep).toBe("deliver")
        expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
        expect(yield* booksClean).toBe(true)
        expect(yield* noDrift).toEqual([])
      })
    )

    it.effect("the seller's output is what the saga's buyer gets; the seller is paid 85 % once", () =>
      Effect.gen(function* () {
        const { seller, buyer, saga, orderId } = yield* waiting
        const orders = yield* Orders
        const sagas = yield* Sagas
        const fees = yield* balance(PLATFORM_FEES)
        const delivered = yield* orders.deliver(seller.agentId, orderId, { output: { text: "HELLO" } })
        expect(delivered).toMatchObject({ status: "delivered", output: { text: "HELLO" } })
        // The answer woke the saga: it is due now, for a worker in any process.
        const woken = yield* Effect.flatMap(SagaStore, (s) => s.get(saga.id))
        expect(Date.parse(woken!.nextRunAt!)).toBeLessThanOrEqual(yield* Clock.currentTimeMillis)
        yield* sagas.runDue()
        const done = yield* sagas.get(buyer.agentId, saga.id)
        expect(done).toMatchObject({
          status: "completed",
          output: { text: "HELLO" },
          transactionId: orderId,
          settlement: { priceCents: PRICE, sellerCents: 85, feeCents: 15 }
        })
        expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
        expect((yield* balance(PLATFORM_FEES)) - fees).toBe(15)
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
        expect(tx).toMatchObject({ status: "completed", sellerCents: 85, feeCents: 15 })
        expect(tx.delivery).toMatchObject({ success: true, output: { text: "HELLO" } })

        // A second deliver is the same answer: no second payment, the saga stays as it ended.
        expect(yield* orders.deliver(seller.agentId, orderId, { output: "again" })).toEqual(delivered)
        yield* sagas.runDue()
        expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
        expect((yield* sagas.get(buyer.agentId, saga.id)).output).toEqual({ text: "HELLO" })
        expect(yield* Effect.flatMap(WalletStore, (w) => w.heldCents(buyer.agentId))).toBe(0)
        expect(yield* booksClean).toBe(true)
        expect(yield* noDrift).toEqual([])
      })
    )

    it.effect(
      "the seller fails: the buyer gets everything back, nothing stays in escrow, the failure is the seller's",
      () =>
        Effect.gen(function* () {
          const { seller, buyer, saga, orderId } = yield* waiting
          const orders = yield* Orders
          const sagas = yield* Sagas
          yield* orders.fail(seller.agentId, orderId, { error: "out of capacity" })
          yield* sagas.runDue()
          const ended = yield* sagas.get(buyer.agentId, saga.id)
          expect(ended).toMatchObject({ status: "compensated", transactionId: orderId, settlement: null })
          expect(ended.failure?.step).toBe("deliver")
          expect(ended.failure?.reason).toContain("out of capacity")
          expect(stepsOf(ended)).toEqual({
            quote: "compensated",
            escrow: "compensated",
            deliver: "failed",
            settle: "skipped",
            confirm: "skipped"
          })
          expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
          expect(yield* balance(escrowAccount(saga.id))).toBe(0)
          expect(yield* balance(escrowAccount(orderId))).toBe(0)
          expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
          const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
          expect(tx).toMatchObject({ status: "failed", sellerCents: 0 })
          expect(tx.delivery).toMatchObject({ success: false })
          const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer.agentId, 50))
          expect(events.find((e) => e.type === "transaction.failed")?.data).toMatchObject({ transactionId: orderId })
          // The order's outcome stands: answering otherwise now is refused, and nothing moves.
          const late = yield* Effect.flip(orders.deliver(seller.agentId, orderId, { output: "too late" }))
          expect(late._tag).toBe("OrderClosed")
          expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
          expect(yield* booksClean).toBe(true)
          expect(yield* noDrift).toEqual([])
        })
    )

    it.effect("a delivered saga driven by many workers at once settles once: the seller paid 85 % once", () =>
      Effect.gen(function* () {
        const { seller, buyer, saga, orderId } = yield* waiting
        const sagas = yield* Sagas
        yield* Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, orderId, { output: "raced" }))
        // Eight drives of the one saga at once (workers of several processes waking on the same answer).
        const ended = yield* Effect.all(
          Array.from({ length: 8 }, () => sagas.drive(saga.id)),
          { concurrency: 8 }
        )
        expect(ended.every((r) => r.status === "completed")).toBe(true)
        expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        expect(yield* booksClean).toBe(true)
        expect(yield* noDrift).toEqual([])
      })
    )

    it.effect("a missed deadline refunds in full; the seller hears its order expired and cannot deliver it", () =>
      Effect.gen(function* () {
        const { seller, buyer, saga, orderId } = yield* waiting
        const sagas = yield* Sagas
        yield* TestClock.adjust(DEADLINE_MS - 1)
        yield* sagas.runDue() // not due yet: still waiting
        expect((yield* sagas.get(buyer.agentId, saga.id)).currentStep).toBe("deliver")
        yield* TestClock.adjust(1)
        yield* sagas.runDue()
        const ended = yield* sagas.get(buyer.agentId, saga.id)
        expect(ended).toMatchObject({ status: "compensated", failure: { step: "deliver" } })
        expect(ended.failure?.reason).toContain("deadline")
        const order = yield* Effect.flatMap(Orders, (o) => o.get(seller.agentId, orderId))
        expect(order.status).toBe("expired")
        const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 10))
        expect(events.some((e) => e.type === "order.expired")).toBe(true)
        const late = yield* Effect.flip(
          Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, orderId, { output: "late" }))
        )
        expect(late._tag).toBe("OrderClosed")
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
        expect(yield* booksClean).toBe(true)
        expect(yield* noDrift).toEqual([])
      })
    )

    it.effect("the order sweeper expiring a saga's order ends the saga the same way", () =>
      Effect.gen(function* () {
        const { buyer, saga } = yield* waiting
        yield* TestClock.adjust(DEADLINE_MS)
        yield* Effect.flatMap(Orders, (o) => o.expireDue)
        expect((yield* Effect.flatMap(OrderStore, (o) => o.get(saga.transactionId!)))?.status).toBe("expired")
        yield* Effect.flatMap(Sagas, (s) => s.runDue())
        expect((yield* Effect.flatMap(Sagas, (s) => s.get(buyer.agentId, saga.id))).status).toBe("compensated")
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        expect(yield* booksClean).toBe(true)
      })
    )

    it.effect("a delivery just before the deadline stands, even when the saga wakes after it", () =>
      Effect.gen(function* () {
        const { seller, buyer, saga, orderId } = yield* waiting
        yield* TestClock.adjust(DEADLINE_MS - 1)
        // The saga looks at its order while the seller answers: both lock the saga, then the order.
        yield* Effect.all(
          [
            Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, orderId, { output: "just in time" })),
            Effect.flatMap(Sagas, (s) => s.advance(saga.id))
          ],
          { concurrency: "unbounded" }
        )
        yield* TestClock.adjust(60_000)
        yield* Effect.flatMap(Sagas, (s) => s.runDue())
        const ended = yield* Effect.flatMap(Sagas, (s) => s.get(buyer.agentId, saga.id))
        expect(ended).toMatchObject({ status: "completed", output: "just in time" })
        expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
        expect(yield* booksClean).toBe(true)
      })
    )

    it.effect("the seller delivering while the saga times out: one outcome, never paid and refunded", () =>
      Effect.gen(function* () {
        const { seller, buyer, saga, orderId } = yield* waiting
        yield* TestClock.adjust(DEADLINE_MS)
        const [answer] = yield* Effect.all(
          [
            Effect.exit(Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, orderId, { output: "racing" }))),
            Effect.flatMap(Sagas, (s) => s.runDue())
          ],
          { concurrency: "unbounded" }
        )
        yield* Effect.flatMap(Sagas, (s) => s.runDue())
        const ended = yield* Effect.flatMap(Sagas, (s) => s.get(buyer.agentId, saga.id))
        const paid = yield* balance(walletAccount(seller.agentId))
        const buyerLeft = yield* balance(walletAccount(buyer.agentId))
        // The deadline has passed: whichever ran first, the order expired and the buyer has it all back.
        expect(answer._tag).toBe("Failure")
        expect(ended.status).toBe("compensated")
        expect([paid, buyerLeft]).toEqual([0, 1_000])
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        const entries = yield* Effect.flatMap(LedgerStore, (l) => l.entriesByReference(saga.id))
        expect(entries.map((e) => e.kind).sort()).toEqual(["escrow_hold", "escrow_release"])
        expect(yield* booksClean).toBe(true)
      })
    )

    it.effect("a saga of one of the platform's simulated sellers delivers at once, without an order", () =>
      Effect.gen(function* () {
        const seller = yield* sellerWith("Simulated", [tier("basic", PRICE)])
        const buyer = yield* fundedBuyer(1_000)
        const saga = yield* Effect.flatMap(Sagas, (s) =>
          s.start(buyer.caller, { serviceId: seller.service.id, tierId: "basic", input: "hello" })
        )
        expect(saga).toMatchObject({ status: "completed", output: { simulated: true } })
        expect(yield* Effect.flatMap(OrderStore, (o) => o.get(saga.transactionId!))).toBeUndefined()
        expect((yield* Effect.flatMap(Orders, (o) => o.list(seller.agentId, {}))).orders).toEqual([])
        expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
      })
    )
  },
  // The suite drives the sweeps and sagas itself, on the test clock.
  { workers: false }
)
