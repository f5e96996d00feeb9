// What a paid call (HTTP 402, MPP) of an agent's pull or push service promises, on every storage:
// the seller sees the order and its delivered output reaches the buyer through the transaction; the
// call's price waits in escrow, and a failure or a missed deadline gives it all back; a credential
// pays one call however often it is replayed; the seller is paid 85 % once; a buyer's `simulate`
// does not decide a real seller's outcome; a push seller answering within the call's wait is the
// call's answer. Simulated sellers keep their instant answer (test/http/mpp.test.ts, saga suite).
import { expect } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { escrowAccount, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { InvokeResult, PendingInvokeResult } from "../../src/schema/mpp/challenge.js"
import type { PaymentRequired } from "../../src/schema/mpp/problems.js"
import { orderDeadlineMs } from "../../src/schema/orders/orders.js"
import type { FulfilmentBody } from "../../src/schema/commerce/services.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Events } from "../../src/services/events/Events.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { makeCredential } from "../../src/services/mpp/encoding.js"
import { Mpp } from "../../src/services/mpp/Mpp.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { commerceStack, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const PRICE = 100
const BODY = `{"input":"hello"}`

const stack = (storage: Parameters<typeof commerceStack>[0]) =>
  Layer.mergeAll(Mpp.layer, Orders.layer).pipe(
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(commerceStack(storage))
  )

/** A seller agent of an ordinary account (a real seller) with one per_call service (p95 1 s: a 10 s deadline). */
const realSeller = (fulfilment: FulfilmentBody) =>
  Effect.gen(function* () {
    const { agentId, caller } = yield* liveSellerAgent("seller")
    const service = yield* Effect.flatMap(Catalog, (c) =>
      c.publish(caller, serviceBody("Called", [tier("basic", PRICE)], "testing", fulfilment))
    )
    return { agentId, service }
  })

const balance = (account: string) => Effect.flatMap(Ledger, (l) => l.balance(account))
const booksClean = Effect.map(
  Effect.flatMap(Ledger, (l) => l.check),
  (c) => c.ok
)

type Buyer = Effect.Success<ReturnType<typeof fundedBuyer>>

/** The call as the route makes it: `credential` undefined asks for the challenge. */
const invoke = (buyer: Buyer, serviceId: string, credential: string | undefined, input: unknown = "hello") =>
  Effect.flatMap(Mpp, (mpp) =>
    mpp.invoke(buyer.caller, {
      serviceId,
      tierId: "basic",
      input,
      body: BODY,
      credential,
      credentialHeader: undefined
    })
  )

/** A challenge for the call, paid with its credential. */
const credentialFor = (buyer: Buyer, serviceId: string) =>
  Effect.map(Effect.flip(invoke(buyer, serviceId, undefined)), (e) => makeCredential((e as PaymentRequired).challenge))

/** A paid call of a pull seller: pending, the challenge spent. */
const pendingCall = (funds = 1_000, input: unknown = "hello") =>
  Effect.gen(function* () {
    const seller = yield* realSeller({ mode: "pull" })
    const buyer = yield* fundedBuyer(funds)
    const credential = yield* credentialFor(buyer, seller.service.id)
    const answer = yield* invoke(buyer, seller.service.id, credential, input)
    if (!(answer instanceof PendingInvokeResult)) throw new Error(`not pending: ${JSON.stringify(answer)}`)
    return { seller, buyer, credential, answer, orderId: answer.transactionId }
  })

forEachStorage("paid calls of real sellers", stack, (it) => {
  it.effect(
    "a pull seller's call: pending with the price held, the seller's delivery reaches the buyer, 85/15 once",
    () =>
      Effect.gen(function* () {
        const { seller, buyer, answer, orderId } = yield* pendingCall()
        expect(answer).toMatchObject({
          status: "pending",
          serviceId: seller.service.id,
          tierId: "basic",
          heldCents: PRICE,
          output: null,
          receipt: { status: "success", settlement: "held", transactionId: orderId, amount: String(PRICE) },
          follow: {
            transaction: `/api/v1/agent/commerce/transactions/${orderId}`,
            order: `/api/v1/agent/commerce/orders/${orderId}`,
            events: ["transaction.completed", "transaction.failed"]
          }
        })
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
        expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)
        expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
        const commerce = yield* Commerce
        expect(yield* commerce.getTransaction(buyer.agentId, orderId)).toMatchObject({ status: "pending" })

        // The seller sees the order: in its list and announced to it.
        const orders = yield* Orders
        const page = yield* orders.list(seller.agentId, { status: "pending" })
        expect(page.orders.map((o) => [o.id, o.input])).toEqual([[orderId, "hello"]])
        const told = yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 10))
        expect(told.find((e) => e.type === "order.created")?.data).toMatchObject({ orderId, input: "hello" })

        const fees = yield* balance(PLATFORM_FEES)
        yield* orders.deliver(seller.agentId, orderId, { output: { text: "HELLO" } })
        yield* orders.deliver(seller.agentId, orderId, { output: { text: "again" } })
        const tx = yield* commerce.getTransaction(buyer.agentId, orderId)
        expect(tx).toMatchObject({ status: "completed", priceCents: PRICE, sellerCents: 85, feeCents: 15 })
        expect(tx.delivery).toMatchObject({ success: true, output: { text: "HELLO" } })
        expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
        expect((yield* balance(PLATFORM_FEES)) - fees).toBe(15)
        expect(yield* balance(escrowAccount(orderId))).toBe(0)
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
        expect(yield* booksClean).toBe(true)
        // The buyer is told the paid call completed, naming the challenge that paid it (not as a buy).
        const buyerTold = yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer.agentId, 10))
        expect(buyerTold.find((e) => e.type === "transaction.completed")?.data).toMatchObject({
          transactionId: orderId,
          source: "paid_call",
          challengeId: answer.receipt.challengeId
        })
        // The health check's ledger sample reads a call paid into escrow as reconciled.
        expect((yield* Effect.flatMap(Mpp, (m) => m.health)).checks.ledger.ok).toBe(true)
      })
  )

  it.effect("no charge without a delivery: the seller's failure gives the whole price back, escrow 0", () =>
    Effect.gen(function* () {
      const { seller, buyer, orderId } = yield* pendingCall()
      const orders = yield* Orders
      yield* orders.fail(seller.agentId, orderId, { error: "cannot do it" })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
      expect(tx).toMatchObject({ status: "failed", sellerCents: 0 })
      expect(tx.delivery).toMatchObject({ success: false, error: "cannot do it" })
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("a paid call is the seller's to answer: its buyer cannot cancel it (as it can a buy's order)", () =>
    Effect.gen(function* () {
      const { seller, buyer, orderId } = yield* pendingCall()
      const orders = yield* Orders
      expect(yield* Effect.flip(orders.cancel(buyer.agentId, orderId))).toMatchObject({ _tag: "NotFound" })
      expect(yield* orders.get(buyer.agentId, orderId)).toMatchObject({ status: "pending" })
      expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)
      yield* orders.deliver(seller.agentId, orderId, { output: "done" })
      expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("no charge without a delivery: a seller that never answers is refunded in full at the deadline", () =>
    Effect.gen(function* () {
      const { seller, buyer, orderId } = yield* pendingCall()
      yield* TestClock.adjust(orderDeadlineMs(tier("basic", PRICE)))
      const orders = yield* Orders
      yield* orders.expireDue
      expect(yield* orders.get(buyer.agentId, orderId)).toMatchObject({ status: "expired" })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
      expect(yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))).toMatchObject({
        status: "failed"
      })
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("a replayed credential never pays twice, one after the other or at the same moment", () =>
    Effect.gen(function* () {
      const seller = yield* realSeller({ mode: "pull" })
      const buyer = yield* fundedBuyer(1_000)
      const credential = yield* credentialFor(buyer, seller.service.id)
      const answers = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.result(invoke(buyer, seller.service.id, credential))),
        { concurrency: "unbounded" }
      )
      const paid = answers.filter((a) => a._tag === "Success")
      expect(paid).toHaveLength(1)
      for (const a of answers) {
        if (a._tag === "Failure")
          expect(a.failure).toMatchObject({ _tag: "PaymentRequired", problem: "invalid-challenge" })
      }
      const again = yield* Effect.flip(invoke(buyer, seller.service.id, credential))
      expect(again).toMatchObject({ _tag: "PaymentRequired", problem: "invalid-challenge" })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
      const page = yield* Effect.flatMap(Orders, (o) => o.list(seller.agentId, {}))
      expect(page.orders).toHaveLength(1)
    })
  )

  it.effect("a buyer's `simulate` is plain input to a real seller: the call waits for the seller", () =>
    Effect.gen(function* () {
      const { buyer, answer, orderId } = yield* pendingCall(1_000, { simulate: "fail" })
      expect(answer.status).toBe("pending")
      expect(yield* Effect.flatMap(Orders, (o) => o.get(buyer.agentId, orderId))).toMatchObject({
        status: "pending",
        input: { simulate: "fail" }
      })
      expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)
    })
  )

  it.effect("a short wallet is refused with a fresh challenge; nothing is held and the order is not placed", () =>
    Effect.gen(function* () {
      const seller = yield* realSeller({ mode: "pull" })
      const buyer = yield* fundedBuyer(PRICE - 1)
      const credential = yield* credentialFor(buyer, seller.service.id)
      const refused = yield* Effect.flip(invoke(buyer, seller.service.id, credential))
      expect(refused).toMatchObject({ _tag: "PaymentRequired", problem: "wallet-insufficient-funds", missingCents: 1 })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(PRICE - 1)
      expect((yield* Effect.flatMap(Orders, (o) => o.list(seller.agentId, {}))).orders).toHaveLength(0)
    })
  )

  /** A push seller's order, answered by `answer` once placed, while the call waits. */
  const pushCall = (
    answer: (
      orders: Effect.Success<typeof Orders>,
      sellerId: string,
      orderId: string
    ) => Effect.Effect<unknown, unknown>
  ) =>
    Effect.gen(function* () {
      const seller = yield* realSeller({ mode: "push", url: "http://127.0.0.1:9/orders" })
      const buyer = yield* fundedBuyer(1_000)
      const credential = yield* credentialFor(buyer, seller.service.id)
      const call = yield* Effect.forkChild(Effect.result(invoke(buyer, seller.service.id, credential)))
      const orders = yield* Orders
      let orderId: string | undefined
      while (orderId === undefined) {
        orderId = (yield* orders.list(seller.agentId, { status: "pending" })).orders[0]?.id
        if (orderId === undefined) yield* TestClock.withLive(Effect.sleep("5 millis"))
      }
      yield* answer(orders, seller.agentId, orderId)
      return { seller, buyer, orderId, answer: yield* Fiber.join(call) }
    })

  it.effect("a push seller that delivers within the call's wait: the call answers its output, settled", () =>
    Effect.gen(function* () {
      const { seller, buyer, orderId, answer } = yield* pushCall((orders, sellerId, id) =>
        orders.deliver(sellerId, id, { output: { words: 2 } })
      )
      if (answer._tag === "Failure") throw new Error(JSON.stringify(answer.failure))
      expect(answer.success).toBeInstanceOf(InvokeResult)
      expect(answer.success).toMatchObject({
        status: "completed",
        transactionId: orderId,
        chargedCents: PRICE,
        output: { words: 2 },
        receipt: { settlement: "settled", transactionId: orderId }
      })
      expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
    })
  )

  it.effect("a push seller that fails within the wait: SellerFailed naming the refunded transaction", () =>
    Effect.gen(function* () {
      const { buyer, orderId, answer } = yield* pushCall((orders, sellerId, id) =>
        orders.fail(sellerId, id, { error: "out of stock" })
      )
      if (answer._tag === "Success") throw new Error(JSON.stringify(answer.success))
      expect(answer.failure).toMatchObject({ _tag: "SellerFailed", transactionId: orderId })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
    })
  )

  it.effect("a push seller that has not answered when the wait ends: pending, the price held", () =>
    Effect.gen(function* () {
      const { orderId, answer } = yield* pushCall((orders) => TestClock.adjust(orders.waitMs))
      if (answer._tag === "Failure") throw new Error(JSON.stringify(answer.failure))
      expect(answer.success).toMatchObject({ status: "pending", transactionId: orderId, heldCents: PRICE })
      expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)
    })
  )
})
