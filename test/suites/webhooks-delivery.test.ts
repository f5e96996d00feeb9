// Webhook delivery on every storage: each subscribed event once, signed per Standard Webhooks
// (checked by the `standardwebhooks` library), retried on its backoff schedule, sent again after a
// dead worker's lease, never twice by workers running at once, at most 2 in flight per endpoint.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { atomically } from "../fixtures/atomically.js"
import {
  FAILING_AFTER,
  LEASE_MS,
  MAX_IN_FLIGHT_PER_ENDPOINT,
  RETRY_DELAYS_MS
} from "../../src/services/webhooks/policy.js"
import { WebhookDelivery } from "../../src/services/webhooks/WebhookDelivery.js"
import { Webhooks } from "../../src/services/webhooks/Webhooks.js"
import { WebhookStore } from "../../src/services/webhooks/WebhookStore.js"
import {
  T0,
  iso,
  at,
  newAgent,
  receiver,
  emit,
  recharge,
  build,
  endpointFor,
  webhookSuite
} from "../fixtures/webhooks.js"

webhookSuite("webhook delivery", (it) => {
  it.effect(
    "delivers each subscribed event once, signed per Standard Webhooks (verified by the standardwebhooks library)",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url, ["build.status_changed", "wallet.recharged"])
        rx.secrets = [secret]
        yield* at(T0 + 1000)
        const e1 = yield* emit(agentId, "build.status_changed", build)
        yield* emit(agentId, "transaction.completed", {
          transactionId: "tx_1",
          serviceId: "svc_1",
          role: "buyer",
          priceCents: 100
        })
        const e3 = yield* emit(agentId, "wallet.recharged", recharge)
        yield* emit(newAgent(), "wallet.recharged", recharge)
        yield* at(T0 + 2000)
        yield* delivery.runOnce
        expect(rx.received.map((r) => r.webhookId).sort()).toEqual([e1.id, e3.id].sort())
        for (const r of rx.received) {
          expect(r.verifiedWith).toEqual([secret])
          expect(r.timestamp).toBe(String(Math.floor((T0 + 2000) / 1000)))
          expect(r.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
          const event = r.webhookId === e1.id ? e1 : e3
          expect(r.payload).toEqual({ id: event.id, type: event.type, timestamp: event.occurredAt, data: event.data })
        }
        yield* delivery.runOnce
        yield* at(T0 + 3_600_000)
        yield* delivery.runOnce
        expect(rx.received).toHaveLength(2)
        expect([...rx.acceptedCounts().values()]).toEqual([1, 1])

        const { data } = yield* webhooks.listAttempts(agentId)
        expect(data).toHaveLength(2)
        for (const a of data) {
          expect(a).toMatchObject({
            attempt: 1,
            status: "succeeded",
            responseStatus: 204,
            error: null,
            nextRetryAt: null,
            attemptedAt: iso(T0 + 2000)
          })
          expect(a.durationMs).toBeGreaterThanOrEqual(0)
        }
        expect((yield* webhooks.listAttempts(agentId, { eventId: e3.id })).data.map((a) => a.eventType)).toEqual([
          "wallet.recharged"
        ])
        expect((yield* webhooks.listAttempts(agentId, { limit: 1 })).data).toHaveLength(1)
        expect(JSON.stringify(data)).not.toContain(secret.slice(6))
        const deliveries = yield* delivery.listDeliveries(agentId, { limit: 100 })
        expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
          ["succeeded", 1],
          ["succeeded", 1]
        ])
        // Outbox order, as keyset pages: one, then the one after it, then none.
        expect(deliveries.map((d) => d.eventId)).toEqual([e1.id, e3.id])
        const [first] = yield* delivery.listDeliveries(agentId, { limit: 1 })
        expect(first.id).toBe(deliveries[0].id)
        expect((yield* delivery.listDeliveries(agentId, { limit: 5, afterId: first.id })).map((d) => d.id)).toEqual([
          deliveries[1].id
        ])
        expect(yield* delivery.listDeliveries(agentId, { limit: 5, afterId: deliveries[1].id })).toEqual([])
      })
  )

  it.effect(
    "a receiver failing twice then succeeding gets 3 attempts on the delivery's backoff schedule, one webhook-id",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const rx = yield* receiver
        // Fewer than FAILING_AFTER failures in a row: the endpoint stays active, the event keeps its own schedule.
        rx.respond = (n) => (n < FAILING_AFTER - 1 ? 500 : 204)
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const event = yield* emit(agentId, "wallet.recharged", recharge)
        yield* delivery.runOnce
        for (let i = 0; i < FAILING_AFTER - 1; i++) {
          const [last] = (yield* webhooks.listAttempts(agentId)).data
          expect(last).toMatchObject({
            attempt: i + 1,
            status: "failed",
            responseStatus: 500,
            error: "HTTP 500: receiver says 500"
          })
          expect(yield* webhooks.getConfig(agentId)).toMatchObject({
            status: "active",
            consecutiveFailures: i + 1,
            lastError: "HTTP 500: receiver says 500",
            pendingCount: 1
          })
          const due = Date.parse(last.nextRetryAt!)
          // Not a moment early…
          yield* at(due - 1)
          yield* delivery.runOnce
          expect((yield* webhooks.listAttempts(agentId)).data).toHaveLength(i + 1)
          // …and on time.
          yield* at(due)
          yield* delivery.runOnce
        }
        const attempts = [...(yield* webhooks.listAttempts(agentId)).data].reverse()
        expect(attempts.map((a) => [a.attempt, a.status, a.responseStatus])).toEqual([
          [1, "failed", 500],
          [2, "failed", 500],
          [3, "succeeded", 204]
        ])
        expect(attempts[2].nextRetryAt).toBeNull()
        for (let i = 0; i < 2; i++) {
          const gap = Date.parse(attempts[i + 1].attemptedAt) - Date.parse(attempts[i].attemptedAt)
          expect(gap).toBe(Date.parse(attempts[i].nextRetryAt!) - Date.parse(attempts[i].attemptedAt))
          expect(gap).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i] * 0.9)
          expect(gap).toBeLessThanOrEqual(RETRY_DELAYS_MS[i] * 1.1)
        }
        expect(rx.received).toHaveLength(3)
        expect(new Set(rx.received.map((r) => r.webhookId))).toEqual(new Set([event.id]))
        expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
        expect(rx.acceptedCounts().get(event.id)).toBe(1)
        expect((yield* delivery.listDeliveries(agentId, { limit: 100 })).map((d) => [d.status, d.attempts])).toEqual([
          ["succeeded", 3]
        ])
        expect(yield* webhooks.getConfig(agentId)).toMatchObject({
          status: "active",
          failingSince: null,
          consecutiveFailures: 0,
          pendingCount: 0,
          oldestPendingAt: null,
          nextAttemptAt: null
        })
      })
  )

  it.effect(
    "a delivery claimed by a worker that died is sent after its lease expires, once; the dead worker's late result is fenced off",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const store = yield* WebhookStore
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const event = yield* emit(agentId, "wallet.recharged", recharge)
        yield* delivery.fanOut()
        // The "dead" worker: claims (lease until T0 + 60 s) and never reports.
        const claimed = (yield* atomically(store.claimDue(iso(T0), iso(T0 + LEASE_MS), 100, 2))).filter(
          (d) => d.agentId === agentId
        )
        expect(claimed.map((d) => [d.eventId, d.status, d.attempts, d.leaseExpired])).toEqual([
          [event.id, "delivering", 1, false]
        ])
        yield* delivery.runOnce
        yield* at(T0 + LEASE_MS - 1)
        yield* delivery.runOnce
        expect(rx.received).toHaveLength(0)
        yield* at(T0 + LEASE_MS)
        yield* delivery.runOnce
        expect(rx.received.map((r) => r.webhookId)).toEqual([event.id])
        expect(rx.received[0].verifiedWith).toEqual([secret])
        const attempts = (yield* webhooks.listAttempts(agentId)).data
        expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
          [2, "succeeded"],
          [1, "failed"]
        ])
        expect(attempts[1].error).toMatch(/lease expired/)
        // The dead worker wakes up and reports attempt 1: too late, the row has moved on.
        expect(yield* atomically(store.finishDelivery({ ...claimed[0], status: "failed", dueAt: null }, 1))).toBe(false)
        expect((yield* delivery.listDeliveries(agentId, { limit: 100 })).map((d) => [d.status, d.attempts])).toEqual([
          ["succeeded", 2]
        ])
        yield* at(T0 + 10 * LEASE_MS)
        yield* delivery.runOnce
        expect(rx.received).toHaveLength(1)
      })
  )

  it.effect("three workers running at once never send the same attempt twice", () =>
    Effect.gen(function* () {
      yield* at(T0)
      const webhooks = yield* Webhooks
      const delivery = yield* WebhookDelivery
      const rx = yield* receiver
      const { agentId, secret } = yield* endpointFor(rx.url)
      rx.secrets = [secret]
      const emitted = yield* Effect.forEach(
        Array.from({ length: 30 }, (_, i) => i),
        (i) => emit(agentId, "wallet.recharged", { ...recharge, balanceCents: i })
      )
      yield* Effect.all([delivery.runOnce, delivery.runOnce, delivery.runOnce], { concurrency: "unbounded" })
      yield* delivery.runOnce
      expect(rx.received).toHaveLength(30)
      expect(new Set(rx.received.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)))
      expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
      const attempts = (yield* webhooks.listAttempts(agentId, { limit: 100 })).data
      expect(attempts).toHaveLength(30)
      expect(attempts.every((a) => a.attempt === 1 && a.status === "succeeded")).toBe(true)
    })
  )

  it.effect(
    "three workers at once keep at most 2 of one endpoint's deliveries in flight, and deliver each event once",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const delivery = yield* WebhookDelivery
        const rx = yield* receiver
        let inFlight = 0
        let peak = 0
        const ids: Array<string> = []
        // A receiver that holds each request until a second one is in flight (or 1 s has passed, for
        // the last one), so the cap is reached whenever the service allows it, whatever the machine's
        // speed; it counts how many it holds at once.
        const held: Array<() => void> = []
        const release = () => {
          for (const answer of held.splice(0)) answer()
        }
        rx.raw = (req, res) => {
          inFlight++
          peak = Math.max(peak, inFlight)
          ids.push(String(req.headers["webhook-id"]))
          req.resume()
          let answered = false
          const answer = () => {
            if (answered) return
            answered = true
            inFlight--
            res.writeHead(204).end()
          }
          held.push(answer)
          // With the cap reached, both stay held a little longer: a third sent past the cap would be seen.
          if (inFlight >= MAX_IN_FLIGHT_PER_ENDPOINT) setTimeout(release, 50)
          else setTimeout(answer, 1_000)
        }
        const { agentId } = yield* endpointFor(rx.url)
        const emitted = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => emit(agentId, "wallet.recharged", { ...recharge, balanceCents: i })
        )
        yield* Effect.all([delivery.runOnce, delivery.runOnce, delivery.runOnce], { concurrency: "unbounded" })
        yield* delivery.runOnce
        expect(peak).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ENDPOINT)
        expect(peak).toBe(2)
        expect([...ids].sort()).toEqual(emitted.map((e) => e.id).sort())
      })
  )

  it.effect(
    "workers claiming at once never hold more than 2 of one endpoint's deliveries, even when a claim commits while another worker is choosing endpoints",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const delivery = yield* WebhookDelivery
        const store = yield* WebhookStore
        const rx = yield* receiver
        // Many endpoints with a backlog make choosing endpoints take long enough that another
        // worker's claim often commits in the middle of it (about every other round on Postgres
        // when the count of deliveries in flight was read before the endpoint was locked).
        const ENDPOINTS = 400
        const ROUNDS = 30
        const { agentId: first } = yield* endpointFor(rx.url)
        const template = (yield* store.getEndpoint(first))!
        const endpoints = Array.from({ length: ENDPOINTS }, (_, k) => ({
          ...template,
          id: `${template.id}_${k}`,
          agentId: `${first}_${k}`
        }))
        yield* Effect.addFinalizer(() =>
          atomically(Effect.forEach(endpoints, (e) => store.deleteEndpoint(e.agentId))).pipe(Effect.ignore)
        )
        yield* atomically(
          Effect.forEach(endpoints, (e, k) =>
            Effect.andThen(
              store.insertEndpoint(e),
              Effect.forEach(
                Array.from({ length: 5 }, (_, i) => i),
                (i) =>
                  store.insertDelivery({
                    id: `whd_race_${first}_${k}_${i}`,
                    endpointId: e.id,
                    agentId: e.agentId,
                    eventId: `evt_race_${k}_${i}`,
                    eventType: "wallet.recharged",
                    body: "{}",
                    status: "pending",
                    attempts: 0,
                    dueAt: iso(T0),
                    createdAt: iso(T0),
                    updatedAt: iso(T0)
                  })
              )
            )
          )
        )
        const heldAtOnce: Array<number> = []
        for (let round = 0; round < ROUNDS; round++) {
          const claimed = (yield* Effect.all(
            Array.from({ length: 4 }, () => delivery.claimDue(2)),
            { concurrency: "unbounded" }
          )).flat()
          expect(claimed.length).toBeGreaterThan(0)
          const perEndpoint = new Map<string, number>()
          for (const d of claimed) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1)
          heldAtOnce.push(Math.max(...perEndpoint.values()))
          // Every claim of the round is still leased: they end before the next round claims.
          yield* atomically(
            Effect.forEach(claimed, (d) =>
              store.finishDelivery({ ...d, status: "succeeded", dueAt: null, updatedAt: iso(T0) }, d.attempts)
            )
          )
        }
        expect(Math.max(...heldAtOnce)).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ENDPOINT)
      }),
    60_000
  )
})
