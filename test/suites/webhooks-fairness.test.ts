// Webhook fairness on every storage: claims go round-robin between endpoints, at most 2 of one
// endpoint's deliveries in flight; an endpoint that never answers does not hold up another's events.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { Socket } from "node:net"
import { TestClock } from "effect/testing"
import { vi } from "vitest"
import { atomically } from "../fixtures/atomically.js"
import { Events } from "../../src/services/events/Events.js"
import { LEASE_MS, MAX_IN_FLIGHT_PER_ENDPOINT } from "../../src/services/webhooks/policy.js"
import { WebhookDelivery } from "../../src/services/webhooks/WebhookDelivery.js"
import { Webhooks } from "../../src/services/webhooks/Webhooks.js"
import { WebhookStore } from "../../src/services/webhooks/WebhookStore.js"
import { runWebhookWorker } from "../../src/services/webhooks/WebhookWorker.js"
import { eventually, eventuallyEffect } from "../fixtures/wait.js"
import { T0, iso, at, receiver, emit, recharge, endpointFor, webhookSuite } from "../fixtures/webhooks.js"

webhookSuite(
  "webhook fairness",
  (it) => {
    it.effect("claims are fair: endpoints round-robin, at most 2 of one endpoint's deliveries in flight", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const store = yield* WebhookStore
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const x = yield* endpointFor("http://127.0.0.1:9/x")
        const y = yield* endpointFor("http://127.0.0.1:9/y")
        for (let i = 0; i < 10; i++) yield* emit(x.agentId, "wallet.recharged", recharge)
        yield* emit(y.agentId, "wallet.recharged", recharge)
        yield* emit(y.agentId, "wallet.recharged", recharge)
        yield* delivery.fanOut()
        const ours = new Set([x.agentId, y.agentId])
        const claim = (ms: number, limit: number) =>
          Effect.map(
            atomically(store.claimDue(iso(ms), iso(ms + LEASE_MS), limit, MAX_IN_FLIGHT_PER_ENDPOINT)),
            (rows) => rows.filter((d) => ours.has(d.agentId)).map((d) => d.agentId)
          )
        // One at a time: the endpoints alternate although x queued its ten first.
        const one = [
          yield* claim(T0 + 1, 1),
          yield* claim(T0 + 2, 1),
          yield* claim(T0 + 3, 1),
          yield* claim(T0 + 4, 1)
        ].flat()
        expect(one[0]).not.toBe(one[1])
        expect(one[2]).toBe(one[0])
        expect(one[3]).toBe(one[1])
        // Both at the cap now: nothing more until a lease ends.
        expect(yield* claim(T0 + 5, 10)).toEqual([])
        // Leases over: a claim of 10 takes 2 (expired) rows from each, never more than the cap from x.
        const again = yield* claim(T0 + 4 + LEASE_MS, 10)
        expect(again.filter((a) => a === x.agentId)).toHaveLength(2)
        expect(again.filter((a) => a === y.agentId)).toHaveLength(2)
        expect((yield* webhooks.getConfig(x.agentId)).pendingCount).toBe(10)
      })
    )

    it.effect(
      "an endpoint that accepts and never answers, with 400 events waiting, holds its 2 slots and nothing more: another endpoint's 50 events each arrive while those 2 still hang; fixed, its backlog arrives once each",
      () =>
        Effect.gen(function* () {
          const webhooks = yield* Webhooks
          const delivery = yield* WebhookDelivery
          const fast = yield* receiver
          const dead = yield* receiver
          // A hung server: the connection is accepted, no answer ever comes (the transport here waits
          // far longer than this test runs). It counts the requests it was sent and holds their sockets.
          const hung = new Set<Socket>()
          let deadRequests = 0
          dead.raw = (req) => {
            deadRequests++
            hung.add(req.socket)
            req.socket.once("close", () => hung.delete(req.socket))
          }
          // A running clock for this one: the worker's loops run for real. Date runs on from where the
          // file set it (years ahead) rather than jumping back to today: an embedded store whose Date
          // goes back re-arms its idle timers in a loop (PGlite's setitimer, thousands of
          // TimeoutOverflowWarnings) until it closes.
          vi.useFakeTimers({ toFake: ["Date"], now: Date.now(), shouldAdvanceTime: true })
          yield* Effect.addFinalizer(() => Effect.sync(() => vi.useFakeTimers({ toFake: ["Date"] })))
          yield* TestClock.withLive(
            Effect.scoped(
              Effect.gen(function* () {
                // Created on the real clock too (events older than their endpoint are not sent).
                const b = yield* endpointFor(fast.url)
                const a = yield* endpointFor(dead.url)
                yield* runWebhookWorker({ tickMs: 100 })
                const backlog = yield* atomically(
                  Effect.forEach(
                    Array.from({ length: 400 }, (_, i) => i),
                    (i) =>
                      Effect.flatMap(Events, (e) =>
                        e.emit(a.agentId, "wallet.recharged", { ...recharge, balanceCents: i })
                      )
                  )
                )
                // The dead endpoint takes its share (2 slots) and hangs in both.
                yield* Effect.promise(() =>
                  eventually(
                    () => hung.size,
                    (n) => n === MAX_IN_FLIGHT_PER_ENDPOINT,
                    { message: "the dead endpoint holds its slots" }
                  )
                )
                // B's events, one at a time: each arrives while A's two attempts still hang, and A was
                // sent nothing more meanwhile — B never waits behind A, whatever A's backlog.
                for (let i = 0; i < 50; i++) {
                  const before = fast.received.length
                  const event = yield* emit(b.agentId, "wallet.recharged", { ...recharge, balanceCents: i })
                  yield* Effect.promise(() =>
                    eventually(
                      () => fast.received.length,
                      (n) => n > before,
                      { message: `B's event ${i} delivered` }
                    )
                  )
                  expect(fast.received[before].webhookId).toBe(event.id)
                  expect({ hanging: hung.size, sentToDead: deadRequests }, `when B's event ${i} arrived`).toEqual({
                    hanging: MAX_IN_FLIGHT_PER_ENDPOINT,
                    sentToDead: MAX_IN_FLIGHT_PER_ENDPOINT
                  })
                }
                expect((yield* webhooks.getConfig(a.agentId)).pendingCount).toBe(400)

                // A is fixed: its hung connections drop (two failed attempts, fewer than make it failing)
                // and its owner says so with a PUT: the whole backlog arrives, each event once.
                dead.raw = undefined
                for (const socket of hung) socket.destroy()
                yield* webhooks.put(a.agentId, { url: dead.url })
                const accepted = yield* Effect.promise(() =>
                  eventually(
                    () => dead.acceptedCounts(),
                    (m) => m.size === 400,
                    { timeoutMs: 60_000, message: "A's backlog delivered" }
                  )
                )
                expect([...accepted.keys()].sort()).toEqual(backlog.map((e) => e.id).sort())
                expect([...accepted.values()].every((n) => n === 1)).toBe(true)
                // The receiver has answered the last ones; the worker records those answers just after.
                yield* eventuallyEffect(webhooks.getConfig(a.agentId), (c) => c.pendingCount === 0, {
                  message: "A's backlog recorded as delivered"
                })
                expect(
                  (yield* delivery.listDeliveries(a.agentId, { limit: 100 })).every((d) => d.status === "succeeded")
                ).toBe(true)
              })
            )
          )
        }),
      120_000
    )
  },
  { timeoutMs: 120_000 }
)
