// What the owner of a selling agent is promised about its orders and earnings (docs/fulfilment.md,
// "Owner's view"), on every storage: a delivered 1 000-cent order is 850 earned today; a pending one
// is held, not earned; a refunded sale is not earnings; another agent's orders never appear; an
// owner cannot read another account's agent; the queue is a bounded page, oldest first; and the
// board costs the same statements for a short history or a long one.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Statement from "effect/sql/Statement"
import { TestClock } from "effect/testing"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { SellerBoard } from "../../src/services/purchases/SellerBoard.js"
import { Ids } from "../../src/services/platform/Db.js"
import { AnalyticsStore } from "../../src/services/reputation/AnalyticsStore.js"
import { agentCaller, commerceStack, fundedBuyer, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

/** An owner's account with an agent that publishes a pull service of one 1 000-cent tier. */
const ownedSeller = Effect.gen(function* () {
  const keys = yield* Keys
  const ids = yield* Ids
  const account = yield* keys.signUp({
    email: `${yield* ids.make("o")}@example.com`.toLowerCase(),
    password: "correct horse battery",
    name: "Owner"
  })
  const agent = yield* keys.createAgent(account.id, { name: "seller" })
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(
      agentCaller(agent.id, account.id),
      serviceBody("Sold", [tier("basic", 1_000)], "testing", { mode: "pull" })
    )
  )
  return { accountId: account.id, agentId: agent.id, serviceId: service.id }
})

const order = (buyer: { caller: ReturnType<typeof agentCaller> }, serviceId: string) =>
  Effect.map(
    Effect.flatMap(Commerce, (c) => c.buy({ caller: buyer.caller, serviceId, tierId: "basic", input: "hi" })),
    (r) => r.transaction!.id
  )

const deliver = (sellerAgentId: string, orderId: string) =>
  Effect.flatMap(Orders, (o) => o.deliver(sellerAgentId, orderId, { output: { ok: true } }))

const countStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    let n = 0
    const result = yield* effect.pipe(
      Effect.provideService(Statement.CurrentTransformer, (self) => {
        n++
        return Effect.succeed(self)
      })
    )
    return { result, statements: n }
  })

