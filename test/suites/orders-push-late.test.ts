// A push seller's inline answer that arrives after its order closed changes nothing (docs/fulfilment.md
// "Answers are idempotent"), on every storage: the seller answered through the API while the push was
// in flight, or the deadline passed meanwhile (swept or not yet): the money moved once, the first
// outcome stands. The real dispatcher's attempt (PushDispatcher.attempt) over a seller endpoint the
// test holds: the push reaches the seller and its answer is given when the test says, so the order
// closes in between, under the suite's TestClock.
import { expect } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Queue } from "effect"
import { TestClock } from "effect/testing"
import { escrowAccount, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { PushDispatcher } from "../../src/services/purchases/PushWorker.js"
import {
  WebhookTransport,
  type WebhookRequest,
  type WebhookResponse
} from "../../src/services/webhooks/WebhookTransport.js"
import type { StorageCase } from "../fixtures/db.js"
import { commerceStack, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const PRICE = 100

/** A push that reached the seller, waiting for the answer the test gives it. */
interface Held {
  readonly request: WebhookRequest
  readonly answer: Deferred.Deferred<WebhookResponse>
}

/** The seller's endpoint: every push is held until the test answers it. */
class SellerLine extends Context.Service<SellerLine, { readonly next: Effect.Effect<Held> }>()("test/SellerLine") {}

const HeldSeller = Layer.effectContext(
  Effect.gen(function* () {
    const line = yield* Queue.unbounded<Held>()
    const transport = WebhookTransport.of({
      check: () => Effect.void,
      send: (request) =>
        Effect.gen(function* () {
          const answer = yield* Deferred.make<WebhookResponse>()
          yield* Queue.offer(line, { request, answer })
          return yield* Deferred.await(answer)
        }),
      // The test answers each push itself, within seconds; 25 s + the margin keeps the 30 s lease these
      // cases were written under, so no second attempt starts while one is held.
      timeoutMs: 25_000
    })
    return Context.make(SellerLine, SellerLine.of({ next: Queue.take(line) })).pipe(
      Context.add(WebhookTransport, transport)
    )
  })
)

const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  PushDispatcher.layer.pipe(
    Layer.provideMerge(Orders.layer),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(commerceStack(storage)),
    Layer.provideMerge(HeldSeller)
  )

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))
const entries = (orderId: string) =>
  Effect.map(
    Effect.flatMap(LedgerStore, (l) => l.entriesByReference(orderId)),
    (es) => es.map((e) => e.kind).sort()
  )
const inline = (body: unknown): WebhookResponse => ({
  ok: true,
  status: 200,
  durationMs: 5,
  error: null,
  body: JSON.stringify(body)
})

/**
 * A push seller (p95 1 s: a 10 s deadline) and a funded buyer with one pending order, whose push is
 * in flight: it reached the seller, whose answer waits for `answer`. `attempt` ends when it was acted on.
 */
const inFlight = Effect.gen(function* () {
  const { agentId, caller } = yield* liveSellerAgent("push seller")
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(
      caller,
      serviceBody("Pushed", [tier("basic", PRICE)], "testing", { mode: "push", url: "https://seller.example/o" })
    )
  )
  const buyer = yield* fundedBuyer(1_000)
  const bought = yield* Effect.flatMap(Commerce, (c) =>
    c.buy({ caller: buyer.caller, serviceId: service.id, tierId: "basic", input: "x" })
  )
  const orderId = bought.transaction!.id
  const orders = yield* Orders
  const due = yield* orders.get(agentId, orderId)
  const attempt = yield* Effect.forkChild(Effect.flatMap(PushDispatcher, (d) => d.attempt(due)))
  const held = yield* Effect.flatMap(SellerLine, (l) => l.next)
  // A helper, not a test: a push of another order is a broken fixture, so it dies (the test fails).
  if (held.request.headers["webhook-id"] !== orderId)
    return yield* Effect.die(`the seller was pushed ${held.request.headers["webhook-id"]}, not ${orderId}`)
  const answer = (body: unknown) => Effect.andThen(Deferred.succeed(held.answer, inline(body)), Fiber.join(attempt))
  return { seller: agentId, buyer: buyer.agentId, orderId, orders, answer }
})

