// The locks the docs promise on the purchase path, each raced on purpose, on every storage. Memory and
// the embedded store serialise units of work anyway (one write lock; one connection), so only Postgres
// can catch a lock that is missing: there each test opens the race with a hook (a unit of work paused
// after it took its lock) and goes on once the other side is blocked on that lock (Postgres shows it
// waiting) or has finished without it. docs/testing.md lists the lines each test was checked against.
// - An order's answer and its deadline's expiry at the same moment: one outcome, the money moved once
//   (docs/fulfilment.md "States": the order's lock, SettlementStore.openOrder).
// - A limit check reading what a pending order holds while that order's delivery moves it from held to
//   spent: counted on one side only (docs/money.md "Limits hold when money moves", the buyer's wallet lock).
// - Two attempts of one keyed write at once (docs/idempotency.md "Domain dedupe"): one writes, the other
//   answers its outcome; nothing is done twice (the write receipt's key).
// - A review and a dispute's refund of one purchase at once (docs/reputation.md: a refunded purchase
//   cannot be reviewed, and a review it had no longer counts): the transaction's lock.
import { expect } from "@effect/vitest"
import { Cause, Clock, Context, Deferred, Effect, Fiber, Layer, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { initialWallet, UNLIMITED_POLICY } from "../../src/schema/wallet/policy.js"
import { cents } from "../../src/schema/platform/common.js"
import { EXTERNAL_GRANTS, escrowAccount, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { WriteReceipts } from "../../src/services/idempotency/WriteReceipts.js"
import { WriteReceiptStore } from "../../src/services/idempotency/WriteReceiptStore.js"
import { Ledger, LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { Reputation } from "../../src/services/reputation/Reputation.js"
import { SettlementStore } from "../../src/services/purchases/SettlementStore.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import type { StorageCase } from "../fixtures/db.js"
import { commerceStack, fundedBuyer, liveSellerAgent, sellerWith, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const PRICE = 100

type Point = "settlement write" | "held read" | "transaction lock"

/** Where a unit of work may be paused: armed once, it pauses the next unit reaching the point until `go`. */
class Pauses extends Context.Service<
  Pauses,
  {
    readonly arm: (
      point: Point
    ) => Effect.Effect<{ readonly paused: Effect.Effect<void>; readonly go: Effect.Effect<void> }>
    readonly at: (point: Point) => Effect.Effect<void>
  }
>()("test/Pauses") {}

const PausesLive = Layer.sync(Pauses, () => {
  let armed: { point: Point; paused: Deferred.Deferred<void>; go: Deferred.Deferred<void> } | undefined
  return Pauses.of({
    arm: (point) =>
      Effect.gen(function* () {
        const paused = yield* Deferred.make<void>()
        const go = yield* Deferred.make<void>()
        armed = { point, paused, go }
        return { paused: Deferred.await(paused), go: Deferred.succeed(go, undefined).pipe(Effect.asVoid) }
      }),
    at: (point) =>
      Effect.suspend(() => {
        const a = armed
        if (a === undefined || a.point !== point) return Effect.void
        armed = undefined
        // Bounded in real time: a test that never says go cannot hang the suite.
        return Effect.andThen(
          Deferred.succeed(a.paused, undefined),
          TestClock.withLive(Effect.ignore(Effect.timeout(Deferred.await(a.go), "20 seconds")))
        )
      })
  })
})

/** The storage's settlement writes, held reads and transaction locks, pausable. */
const Hooked = Layer.effectContext(
  Effect.gen(function* () {
    const pauses = yield* Pauses
    const settlement = yield* SettlementStore
    const wallet = yield* WalletStore
    const purchases = yield* PurchaseStore
    return Context.make(
      SettlementStore,
      SettlementStore.of({
        ...settlement,
        write: (w) => Effect.andThen(pauses.at("settlement write"), settlement.write(w))
      })
    ).pipe(
      Context.add(
        WalletStore,
        WalletStore.of({ ...wallet, heldCents: (id) => Effect.tap(wallet.heldCents(id), () => pauses.at("held read")) })
      ),
      Context.add(
        PurchaseStore,
        PurchaseStore.of({
          ...purchases,
          lockTransaction: (id) => Effect.tap(purchases.lockTransaction(id), () => pauses.at("transaction lock"))
        })
      )
    )
  })
)

// PausesLive twice, one instance: a layer is built once per build (memoised by reference).
const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  WriteReceipts.layer.pipe(
    Layer.provideMerge(Orders.layer),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(commerceStack(Hooked.pipe(Layer.provideMerge(PausesLive), Layer.provideMerge(storage)))),
    Layer.provideMerge(PausesLive)
  )

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))
const entryKinds = (reference: string) =>
  Effect.map(
    Effect.flatMap(LedgerStore, (l) => l.entriesByReference(reference)),
    (es) => es.map((e) => e.kind).sort()
  )

/**
 * Until `other` has finished or is blocked behind the paused unit of work's lock: on Postgres, a
 * session of this database waiting for a lock; elsewhere (one write lock, one connection: it can only
 * wait) a moment of real time.
 */
const finishedOrBlocked = (c: StorageCase, other: Fiber.Fiber<unknown, unknown>) =>
  Effect.gen(function* () {
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    const blocked =
      c.name === "postgres" && Option.isSome(sql)
        ? sql.value<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
            Effect.map(([r]) => r!.n > 0),
            Effect.orDie,
            Effect.repeat({ until: (b) => b, schedule: Schedule.spaced("10 millis") })
          )
        : Effect.sleep("300 millis")
    yield* TestClock.withLive(
      Effect.ignore(
        Effect.timeout(Effect.raceFirst(Effect.asVoid(Fiber.await(other)), Effect.asVoid(blocked)), "10 seconds")
      )
    )
  })

/** A seller of its own account with a pull service (p95 1 s: a 10 s deadline). */
const pullSeller = Effect.gen(function* () {
  const { agentId, caller } = yield* liveSellerAgent("pull seller")
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(caller, serviceBody("Locked", [tier("basic", PRICE)], "testing", { mode: "pull" }))
  )
  return { agentId, service }
})

