// The push dispatcher's caps over the real stores, on every storage (docs/fulfilment.md "Push"; the
// dispatcher's own fairness runs over a stand-in store in test/faults/orders-push-fairness.test.ts):
// - the store's due pushes give at most PUSH_PER_SELLER of any one seller, oldest first, up to the batch,
//   so a seller with a long backlog does not fill a pass;
// - the real PushDispatcher never has more than PUSH_MAX_IN_FLIGHT (32) pushes in flight in all: 40
//   orders of 10 slow sellers (4 each: each within its own cap) reach the sellers 32 at a time, the
//   last 8 once slots free, and every one is delivered once.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeNodeTransport } from "../../src/layers/webhooks/WebhookTransport.node.js"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { OrderStore } from "../../src/services/purchases/OrderStore.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { PUSH_MAX_IN_FLIGHT, PUSH_PER_SELLER } from "../../src/services/purchases/push.js"
import { PushDispatcher } from "../../src/services/purchases/PushWorker.js"
import { WebhookTransport } from "../../src/services/webhooks/WebhookTransport.js"
import type { StorageCase } from "../fixtures/db.js"
import { commerceStack, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import { startPushSeller } from "../fixtures/pushSeller.js"
import { forEachStorage } from "../fixtures/suite.js"
import { eventuallyEffect } from "../fixtures/wait.js"

const PRICE = 10
/** The wall clock, for the dispatcher's fibers: pushes go over real sockets. */
const LiveClock = Layer.effect(Clock.Clock, TestClock.withLive(Clock.clockWith(Effect.succeed)))

const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  PushDispatcher.layer.pipe(
    Layer.provideMerge(Orders.layer),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(commerceStack(storage)),
    Layer.provideMerge(
      Layer.succeed(WebhookTransport, makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 60_000 }))
    )
  )

/** A push seller of its own account at `url`; p95 60 s (a 2 min deadline: a push may start while 60 s are left). */
const pushSeller = (url: string) =>
  Effect.gen(function* () {
    const { agentId, caller } = yield* liveSellerAgent("push seller")
    const tiers = [{ ...tier("basic", PRICE), sla: { uptimePct: 99, p95LatencyMs: 60_000, supportWindow: "24/7" } }]
    const service = yield* Effect.flatMap(Catalog, (c) =>
      c.publish(caller, serviceBody("Capped", tiers, "testing", { mode: "push", url }))
    )
    return { agentId, service }
  })

const buyFrom = (buyer: Effect.Success<ReturnType<typeof fundedBuyer>>, serviceId: string, input: unknown) =>
  Effect.map(
    Effect.flatMap(Commerce, (c) => c.buy({ caller: buyer.caller, serviceId, tierId: "basic", input })),
    (p) => p.transaction!.id
  )

// Each suite has a store of its own: the due pushes read every seller's, so nothing else may be pending there.
forEachStorage(
  "due pushes: a seller's cap in the store",
  stack,
  (it) => {
    it.effect("at most PUSH_PER_SELLER of any one seller, oldest first, up to the batch", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-28T14:00:00.000Z"))
        const buyer = yield* fundedBuyer(10_000)
        const backlog = yield* pushSeller("https://backlog.example/o")
        const small = yield* pushSeller("https://small.example/o")
        const other = yield* pushSeller("https://other.example/o")
        const placed = new Map<string, Array<string>>()
        // Interleaved, a millisecond apart: the backlog's 7 orders, the small seller's 2, the other's 5.
        const plan = [backlog, backlog, other, backlog, small, backlog, other, backlog, other, small, backlog]
        plan.push(backlog, other, other)
        for (const [i, s] of plan.entries()) {
          const id = yield* buyFrom(buyer, s.service.id, i)
          placed.set(s.agentId, [...(placed.get(s.agentId) ?? []), id])
          yield* TestClock.adjust(1)
        }
        expect(plan.filter((s) => s === backlog)).toHaveLength(7)
        const store = yield* OrderStore
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const due = yield* store.duePushes(now, PUSH_PER_SELLER, 100)
        const of = (agentId: string) => due.filter((o) => o.sellerAgentId === agentId).map((o) => o.id)
        // Each seller's oldest, at most 4: the backlog's first 4 of 7, the small seller's 2, the other's first 4 of 5.
        expect(of(backlog.agentId)).toEqual(placed.get(backlog.agentId)!.slice(0, PUSH_PER_SELLER))
        expect(of(small.agentId)).toEqual(placed.get(small.agentId))
        expect(of(other.agentId)).toEqual(placed.get(other.agentId)!.slice(0, PUSH_PER_SELLER))
        expect(due).toHaveLength(10)
        // Oldest first overall, and the batch's limit cuts the oldest-first list.
        const times = due.map((o) => o.push!.nextAttemptAt!)
        expect(times).toEqual([...times].sort())
        const firstSix = yield* store.duePushes(now, PUSH_PER_SELLER, 6)
        expect(firstSix.map((o) => o.id)).toEqual(due.slice(0, 6).map((o) => o.id))
        // A smaller cap is the cap: one each, the oldest.
        const one = yield* store.duePushes(now, 1, 100)
        expect(one.map((o) => o.id).sort()).toEqual(
          [backlog, small, other].map((s) => placed.get(s.agentId)![0]!).sort()
        )
        // Not yet due (a next attempt in the future) or accepted: not given.
        const [first] = placed.get(small.agentId)!
        const order = (yield* store.get(first!))!
        yield* store.recordPushAttempt(first!, { ...order.push!, nextAttemptAt: "2026-11-28T15:00:00.000Z" })
        expect((yield* store.duePushes(now, PUSH_PER_SELLER, 100)).map((o) => o.id)).not.toContain(first)
      })
    )
  },
  { workers: false, orderWaitMs: 0 }
)

