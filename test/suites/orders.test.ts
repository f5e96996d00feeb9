// What buyers and sellers are promised about orders (docs/fulfilment.md), on every storage: no
// charge without a delivery; a delivery paid once (a second deliver is the same answer); a failure
// or a missed deadline refunds in full; the escrow is empty after every order ends; pending orders
// count against the buyer's limits; a deliver racing an answer or the deadline ends in exactly one
// outcome; a seller's orders come in keyset pages, and a waiting list wakes on the next order.
import { expect } from "@effect/vitest"
import { Cause, Clock, Effect, Exit, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { escrowAccount, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { ORDER_CANCELLED, orderDeadlineMs } from "../../src/schema/orders/orders.js"
import { UNLIMITED_POLICY, initialWallet } from "../../src/schema/wallet/policy.js"
import { cents } from "../../src/schema/platform/common.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { Events } from "../../src/services/events/Events.js"
import { Ledger, LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { AnalyticsStore } from "../../src/services/reputation/AnalyticsStore.js"
import { agentCaller, commerceStack, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const PRICE = 100
const stack = (storage: Parameters<typeof commerceStack>[0]) =>
  Orders.layer.pipe(Layer.provideMerge(commerceStack(storage)))

/** A seller agent of an ordinary account with a pull service (p95 1 s: a 10 s deadline). */
const pullSeller = Effect.gen(function* () {
  const { agentId, caller } = yield* liveSellerAgent("pull seller")
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(caller, serviceBody("Pulled", [tier("basic", PRICE)], "testing", { mode: "pull" }))
  )
  return { agentId, service }
})

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))

const buy = (buyer: { caller: ReturnType<typeof agentCaller> }, serviceId: string, input: unknown = "hello") =>
  Effect.flatMap(Commerce, (c) => c.buy({ caller: buyer.caller, serviceId, tierId: "basic", input }))

/** A pull seller, a buyer with `funds`, and one pending order between them. */
const placed = (funds = 1_000) =>
  Effect.gen(function* () {
    const seller = yield* pullSeller
    const buyer = yield* fundedBuyer(funds)
    const purchase = yield* buy(buyer, seller.service.id)
    return { seller, buyer, purchase, orderId: purchase.transaction!.id }
  })

/** The kept counters and spend totals agree with a recomputation from the transactions (npm run check). */
const noDrift = Effect.gen(function* () {
  const counters = yield* Effect.flatMap(AnalyticsStore, (a) => a.counterDrift)
  const spend = yield* Effect.flatMap(WalletStore, (w) => w.spendDrift)
  return [...counters, ...spend]
})

/** The ledger's books balance and no wallet or escrow account is negative. */
const booksClean = Effect.map(
  Effect.flatMap(Ledger, (l) => l.check),
  (c) => c.ok
)

forEachStorage("orders", stack, (it) => {
  it.effect("the deadline is twice the tier's p95, between 10 s and an hour", () =>
    Effect.sync(() => {
      const sla = (p95LatencyMs: number) => ({ sla: { uptimePct: 99, p95LatencyMs, supportWindow: "24/7" } })
      expect(orderDeadlineMs(sla(1_000))).toBe(10_000)
      expect(orderDeadlineMs(sla(5_000))).toBe(10_000)
      expect(orderDeadlineMs(sla(6_000))).toBe(12_000)
      expect(orderDeadlineMs(sla(2_000_000))).toBe(3_600_000)
    })
  )

  it.effect("no charge without a delivery: the price waits in escrow; the delivery pays the seller 85/15", () =>
    Effect.gen(function* () {
      const { seller, buyer, purchase, orderId } = yield* placed()
      expect(purchase.status).toBe("pending")
      expect(purchase.transaction).toMatchObject({ status: "pending", delivery: null, sellerCents: 0 })
      // A pull order is never pushed: it carries no push state for the dispatcher to find.
      expect((yield* Effect.flatMap(Orders, (o) => o.get(seller.agentId, orderId))).push).toBeNull()
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
      expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
      expect(yield* noDrift).toEqual([])
      const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 10))
      expect(events.find((e) => e.type === "order.created")?.data).toMatchObject({ orderId, input: "hello" })

      const orders = yield* Orders
      const delivered = yield* orders.deliver(seller.agentId, orderId, { output: { text: "HELLO" } })
      expect(delivered).toMatchObject({ status: "delivered", output: { text: "HELLO" } })
      expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
      expect(tx).toMatchObject({ status: "completed", sellerCents: 85, feeCents: 15 })
      expect(tx.delivery).toMatchObject({ success: true, output: { text: "HELLO" } })
      // The buyer is told its buy completed: a buy, naming no challenge (a paid call's order says which).
      const told = yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer.agentId, 10))
      const completed = told.find((e) => e.type === "transaction.completed")?.data as Record<string, unknown>
      expect(completed).toMatchObject({ transactionId: orderId, source: "buy" })
      expect(completed.challengeId ?? null).toBeNull()
      expect(yield* booksClean).toBe(true)
      expect(yield* noDrift).toEqual([])
    })
  )

  it.effect("the SLA figures are what the buyer waited: a seller reporting less time changes none of them", () =>
    Effect.gen(function* () {
      // A real date: at the test clock's 0 a time since the epoch and the time itself are the same number.
      yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
      const { seller, buyer, orderId } = yield* placed()
      yield* TestClock.adjust("4 seconds")
      const delivered = yield* Effect.flatMap(Orders, (o) =>
        o.deliver(seller.agentId, orderId, { output: "done", latencyMs: 0 })
      )
      // The seller's report is kept for its records; the figures read the platform's measure.
      expect(delivered).toMatchObject({ status: "delivered", latencyMs: 4_000, reportedLatencyMs: 0 })
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
      expect(tx.delivery).toMatchObject({ success: true, latencyMs: 4_000 })
      const report = yield* Effect.flatMap(Catalog, (c) => c.sla(seller.service.id))
      expect(report.tiers[0]).toMatchObject({ deliveries: 1, measuredP95LatencyMs: 4_000, latencyCompliant: false })
      // Read back from the store, the report survives; an order delivered without one says null.
      const read = yield* Effect.flatMap(Orders, (o) => o.get(buyer.agentId, orderId))
      expect(read).toMatchObject({ latencyMs: 4_000, reportedLatencyMs: 0 })
      const other = yield* placed()
      const plain = yield* Effect.flatMap(Orders, (o) => o.deliver(other.seller.agentId, other.orderId, { output: 1 }))
      expect(plain.reportedLatencyMs).toBeNull()
    })
  )

  it.effect("a delivery is paid once: delivering again, even at the same moment, is the same order", () =>
    Effect.gen(function* () {
      const { seller, orderId } = yield* placed()
      const orders = yield* Orders
      const fees = yield* balance(PLATFORM_FEES)
      const answers = yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => orders.deliver(seller.agentId, orderId, { output: `try ${i}` })),
        { concurrency: "unbounded" }
      )
      const first = answers[0]!
      for (const a of answers) expect(a).toEqual(first)
      const again = yield* orders.deliver(seller.agentId, orderId, { output: "later" })
      expect(again).toEqual(first)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
      expect((yield* balance(PLATFORM_FEES)) - fees).toBe(15)
      const entries = yield* Effect.flatMap(LedgerStore, (l) => l.entriesByReference(orderId))
      expect(entries.map((e) => e.kind).sort()).toEqual(["escrow_hold", "escrow_settle"])
    })
  )

  it.effect("a failure refunds in full; failing again is the same order, delivering after it is OrderClosed", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
      const { seller, buyer, orderId } = yield* placed()
      const orders = yield* Orders
      yield* TestClock.adjust("3 seconds")
      const failed = yield* orders.fail(seller.agentId, orderId, { error: "cannot do it" })
      // The failure counts against the seller's SLA with the time the buyer waited for it.
      expect(failed).toMatchObject({ status: "failed", error: "cannot do it", output: null, latencyMs: 3_000 })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
      expect(yield* orders.fail(seller.agentId, orderId, { error: "other words" })).toEqual(failed)
      const late = yield* Effect.exit(orders.deliver(seller.agentId, orderId, { output: "too late" }))
      expect(late).toMatchObject({ _tag: "Failure" })
      expect(JSON.stringify(late)).toContain("OrderClosed")
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
      expect(tx).toMatchObject({ status: "failed", sellerCents: 0, ledgerEntryId: null })
      expect(tx.delivery).toMatchObject({ success: false, error: "cannot do it", latencyMs: 3_000 })
      const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer.agentId, 10))
      expect(events.find((e) => e.type === "transaction.failed")?.data).toMatchObject({
        transactionId: orderId,
        priceCents: PRICE,
        error: "cannot do it"
      })
      // The seller's own failure is not reported to it as an expiry.
      const sellerTold = yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 10))
      expect(sellerTold.map((e) => e.type)).not.toContain("order.expired")
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("a replayed key answers a pending order as pending, the price held once; after delivery, completed", () =>
    Effect.gen(function* () {
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const ask = Effect.flatMap(Commerce, (c) =>
        c.buy({
          caller: buyer.caller,
          serviceId: seller.service.id,
          tierId: "basic",
          input: 1,
          idempotencyReference: "k"
        })
      )
      const first = yield* ask
      const again = yield* ask
      expect(first).toMatchObject({ status: "pending" })
      expect(again).toMatchObject({ status: "pending", transaction: { id: first.transaction!.id, status: "pending" } })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
      yield* Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, first.transaction!.id, { output: "done" }))
      expect(yield* ask).toMatchObject({ status: "completed", transaction: { id: first.transaction!.id } })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
    })
  )

  it.effect("another agent cannot answer or read the order; the buyer may read it", () =>
    Effect.gen(function* () {
      const { buyer, orderId } = yield* placed()
      const orders = yield* Orders
      const stranger = yield* fundedBuyer(0)
      for (const who of [buyer.agentId, stranger.agentId]) {
        const e = yield* Effect.flip(orders.deliver(who, orderId, { output: "x" }))
        expect(e._tag).toBe("NotFound")
      }
      expect((yield* orders.get(buyer.agentId, orderId)).status).toBe("pending")
      expect((yield* Effect.flip(orders.get(stranger.agentId, orderId)))._tag).toBe("NotFound")
    })
  )

  it.effect(
    "the buyer may cancel its pending order: refunded in full from the escrow, not held against the seller, closed to the seller's answer",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
        const { seller, buyer, orderId } = yield* placed()
        const orders = yield* Orders
        yield* TestClock.adjust("3 seconds")
        // Only the buyer may withdraw it: the seller and a stranger find no such order of theirs.
        const stranger = yield* fundedBuyer(0)
        for (const who of [seller.agentId, stranger.agentId]) {
          expect((yield* Effect.flip(orders.cancel(who, orderId)))._tag).toBe("NotFound")
        }
        expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)

        const cancelled = yield* orders.cancel(buyer.agentId, orderId)
        expect(cancelled).toMatchObject({ status: "cancelled", error: ORDER_CANCELLED, output: null, latencyMs: null })
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
        expect(yield* balance(escrowAccount(orderId))).toBe(0)
        expect(yield* balance(walletAccount(seller.agentId))).toBe(0)
        // Cancelling again is the order as it is; the seller's answer comes too late.
        expect(yield* orders.cancel(buyer.agentId, orderId)).toEqual(cancelled)
        for (const answer of [
          orders.deliver(seller.agentId, orderId, { output: "x" }),
          orders.fail(seller.agentId, orderId, { error: "x" })
        ]) {
          expect((yield* Effect.flip(answer))._tag).toBe("OrderClosed")
        }
        const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
        expect(tx).toMatchObject({ status: "failed", sellerCents: 0, feeCents: 0, ledgerEntryId: null })
        expect(tx.delivery).toMatchObject({ success: false, error: ORDER_CANCELLED })
        const told = yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer.agentId, 10))
        expect(told.find((e) => e.type === "transaction.failed")?.data).toMatchObject({
          transactionId: orderId,
          error: ORDER_CANCELLED
        })
        // The seller's SLA does not count it: no delivery at all, then one delivered is all it has.
        expect((yield* Effect.flatMap(Catalog, (c) => c.sla(seller.service.id))).tiers[0]).toMatchObject({
          deliveries: 0
        })
        const next = yield* buy(buyer, seller.service.id)
        yield* orders.deliver(seller.agentId, next.transaction!.id, { output: "done" })
        expect((yield* Effect.flatMap(Catalog, (c) => c.sla(seller.service.id))).tiers[0]).toMatchObject({
          deliveries: 1,
          successes: 1
        })
        // An order that has ended is no longer the buyer's to cancel.
        expect((yield* Effect.flip(orders.cancel(buyer.agentId, next.transaction!.id)))._tag).toBe("OrderClosed")
        expect(yield* booksClean).toBe(true)
        expect(yield* noDrift).toEqual([])
      })
  )

  it.effect("a cancel racing the seller's delivery ends the order once: paid, or refunded in full", () =>
    Effect.gen(function* () {
      const { seller, buyer, orderId } = yield* placed()
      const orders = yield* Orders
      const [cancel, deliver] = yield* Effect.all(
        [
          Effect.exit(orders.cancel(buyer.agentId, orderId)),
          Effect.exit(orders.deliver(seller.agentId, orderId, { output: "raced" }))
        ],
        { concurrency: "unbounded" }
      )
      expect([cancel, deliver].filter(Exit.isSuccess)).toHaveLength(1)
      const ended = yield* orders.get(buyer.agentId, orderId)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(ended.status === "cancelled" ? 1_000 : 1_000 - PRICE)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(ended.status === "delivered" ? 85 : 0)
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("a missed deadline refunds in full, tells the seller, and closes the order to any answer", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
      const { seller, buyer, orderId } = yield* placed()
      const orders = yield* Orders
      yield* TestClock.adjust("9 seconds")
      yield* orders.expireDue
      expect((yield* orders.get(seller.agentId, orderId)).status).toBe("pending")
      // Asked for this order by name (as a saga's step asks), before its deadline: it stays the seller's.
      expect(yield* orders.expire(orderId)).toBe(false)
      expect((yield* orders.get(seller.agentId, orderId)).status).toBe("pending")
      expect(yield* balance(escrowAccount(orderId))).toBe(PRICE)
      yield* TestClock.adjust("2 seconds")
      yield* orders.expireDue
      const expired = yield* orders.get(seller.agentId, orderId)
      expect(expired).toMatchObject({ status: "expired", latencyMs: 10_000 })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      for (const answer of [
        orders.deliver(seller.agentId, orderId, { output: "x" }),
        orders.fail(seller.agentId, orderId, { error: "x" })
      ]) {
        expect((yield* Effect.flip(answer))._tag).toBe("OrderClosed")
      }
      const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 10))
      expect(events.find((e) => e.type === "order.expired")?.data).toEqual({
        orderId,
        serviceId: expect.any(String),
        tierId: "basic",
        priceCents: PRICE,
        deadlineAt: "2026-11-26T09:00:10.000Z"
      })
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, orderId))
      expect(tx.status).toBe("failed")
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("a deliver racing the deadline sweep, or a fail, ends the order once", () =>
    Effect.gen(function* () {
      const orders = yield* Orders
      // The suite's clock and store are shared: orders other tests left waiting expire first, so the
      // sweep below can only find this test's order.
      yield* TestClock.adjust("2 hours")
      yield* orders.expireDue
      // Past the deadline: the sweep and the late deliver both find it due; it is expired once.
      const late = yield* placed()
      yield* TestClock.adjust("11 seconds")
      const [swept, delivered] = yield* Effect.all(
        [orders.expireDue, Effect.exit(orders.deliver(late.seller.agentId, late.orderId, { output: "x" }))],
        { concurrency: "unbounded" }
      )
      expect(swept).toBeLessThanOrEqual(1)
      // The late answer is refused as the seller is promised: OrderClosed naming the state it ended in,
      // not any failure (a defect or a storage error would be a failure too).
      expect(Exit.isFailure(delivered) ? Cause.findErrorOption(delivered.cause) : undefined).toEqual(
        Option.some(expect.objectContaining({ _tag: "OrderClosed", orderId: late.orderId, status: "expired" }))
      )
      expect((yield* orders.get(late.seller.agentId, late.orderId)).status).toBe("expired")
      const releases = (yield* Effect.flatMap(LedgerStore, (l) => l.entriesByReference(late.orderId))).filter(
        (e) => e.kind === "escrow_release"
      )
      expect(releases).toHaveLength(1)
      expect(yield* balance(walletAccount(late.buyer.agentId))).toBe(1_000)

      // In time: a deliver and a fail at once; one wins, the other is OrderClosed, the money follows the winner.
      const race = yield* placed()
      const [d, f] = yield* Effect.all(
        [
          Effect.exit(orders.deliver(race.seller.agentId, race.orderId, { output: "x" })),
          Effect.exit(orders.fail(race.seller.agentId, race.orderId, { error: "y" }))
        ],
        { concurrency: "unbounded" }
      )
      expect([Exit.isSuccess(d), Exit.isSuccess(f)].filter(Boolean)).toHaveLength(1)
      // The loser is told the order closed, with the winner's state.
      const loser = [d, f].find(Exit.isFailure)!
      const won = Exit.isSuccess(d) ? "delivered" : "failed"
      expect(Cause.findErrorOption(loser.cause)).toEqual(
        Option.some(expect.objectContaining({ _tag: "OrderClosed", orderId: race.orderId, status: won }))
      )
      const end = yield* orders.get(race.seller.agentId, race.orderId)
      expect(yield* balance(walletAccount(race.seller.agentId))).toBe(end.status === "delivered" ? 85 : 0)
      expect(yield* balance(walletAccount(race.buyer.agentId))).toBe(end.status === "delivered" ? 900 : 1_000)
      expect(yield* balance(escrowAccount(race.orderId))).toBe(0)
      expect(yield* booksClean).toBe(true)
    })
  )

  it.effect("pending orders count against the buyer's daily limit until they end", () =>
    Effect.gen(function* () {
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const now = yield* Clock.currentTimeMillis
      yield* Effect.flatMap(WalletStore, (w) =>
        w.put({ ...initialWallet(buyer.agentId, now), policy: { ...UNLIMITED_POLICY, dailyLimitCents: cents(150) } })
      )
      const first = yield* buy(buyer, seller.service.id)
      expect(first.status).toBe("pending")
      const refused = yield* Effect.flip(buy(buyer, seller.service.id))
      expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "dailyLimit" })
      const orders = yield* Orders
      yield* orders.fail(seller.agentId, first.transaction!.id, { error: "busy" })
      const second = yield* buy(buyer, seller.service.id)
      expect(second.status).toBe("pending")
    })
  )

  // docs/money.md "Limits hold when money moves": completed(window) + held ≤ the daily limit and ≤ the
  // monthly limit, each on its own; here only a monthly limit is set, so the day's check cannot refuse.
  it.effect("a pending order's escrow counts against the buyer's monthly limit too, until it ends", () =>
    Effect.gen(function* () {
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const now = yield* Clock.currentTimeMillis
      yield* Effect.flatMap(WalletStore, (w) =>
        w.put({
          ...initialWallet(buyer.agentId, now),
          policy: { ...UNLIMITED_POLICY, dailyLimitCents: null, monthlyLimitCents: cents(250) }
        })
      )
      const orders = yield* Orders
      // 100 completed this month, then 100 held by a pending order: 200 of the 250 used.
      const done = yield* buy(buyer, seller.service.id)
      yield* orders.deliver(seller.agentId, done.transaction!.id, { output: "done" })
      const held = yield* buy(buyer, seller.service.id)
      expect(held.status).toBe("pending")
      const view = yield* Effect.flatMap(Wallet, (w) => w.view(buyer.agentId))
      expect(view).toMatchObject({ spentThisMonthCents: 100, heldCents: 100, remainingThisMonthCents: 50 })
      // 100 more would make 300: refused by the month, though only 100 was ever completed.
      const refused = yield* Effect.flip(buy(buyer, seller.service.id))
      expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "monthlyLimit", limitCents: 250 })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - 2 * PRICE)
      // The order ends without a delivery: what it held is free again.
      yield* orders.fail(seller.agentId, held.transaction!.id, { error: "busy" })
      const again = yield* buy(buyer, seller.service.id)
      expect(again.status).toBe("pending")
    })
  )

  it.effect("a seller's orders come oldest first in keyset pages, by status when asked", () =>
    Effect.gen(function* () {
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) {
        ids.push((yield* buy(buyer, seller.service.id, i)).transaction!.id)
        yield* TestClock.adjust("1 millis")
      }
      const orders = yield* Orders
      const seen: Array<string> = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = yield* orders.list(seller.agentId, { limit: 2, ...(cursor ? { cursor } : {}) })
        seen.push(...page.orders.map((o) => o.id))
        cursor = page.nextCursor ?? undefined
        pages++
      } while (cursor !== undefined)
      expect(seen).toEqual(ids)
      expect(pages).toBe(3)
      // A page that holds exactly the rest is the last one: no cursor to an empty page.
      const whole = yield* orders.list(seller.agentId, { limit: 5 })
      expect(whole.orders.map((o) => o.id)).toEqual(ids)
      expect(whole.nextCursor).toBeNull()
      yield* orders.deliver(seller.agentId, ids[1]!, { output: "done" })
      const pending = yield* orders.list(seller.agentId, { status: "pending" })
      expect(pending.orders.map((o) => o.id)).toEqual([ids[0], ids[2], ids[3], ids[4]])
      expect(pending.nextCursor).toBeNull()
      const bad = yield* Effect.flip(orders.list(seller.agentId, { cursor: "not-a-cursor" }))
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "cursor" })
    })
  )

  // The wait is woken in this process by the placing itself (docs/fulfilment.md "Pull"); without that,
  // the process's one reader would still find the order within a second. So the bound is well under
  // the reader's second, counted from the buy's answer: 300 ms. Three rounds, 100 ms apart: without the
  // in-process wake-up a round ends just after a reader pass, so the next one waits ≈ 900 ms.
  it.effect("a list waiting for the next order answers as soon as one is placed (well under the reader's second)", () =>
    TestClock.withLive(
      Effect.gen(function* () {
        const seller = yield* pullSeller
        const buyer = yield* fundedBuyer(1_000)
        const orders = yield* Orders
        const empty = yield* orders.list(seller.agentId, { status: "pending", waitMs: 200 })
        expect(empty.orders).toHaveLength(0)
        const seen: Array<string> = []
        for (let round = 0; round < 3; round++) {
          const waiting = yield* Effect.forkChild(orders.list(seller.agentId, { status: "pending", waitMs: 20_000 }))
          yield* Effect.sleep("100 millis")
          const purchase = yield* buy(buyer, seller.service.id)
          const bought = Date.now()
          const page = yield* Fiber.join(waiting)
          expect(Date.now() - bought, `round ${round}: the list answered this long after the buy`).toBeLessThan(300)
          expect(page.orders.map((o) => o.id)).toEqual([purchase.transaction!.id])
          seen.push(purchase.transaction!.id)
          // Answered, so the next round's list starts empty again.
          yield* orders.deliver(seller.agentId, purchase.transaction!.id, { output: round })
        }
        expect(new Set(seen).size).toBe(3)
      })
    )
  )

  it.effect("a list asked to wait answers at once when orders are already pending (it waits only for none)", () =>
    TestClock.withLive(
      Effect.gen(function* () {
        const { seller, orderId } = yield* placed()
        const orders = yield* Orders
        // Three rounds: a list that waited for the reader's pass (once a second) could answer early by chance once.
        for (let round = 0; round < 3; round++) {
          const asked = Date.now()
          const page = yield* orders.list(seller.agentId, { status: "pending", waitMs: 20_000 })
          expect(Date.now() - asked, `round ${round}: the list answered this long after it was asked`).toBeLessThan(300)
          expect(page.orders.map((o) => o.id)).toEqual([orderId])
        }
      })
    )
  )

  it.effect(
    "a buy waiting on its seller hears the answer at once (well under the reader's second), and an ended one is not waited on",
    () =>
      TestClock.withLive(
        Effect.gen(function* () {
          const seller = yield* pullSeller
          const buyer = yield* fundedBuyer(1_000)
          const orders = yield* Orders
          // Three rounds, as above: a wait woken only by the reader's once-a-second pass misses 300 ms most times.
          for (let round = 0; round < 3; round++) {
            const orderId = (yield* buy(buyer, seller.service.id)).transaction!.id
            const waiting = yield* Effect.forkChild(orders.awaitOutcome(orderId, 20_000))
            yield* Effect.sleep("100 millis")
            const answered = Date.now()
            yield* round === 1
              ? orders.fail(seller.agentId, orderId, { error: "not today" })
              : orders.deliver(seller.agentId, orderId, { output: round })
            const ended = yield* Fiber.join(waiting)
            expect(Date.now() - answered, `round ${round}: the wait ended this long after the answer`).toBeLessThan(300)
            expect(ended?.status).toBe(round === 1 ? "failed" : "delivered")
            // Asked again once it has ended: the outcome at once, no wait.
            const askedAgain = Date.now()
            expect((yield* orders.awaitOutcome(orderId, 20_000))?.status).toBe(ended?.status)
            expect(Date.now() - askedAgain, `round ${round}: an ended order's wait`).toBeLessThan(300)
          }
        })
      )
  )

  it.effect("a pending purchase cannot be reviewed or disputed before its seller delivers (409); after, it can", () =>
    Effect.gen(function* () {
      const { seller, buyer, orderId } = yield* placed()
      const commerce = yield* Commerce
      const disputes = yield* Disputes
      const early = yield* Effect.flip(commerce.review(buyer.agentId, orderId, { rating: 1 }))
      expect(early).toMatchObject({ _tag: "Conflict", state: "pending" })
      const disputed = yield* Effect.flip(disputes.open(buyer.agentId, { transactionId: orderId, reason: "not yet" }))
      expect(disputed).toMatchObject({ _tag: "Conflict", state: "pending" })
      // Nothing was recorded against the seller meanwhile.
      expect((yield* commerce.getTransaction(buyer.agentId, orderId)).review).toBeNull()

      yield* Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, orderId, { output: "done" }))
      yield* commerce.review(buyer.agentId, orderId, { rating: 4 })
      expect((yield* commerce.getTransaction(buyer.agentId, orderId)).review).toMatchObject({ rating: 4 })
      expect(yield* disputes.open(buyer.agentId, { transactionId: orderId, reason: "late" })).toMatchObject({
        status: "open"
      })
    })
  )
})