forEachStorage(
  "a push answer after the order closed",
  stack,
  (it) => {
    it.effect("the seller failed it through the API first: the push's later delivery changes nothing", () =>
      Effect.gen(function* () {
        const { seller, buyer, orderId, orders, answer } = yield* inFlight
        const failed = yield* orders.fail(seller, orderId, { error: "changed my mind" })
        expect(failed.status).toBe("failed")
        yield* answer({ status: "delivered", output: "too late" })
        expect(yield* orders.get(seller, orderId)).toMatchObject({
          status: "failed",
          error: "changed my mind",
          output: null
        })
        expect(yield* balance(walletAccount(buyer))).toBe(1_000)
        expect(yield* balance(walletAccount(seller))).toBe(0)
        expect(yield* balance(escrowAccount(orderId))).toBe(0)
        expect(yield* entries(orderId)).toEqual(["escrow_hold", "escrow_release"])
        const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer, orderId))
        expect(tx).toMatchObject({ status: "failed", delivery: { success: false, error: "changed my mind" } })
      })
    )

    it.effect(
      "the seller delivered through the API first: the push's later failure neither refunds nor changes the output",
      () =>
        Effect.gen(function* () {
          const { seller, buyer, orderId, orders, answer } = yield* inFlight
          yield* orders.deliver(seller, orderId, { output: "first" })
          yield* answer({ status: "failed", error: "second thoughts" })
          expect(yield* orders.get(seller, orderId)).toMatchObject({
            status: "delivered",
            output: "first",
            error: null
          })
          expect(yield* balance(walletAccount(buyer))).toBe(1_000 - PRICE)
          expect(yield* balance(walletAccount(seller))).toBe(85)
          expect(yield* balance(escrowAccount(orderId))).toBe(0)
          expect(yield* entries(orderId)).toEqual(["escrow_hold", "escrow_settle"])
        })
    )

    it.effect(
      "the deadline passed while the push was in flight (not yet swept): the delivery expires it, refunded",
      () =>
        Effect.gen(function* () {
          const { seller, buyer, orderId, orders, answer } = yield* inFlight
          yield* TestClock.adjust("10 seconds")
          yield* answer({ status: "delivered", output: "after the deadline" })
          expect(yield* orders.get(seller, orderId)).toMatchObject({ status: "expired", output: null })
          expect(yield* balance(walletAccount(buyer))).toBe(1_000)
          expect(yield* balance(walletAccount(seller))).toBe(0)
          expect(yield* entries(orderId)).toEqual(["escrow_hold", "escrow_release"])
          // The sweep finds nothing more to do with it.
          yield* orders.expireDue
          expect(yield* entries(orderId)).toEqual(["escrow_hold", "escrow_release"])
        })
    )

    it.effect("the sweep expired it while the push was in flight: the delivery changes nothing", () =>
      Effect.gen(function* () {
        const { seller, buyer, orderId, orders, answer } = yield* inFlight
        yield* TestClock.adjust("10 seconds")
        let swept = 0
        for (let n = yield* orders.expireDue; n > 0; n = yield* orders.expireDue) swept += n
        expect(swept).toBeGreaterThanOrEqual(1)
        expect((yield* orders.get(seller, orderId)).status).toBe("expired")
        yield* answer({ status: "delivered", output: "after the sweep" })
        expect(yield* orders.get(seller, orderId)).toMatchObject({ status: "expired", output: null })
        expect(yield* balance(walletAccount(buyer))).toBe(1_000)
        expect(yield* balance(walletAccount(seller))).toBe(0)
        expect(yield* entries(orderId)).toEqual(["escrow_hold", "escrow_release"])
      })
    )
  },
  // No dispatcher loop or sweeper of the layer's own (the test makes the attempt and runs the sweep);
  // a buy of a push service does not wait for the answer.
  { workers: false, orderWaitMs: 0 }
)