const buy = (buyer: Effect.Success<ReturnType<typeof fundedBuyer>>, serviceId: string) =>
  Effect.flatMap(Commerce, (c) => c.buy({ caller: buyer.caller, serviceId, tierId: "basic", input: "x" }))

forEachStorage("locks on the purchase path", stack, (it, c) => {
  it.effect("an order's delivery and its deadline's sweep at the same moment: one outcome, the money moved once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-11-28T16:00:00.000Z"))
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const orderId = (yield* buy(buyer, seller.service.id)).transaction!.id
      const orders = yield* Orders
      const { deadlineAt } = yield* orders.get(seller.agentId, orderId)
      // 1 ms before the deadline the seller delivers: its unit of work has the order and pauses before its write…
      yield* TestClock.setTime(Date.parse(deadlineAt) - 1)
      const pause = yield* Effect.flatMap(Pauses, (p) => p.arm("settlement write"))
      const delivering = yield* Effect.forkChild(orders.deliver(seller.agentId, orderId, { output: "in time" }))
      yield* pause.paused
      // …the deadline comes, and the sweep finds the order due.
      yield* TestClock.setTime(Date.parse(deadlineAt))
      const sweeping = yield* Effect.forkChild(orders.expireDue)
      yield* finishedOrBlocked(c, sweeping)
      yield* pause.go
      const delivered = yield* Fiber.join(delivering)
      yield* Fiber.join(sweeping)
      // The order's lock made the sweep wait: it found the order delivered and left it.
      expect(delivered).toMatchObject({ status: "delivered", output: "in time" })
      expect((yield* orders.get(seller.agentId, orderId)).status).toBe("delivered")
      expect(yield* entryKinds(orderId)).toEqual(["escrow_hold", "escrow_settle"])
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      expect(yield* balance(walletAccount(seller.agentId))).toBe(85)
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
    })
  )

  it.effect(
    "a limit check reading what a pending order holds while that order is delivered: counted once, the buy within the limit goes through",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-28T17:00:00.000Z"))
        const seller = yield* pullSeller
        const buyer = yield* fundedBuyer(1_000)
        const now = yield* Clock.currentTimeMillis
        // A daily limit of two prices: one order held, one more fits exactly (held or spent, it is one price).
        yield* Effect.flatMap(WalletStore, (w) =>
          w.put({
            ...initialWallet(buyer.agentId, now),
            policy: { ...UNLIMITED_POLICY, dailyLimitCents: cents(2 * PRICE) }
          })
        )
        const held = (yield* buy(buyer, seller.service.id)).transaction!.id
        const orders = yield* Orders
        // The second buy's limit check pauses right after reading what is held (100)…
        const pause = yield* Effect.flatMap(Pauses, (p) => p.arm("held read"))
        const buying = yield* Effect.forkChild(buy(buyer, seller.service.id))
        yield* pause.paused
        // …while the held order is delivered: its price moves from held to spent.
        const delivering = yield* Effect.forkChild(orders.deliver(seller.agentId, held, { output: "done" }))
        yield* finishedOrBlocked(c, delivering)
        yield* pause.go
        const second = yield* Effect.exit(Fiber.join(buying))
        yield* Fiber.join(delivering)
        expect(second).toMatchObject({ _tag: "Success", value: { status: "pending" } })
        const view = yield* Effect.flatMap(Wallet, (w) => w.view(buyer.agentId))
        expect(view).toMatchObject({ spentTodayCents: PRICE, heldCents: PRICE, remainingTodayCents: 0 })
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - 2 * PRICE)
      })
  )

  it.effect("two attempts of one keyed write at once: one writes, the other answers its outcome, nothing twice", () =>
    Effect.gen(function* () {
      const receipts = yield* WriteReceipts
      const ledger = yield* Ledger
      const agent = `agt_receipt_${Math.random().toString(36).slice(2, 10)}`
      const keyed = { key: "retry-1", scope: `scope-${agent}` }
      // Both attempts are inside their unit of work, past the receipt's read, before either writes it
      // (where the storage lets two units of work run at once: Postgres), or a moment has passed.
      let inside = 0
      const bothIn = yield* Deferred.make<void>()
      const attempt = (n: number) =>
        receipts.once({
          keyed,
          kind: "test.grant",
          request: { agent, amount: 50 },
          write: Effect.gen(function* () {
            if (++inside === 2) yield* Deferred.succeed(bothIn, undefined)
            yield* TestClock.withLive(Effect.ignore(Effect.timeout(Deferred.await(bothIn), "1 second")))
            const entry = yield* ledger.transfer({
              kind: "grant",
              reference: `receipt-race-${agent}-${n}`,
              from: EXTERNAL_GRANTS,
              to: walletAccount(agent),
              amount: 50
            })
            return { id: entry.id, replayed: false }
          }),
          idOf: (entry) => entry.id,
          replay: (id) => Effect.succeed({ id, replayed: true })
        })
      const [a, b] = yield* Effect.all([attempt(1), attempt(2)], { concurrency: "unbounded" })
      // One outcome, answered to both: the same entry id.
      expect(a.id).toBe(b.id)
      expect([a.replayed, b.replayed].filter(Boolean)).toHaveLength(1)
      expect(yield* balance(walletAccount(agent))).toBe(50)
      const written = yield* Effect.forEach([1, 2], (n) => entryKinds(`receipt-race-${agent}-${n}`))
      expect(written.flat()).toEqual(["grant"])
      expect((yield* Effect.flatMap(WriteReceiptStore, (s) => s.get(keyed.scope, keyed.key)))?.resultId).toBe(a.id)
      // On Postgres the two really met: both ran their write, and the second rolled back.
      if (c.name === "postgres") expect(inside).toBe(2)
    })
  )
  it.effect(
    "a review and the dispute's refund of one purchase at once: the refunded purchase keeps no counted review",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-28T18:00:00.000Z"))
        const seller = yield* sellerWith("Reviewed", [tier("basic", PRICE)])
        const buyer = yield* fundedBuyer(1_000)
        const txId = (yield* buy(buyer, seller.service.id)).transaction!.id
        const disputes = yield* Disputes
        const dispute = yield* disputes.open(buyer.agentId, { transactionId: txId, reason: "not what was asked" })
        // The buyer's review has the transaction (completed) and pauses before writing…
        const pause = yield* Effect.flatMap(Pauses, (p) => p.arm("transaction lock"))
        const reviewing = yield* Effect.forkChild(
          Effect.flatMap(Commerce, (co) => co.review(buyer.agentId, txId, { rating: 5, text: "great" }))
        )
        yield* pause.paused
        // …while the seller accepts the dispute: the purchase is refunded.
        const refunding = yield* Effect.forkChild(disputes.respond(seller.agentId, dispute.id, { action: "accept" }))
        yield* finishedOrBlocked(c, refunding)
        yield* pause.go
        const reviewed = yield* Effect.exit(Fiber.join(reviewing))
        expect(yield* Fiber.join(refunding)).toMatchObject({ status: "resolved_refunded", refundCents: PRICE })
        // Either order is fine — reviewed then refunded (the review taken out of the counts), or
        // refunded then refused — but never a review counted for a purchase the buyer got back.
        if (reviewed._tag === "Failure") expect(Cause.squash(reviewed.cause)).toMatchObject({ _tag: "Conflict" })
        const service = yield* Effect.flatMap(CatalogStore, (s) => s.get(seller.service.id))
        expect(service).toMatchObject({ ratingCount: 0, ratingSum: 0 })
        const reputation = yield* Effect.flatMap(Reputation, (r) => r.reputationOf(seller.agentId))
        expect(reputation.factors.reviews.count).toBe(0)
        expect((yield* Effect.flatMap(Commerce, (co) => co.getTransaction(buyer.agentId, txId))).status).toBe(
          "refunded"
        )
        // On Postgres the refund really waited for the review's lock: the review went first.
        if (c.name === "postgres") expect(reviewed._tag).toBe("Success")
      })
  )
})
