// Webhook endpoint health on every storage: after 3 failures in a row an endpoint is failing (its
// backlog waits for single probes that back off), after 24 hours disabled with its owner told; no
// pending event is dropped, and the first success or the owner's PUT resumes it oldest first.
import { expect } from "@effect/vitest"
import { Cause, Effect, Logger } from "effect"
import { Events } from "../../src/services/events/Events.js"
import { DISABLE_AFTER_MS, MAX_ATTEMPTS, PROBE_DELAYS_MS } from "../../src/services/webhooks/policy.js"
import { WebhookDelivery } from "../../src/services/webhooks/WebhookDelivery.js"
import { Webhooks } from "../../src/services/webhooks/Webhooks.js"
import { T0, iso, at, receiver, emit, recharge, endpointFor, webhookSuite } from "../fixtures/webhooks.js"

/** Log lines captured by the disabling test (a Logger writes here). */
const captured: Array<string> = []

webhookSuite("webhook endpoint health", (it) => {
  it.effect(
    "after 3 failures in a row the endpoint is failing: its backlog waits, single probes back off, the first success resumes it oldest first",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const rx = yield* receiver
        rx.respond = () => 500
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const emitted: Array<string> = []
        for (let i = 0; i < 7; i++)
          emitted.push((yield* emit(agentId, "wallet.recharged", { ...recharge, balanceCents: i })).id)
        yield* delivery.runOnce
        // Two at a time (the per-endpoint cap): e1+e2 fail, then e3+e4 fail — the third failure in a row makes it failing.
        expect(rx.received.map((r) => r.webhookId).sort()).toEqual(emitted.slice(0, 4).sort())
        const failing = yield* webhooks.getConfig(agentId)
        expect(failing).toMatchObject({
          status: "failing",
          consecutiveFailures: 4,
          pendingCount: 7,
          oldestPendingAt: iso(T0),
          failingSince: iso(T0)
        })
        expect(failing.lastError).toBe("HTTP 500: receiver says 500")
        const probeAt = Date.parse(failing.nextAttemptAt!)
        // The 4th failure in a row schedules the 2nd probe delay (30 s ± 10 %).
        expect(probeAt - T0).toBeGreaterThanOrEqual(PROBE_DELAYS_MS[1] * 0.9)
        expect(probeAt - T0).toBeLessThanOrEqual(PROBE_DELAYS_MS[1] * 1.1 + 1000)

        // The backlog (e5…e7 never tried, e1/e2 due again after 5 s) waits for the probe.
        yield* at(probeAt - 1)
        yield* delivery.runOnce
        expect(rx.received).toHaveLength(4)
        expect((yield* webhooks.getConfig(agentId)).oldestPendingAgeSeconds).toBe(Math.floor((probeAt - 1 - T0) / 1000))
        // One probe: the oldest event. It fails: the next probe is further out.
        yield* at(probeAt)
        yield* delivery.runOnce
        expect(rx.received.map((r) => r.webhookId)).toEqual([
          ...rx.received.slice(0, 4).map((r) => r.webhookId),
          emitted[0]
        ])
        const still = yield* webhooks.getConfig(agentId)
        expect(still).toMatchObject({ status: "failing", consecutiveFailures: 5, pendingCount: 7 })
        const next = Date.parse(still.nextAttemptAt!)
        expect(next - probeAt).toBeGreaterThanOrEqual(PROBE_DELAYS_MS[2] * 0.9)
        expect(next - probeAt).toBeLessThanOrEqual(PROBE_DELAYS_MS[2] * 1.1)
        // The attempt log tells when the waiting event goes next.
        const [probe] = (yield* webhooks.listAttempts(agentId)).data
        expect(probe).toMatchObject({
          eventId: emitted[0],
          attempt: 2,
          status: "failed",
          nextRetryAt: still.nextAttemptAt
        })

        // The receiver is back: the next probe succeeds and the whole backlog follows, oldest first, two at a time.
        rx.respond = () => 204
        yield* at(next)
        yield* delivery.runOnce
        const accepted = rx.received.filter((r) => r.status === 204).map((r) => r.webhookId)
        expect([...accepted].sort()).toEqual([...emitted].sort())
        expect(accepted[0]).toBe(emitted[0])
        // Per-endpoint order: each event arrives within one place of its outbox position (2 in flight at once).
        accepted.forEach((id, position) => expect(Math.abs(emitted.indexOf(id) - position), id).toBeLessThanOrEqual(1))
        expect([...rx.acceptedCounts().values()].every((n) => n === 1)).toBe(true)
        expect(yield* webhooks.getConfig(agentId)).toMatchObject({
          status: "active",
          consecutiveFailures: 0,
          failingSince: null,
          pendingCount: 0,
          nextAttemptAt: null
        })
        expect((yield* delivery.listDeliveries(agentId, { limit: 100 })).every((d) => d.status === "succeeded")).toBe(
          true
        )
      })
  )

  it.effect(
    "an endpoint failing for 24 hours is disabled, its owner told; its pending events are kept and go out when it is turned back on",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        captured.length = 0
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const events = yield* Events
        const rx = yield* receiver
        rx.respond = () => 500
        const { agentId, put, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const event = yield* emit(agentId, "wallet.recharged", recharge)
        const statuses: Array<string> = []
        yield* delivery.runOnce
        statuses.push((yield* webhooks.getConfig(agentId)).status)
        for (let i = 0; i < 100 && statuses.at(-1) !== "disabled"; i++) {
          const [last] = (yield* webhooks.listAttempts(agentId, { limit: 1 })).data
          yield* at(Date.parse(last.nextRetryAt!))
          yield* delivery.runOnce
          statuses.push((yield* webhooks.getConfig(agentId)).status)
        }
        const attempts = [...(yield* webhooks.listAttempts(agentId, { limit: 100 })).data].reverse()
        // 2 retries on the event's schedule, failing from the 3rd failure, then probes 5 s, 30 s, 2 min, 10 min, 30 min, hourly.
        expect(statuses.slice(0, 3)).toEqual(["active", "active", "failing"])
        expect(new Set(statuses.slice(2, -1))).toEqual(new Set(["failing"]))
        expect(statuses.at(-1)).toBe("disabled")
        const last = attempts.at(-1)!
        expect(Date.parse(attempts.at(-2)!.attemptedAt) - T0).toBeLessThan(DISABLE_AFTER_MS)
        expect(Date.parse(last.attemptedAt) - T0).toBeGreaterThanOrEqual(DISABLE_AFTER_MS)
        expect(Date.parse(last.attemptedAt) - T0).toBeLessThan(DISABLE_AFTER_MS + 1.1 * PROBE_DELAYS_MS.at(-1)!)
        // Nothing dropped: the event stays pending past MAX_ATTEMPTS while the outage is the endpoint's.
        expect(attempts.length).toBeGreaterThan(MAX_ATTEMPTS)
        // The log read as keyset pages of 7 (all, then the one event's) is the same list, newest first.
        for (const eventId of [undefined, event.id]) {
          const paged: Array<string> = []
          let cursor: string | undefined
          for (let pages = 0; pages < 100; pages++) {
            const page: { readonly data: ReadonlyArray<{ readonly id: string }>; readonly nextCursor: string | null } =
              yield* webhooks.listAttempts(agentId, { limit: 7, eventId, cursor })
            expect(page.data.length).toBeLessThanOrEqual(7)
            paged.push(...page.data.map((a) => a.id))
            if (page.nextCursor === null) break
            cursor = page.nextCursor
          }
          expect(paged, `paged by ${eventId ?? "agent"}`).toEqual([...attempts].reverse().map((a) => a.id))
        }
        expect((yield* webhooks.listAttempts(agentId, { eventId: "evt_none" })).data).toEqual([])
        const bad = yield* Effect.flip(webhooks.listAttempts(agentId, { cursor: "not-a-cursor" }))
        expect(bad).toMatchObject({ _tag: "InvalidInput", field: "cursor" })
        expect((yield* delivery.listDeliveries(agentId, { limit: 100 })).map((d) => [d.status, d.attempts])).toEqual([
          ["pending", attempts.length]
        ])

        const config = yield* webhooks.getConfig(agentId)
        expect(config).toMatchObject({
          status: "disabled",
          enabled: true,
          failingSince: iso(T0),
          disabledAt: last.attemptedAt,
          pendingCount: 1,
          nextAttemptAt: null
        })
        expect(config.disabledReason).toMatch(/24 hours without a 2xx answer/)
        const [notice] = yield* events.listForAgent(agentId, 1)
        expect(notice.type).toBe("webhook.disabled")
        expect(notice.data).toMatchObject({ endpointId: put.webhook.id, url: rx.url, failingSince: iso(T0) })

        // Disabled: nothing is sent, new events are not queued.
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* at(Date.parse(last.attemptedAt) + 3 * 3_600_000)
        yield* delivery.runOnce
        expect(rx.received).toHaveLength(attempts.length)
        expect(rx.received.every((r) => r.webhookId === event.id && r.verifiedWith.length === 1)).toBe(true)
        expect(yield* Effect.flip(webhooks.sendTest(agentId))).toMatchObject({ _tag: "Conflict", state: "disabled" })

        // The owner fixes the receiver and turns the endpoint back on: the kept event goes out, then the ping.
        const back = yield* webhooks.put(agentId, { url: rx.url })
        expect(back.webhook).toMatchObject({
          status: "active",
          failingSince: null,
          disabledAt: null,
          disabledReason: null,
          consecutiveFailures: 0,
          pendingCount: 1
        })
        rx.respond = () => 204
        const ping = yield* webhooks.sendTest(agentId)
        yield* delivery.runOnce
        // Both at once (2 in flight per endpoint), so in either order.
        expect(
          rx.received
            .slice(attempts.length)
            .map((r) => r.webhookId)
            .sort()
        ).toEqual([event.id, ping.eventId].sort())
        expect(rx.acceptedCounts().get(event.id)).toBe(1)
        expect(captured.join("\n")).not.toContain(secret.slice(6))
        expect(
          captured.some((l) =>
            l.includes(`endpoint ${put.webhook.id} of agent ${agentId} failing after 3 failed attempts in a row`)
          )
        ).toBe(true)
        expect(captured.some((l) => l.includes(`endpoint ${put.webhook.id} of agent ${agentId} disabled`))).toBe(true)
      }).pipe(
        Effect.provide(
          Logger.layer([
            Logger.make(({ cause, message }) => {
              captured.push(
                `${[message].flat().map(String).join(" ")} ${cause.reasons.length === 0 ? "" : Cause.pretty(cause)}`
              )
            })
          ])
        )
      )
  )
})