forEachStorage(
  "the dispatcher's cap in all",
  (storage) => stack(storage).pipe(Layer.provide(LiveClock)),
  (it) => {
    it.effect(
      `40 orders of 10 slow sellers: never more than ${PUSH_MAX_IN_FLIGHT} pushes in flight, the rest once slots free, each delivered once`,
      () =>
        TestClock.withLive(
          Effect.scoped(
            Effect.gen(function* () {
              let inFlight = 0
              let most = 0
              let open: () => void = () => {}
              const gate = new Promise<void>((resolve) => (open = resolve))
              const server = yield* Effect.acquireRelease(
                Effect.promise(() =>
                  startPushSeller(async () => {
                    inFlight++
                    most = Math.max(most, inFlight)
                    await gate
                    inFlight--
                    return { status: 200, body: { status: "delivered", output: "done" } }
                  })
                ),
                (s) => Effect.promise(() => s.close())
              )
              const sellers = yield* Effect.forEach(Array.from({ length: 10 }), () => pushSeller(server.url))
              const buyer = yield* fundedBuyer(10_000)
              // All 40 placed first: the dispatcher's first pass finds them all due (4 of each seller,
              // within the seller's cap) and decides in that one pass how many it may start.
              const ids = yield* Effect.forEach(
                sellers.flatMap((s) => Array.from({ length: PUSH_PER_SELLER }, (_, i) => [s, i] as const)),
                ([s, i]) => buyFrom(buyer, s.service.id, i),
                { concurrency: 8 }
              )
              expect(ids).toHaveLength(40)
              expect(server.pushes).toHaveLength(0)
              // The process's dispatcher, with its default caps (4 a seller, 32 in all).
              yield* Effect.flatMap(PushDispatcher, (d) => d.run())
              // The seller endpoints hold every push: the dispatcher fills its 32 slots…
              yield* eventuallyEffect(
                Effect.sync(() => inFlight),
                (n) => n >= PUSH_MAX_IN_FLIGHT
              )
              // …and no more: a 33rd started in that pass (or a later one: they run every 250 ms) would
              // reach the seller within this window.
              yield* Effect.sleep("750 millis")
              expect([inFlight, most, server.pushes.length]).toEqual([
                PUSH_MAX_IN_FLIGHT,
                PUSH_MAX_IN_FLIGHT,
                PUSH_MAX_IN_FLIGHT
              ])
              open()
              const orders = yield* Orders
              const ended = yield* eventuallyEffect(
                Effect.forEach(ids, (id) => orders.get(buyer.agentId, id)),
                (os) => os.every((o) => o.status !== "pending"),
                { timeoutMs: 60_000 }
              )
              expect(ended.map((o) => o.status)).toEqual(ids.map(() => "delivered"))
              expect(most).toBe(PUSH_MAX_IN_FLIGHT)
              expect(new Set(server.pushes.map((p) => p.webhookId)).size).toBe(40)
              expect(server.pushes).toHaveLength(40)
              expect(yield* Effect.flatMap(LedgerStore, (l) => l.balance(walletAccount(buyer.agentId)))).toBe(
                10_000 - 40 * PRICE
              )
            })
          )
        ),
      90_000
    )
  },
  { workers: false, orderWaitMs: 0 }
)