forEachStorage(
  "seller board",
  (storage) => SellerBoard.layer.pipe(Layer.provideMerge(Orders.layer), Layer.provideMerge(commerceStack(storage))),
  (it, c) => {
    it.effect("a delivered 1 000-cent order is 850 earned today; a pending one is held, not earned", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
        const board = yield* SellerBoard
        const seller = yield* ownedSeller
        const buyer = yield* fundedBuyer(10_000)
        const first = yield* order(buyer, seller.serviceId)

        const waiting = yield* board.board(seller.accountId, seller.agentId)
        expect(waiting.earnings).toEqual({ todayCents: 0, thisMonthCents: 0, allTimeCents: 0, heldCents: 850 })
        expect(waiting.pending.count).toBe(1)
        expect(waiting.pending.orders).toMatchObject([
          { id: first, serviceName: "Sold", tierId: "basic", priceCents: 1_000, sellerCents: 850, status: "pending" }
        ])
        expect(waiting.pending.orders[0]!.buyerAgentId).toBe(buyer.agentId)
        expect(waiting.pending.orders[0]!.deadlineAt > waiting.pending.orders[0]!.createdAt).toBe(true)
        expect(waiting.ended).toEqual([])

        yield* deliver(seller.agentId, first)
        const paid = yield* board.board(seller.accountId, seller.agentId)
        expect(paid.earnings).toEqual({ todayCents: 850, thisMonthCents: 850, allTimeCents: 850, heldCents: 0 })
        expect(paid.pending).toMatchObject({ orders: [], count: 0, nextCursor: null })
        expect(paid.ended).toMatchObject([{ id: first, status: "delivered" }])

        // Tomorrow, still in the month: not today's any more, still this month's and ever.
        yield* TestClock.adjust("1 day")
        const later = yield* board.board(seller.accountId, seller.agentId)
        expect(later.earnings).toEqual({ todayCents: 0, thisMonthCents: 850, allTimeCents: 850, heldCents: 0 })
        // Next month: only the all-time figure keeps it.
        yield* TestClock.setTime(Date.parse("2026-12-01T00:00:00.000Z"))
        const december = yield* board.board(seller.accountId, seller.agentId)
        expect(december.earnings).toEqual({ todayCents: 0, thisMonthCents: 0, allTimeCents: 850, heldCents: 0 })
      })
    )

    it.effect("earnings count on the UTC day the sale was placed; a refund days later takes them off that day", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T23:59:59.000Z"))
        const board = yield* SellerBoard
        const disputes = yield* Disputes
        const seller = yield* ownedSeller
        const buyer = yield* fundedBuyer(10_000)
        const lateNight = yield* order(buyer, seller.serviceId)
        yield* TestClock.adjust("2 seconds")
        yield* deliver(seller.agentId, lateNight)
        const morning = yield* board.board(seller.accountId, seller.agentId)
        expect(morning.earnings).toEqual({ todayCents: 0, thisMonthCents: 850, allTimeCents: 850, heldCents: 0 })
        const todays = yield* order(buyer, seller.serviceId)
        yield* deliver(seller.agentId, todays)
        const both = yield* board.board(seller.accountId, seller.agentId)
        expect(both.earnings).toEqual({ todayCents: 850, thisMonthCents: 1_700, allTimeCents: 1_700, heldCents: 0 })

        // Two days later the late-night sale is refunded: it leaves the 26th, the month and the total.
        yield* TestClock.adjust("2 days")
        const dispute = yield* disputes.open(buyer.agentId, { transactionId: lateNight, reason: "wrong output" })
        yield* disputes.respond(seller.agentId, dispute.id, { action: "accept" })
        const after = yield* board.board(seller.accountId, seller.agentId)
        expect(after.earnings).toEqual({ todayCents: 0, thisMonthCents: 850, allTimeCents: 850, heldCents: 0 })
        // The kept day totals agree with a recomputation from the sales (what `npm run check` runs).
        expect(yield* Effect.flatMap(AnalyticsStore, (a) => a.counterDrift)).toEqual([])
      })
    )

    it.effect("a refunded sale is not earnings; a failed order is ended, not earned", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
        const board = yield* SellerBoard
        const disputes = yield* Disputes
        const seller = yield* ownedSeller
        const buyer = yield* fundedBuyer(10_000)
        const kept = yield* order(buyer, seller.serviceId)
        yield* TestClock.adjust("1 millis")
        const refunded = yield* order(buyer, seller.serviceId)
        yield* TestClock.adjust("1 millis")
        const failed = yield* order(buyer, seller.serviceId)
        yield* deliver(seller.agentId, kept)
        yield* deliver(seller.agentId, refunded)
        yield* Effect.flatMap(Orders, (o) => o.fail(seller.agentId, failed, { error: "cannot do it" }))
        const dispute = yield* disputes.open(buyer.agentId, { transactionId: refunded, reason: "wrong output" })
        yield* disputes.respond(seller.agentId, dispute.id, { action: "accept" })

        const b = yield* board.board(seller.accountId, seller.agentId)
        expect(b.earnings).toEqual({ todayCents: 850, thisMonthCents: 850, allTimeCents: 850, heldCents: 0 })
        expect(b.ended.map((o) => [o.id, o.status])).toEqual([
          [failed, "failed"],
          [refunded, "delivered"],
          [kept, "delivered"]
        ])
        expect(b.ended[0]!.error).toBe("cannot do it")
      })
    )

    it.effect("another agent's orders never appear; another account's agent is not found", () =>
      Effect.gen(function* () {
        const board = yield* SellerBoard
        const mine = yield* ownedSeller
        const theirs = yield* ownedSeller
        const buyer = yield* fundedBuyer(10_000)
        const other = yield* order(buyer, theirs.serviceId)
        yield* order(buyer, theirs.serviceId)
        yield* deliver(theirs.agentId, other)

        const b = yield* board.board(mine.accountId, mine.agentId)
        expect(b.pending).toMatchObject({ orders: [], count: 0 })
        expect(b.ended).toEqual([])
        expect(b.earnings).toEqual({ todayCents: 0, thisMonthCents: 0, allTimeCents: 0, heldCents: 0 })
        const refused = yield* Effect.flip(board.board(mine.accountId, theirs.agentId))
        expect(refused._tag).toBe("NotFound")
        expect((yield* Effect.flip(board.board(mine.accountId, "agt_nobody")))._tag).toBe("NotFound")
      })
    )

    it.effect("the queue is a bounded page, oldest first, with the count; the cost does not grow with history", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
        const board = yield* SellerBoard
        const seller = yield* ownedSeller
        const buyer = yield* fundedBuyer(100_000)
        const placed: Array<string> = []
        for (let i = 0; i < 12; i++) {
          placed.push(yield* order(buyer, seller.serviceId))
          yield* TestClock.adjust("1 millis")
        }
        const short = yield* countStatements(board.board(seller.accountId, seller.agentId))
        const first = short.result
        expect(first.pending.count).toBe(12)
        expect(first.earnings.heldCents).toBe(12 * 850)
        expect(first.pending.orders.map((o) => o.id)).toEqual(placed.slice(0, 10))
        const next = yield* board.board(seller.accountId, seller.agentId, { cursor: first.pending.nextCursor! })
        expect(next.pending.orders.map((o) => o.id)).toEqual(placed.slice(10))
        expect(next.pending.nextCursor).toBeNull()
        expect(yield* Effect.flip(board.board(seller.accountId, seller.agentId, { cursor: "nope" }))).toMatchObject({
          _tag: "InvalidInput",
          field: "cursor"
        })

        // A longer history (delivered sales) costs the same statements; the ended list stays at ten.
        for (const id of placed) yield* deliver(seller.agentId, id)
        for (let i = 0; i < 8; i++) yield* deliver(seller.agentId, yield* order(buyer, seller.serviceId))
        const long = yield* countStatements(board.board(seller.accountId, seller.agentId))
        expect(long.result.ended).toHaveLength(10)
        expect(long.result.earnings.todayCents).toBe(20 * 850)
        // The memory storage runs no SQL (0 === 0 would prove nothing): the statement count is a claim
        // about the SQL storages only, where the board must have read something and no more for more history.
        if (c.name !== "memory") {
          expect(short.statements).toBeGreaterThan(0)
          expect(long.statements).toBe(short.statements)
          expect(long.statements).toBeLessThanOrEqual(5)
        }
      })
    )
  }
)
