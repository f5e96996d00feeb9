// WebhookDelivery: the worker's steps — outbox events fanned out into delivery rows, claimed under a
// lease fairly across endpoints (round-robin, a per-endpoint cap), sent signed, and their outcome
// recorded: retries with backoff and jitter, a failing endpoint backed off as a whole (single probes)
// and disabled after a day (docs/webhooks.md). WebhookWorker.ts runs them; the endpoints they send
// to are configured through Webhooks.
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { eventCatalogue } from "../../schema/webhooks/payloads.js"
import type { AttemptRecord, ClaimedDelivery, DeliveryRecord, EndpointRecord } from "../../schema/webhooks/records.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { Events } from "../events/Events.js"
import { Ids, Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import {
  DELIVERY_BATCH,
  DISABLE_AFTER_MS,
  FAILING_AFTER,
  FANOUT_BATCH,
  jittered,
  deliveryLeaseMs,
  MAX_ATTEMPTS,
  MAX_IN_FLIGHT_PER_ENDPOINT,
  probeDelay,
  receives,
  retryDelay,
  wants
} from "./policy.js"
import { envelope, signedHeaders } from "./signing.js"
import { WebhookStore, type WebhookStoreService } from "./WebhookStore.js"
import { WebhookTransport, type WebhookResponse } from "./WebhookTransport.js"

export interface WebhookDeliveryService {
  /** An agent's delivery rows, oldest first (outbox order), a keyset page after `afterId` (tests and operators). */
  readonly listDeliveries: WebhookStoreService["listDeliveries"]
  /** Turns new outbox events into delivery rows for subscribed, active endpoints; returns events taken. */
  readonly fanOut: (limit?: number) => Effect.Effect<number, StorageUnavailable>
  /** Claims up to `limit` deliveries under a lease, fairly across endpoints, in one short transaction. */
  readonly claimDue: (limit?: number) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageUnavailable>
  /** Sends one claimed delivery and records it; a storage outage is logged (the lease brings the row back). */
  readonly deliver: (delivery: ClaimedDelivery) => Effect.Effect<void>
  /** Claims due deliveries and sends them concurrently; returns how many. */
  readonly deliverDue: (limit?: number) => Effect.Effect<number, StorageUnavailable>
  /** One deterministic step of the worker: fan out every new event, then deliver what is due. */
  readonly runOnce: Effect.Effect<{ readonly dispatched: number; readonly delivered: number }, StorageUnavailable>
}

const iso = (ms: number) => new Date(ms).toISOString()

const make = Effect.gen(function* () {
  const store = yield* WebhookStore
  const transport = yield* WebhookTransport
  const leaseMs = deliveryLeaseMs(transport.timeoutMs)
  const events = yield* Events
  const ids = yield* Ids
  const { atomically } = yield* Transactor

  /** Turns new outbox events into delivery rows for subscribed, active endpoints; returns events taken. */
  const fanOutBatch = Effect.fnUntraced(
    function* (limit: number) {
      const now = yield* Clock.currentTimeMillis
      const at = iso(now)
      const batch = yield* store.takeNewEvents(at, limit)
      for (const { endpoint, event } of batch) {
        if (!endpoint || !receives(endpoint)) continue
        if (event.occurredAt < endpoint.createdAt || !wants(endpoint, event)) continue
        if (event.type === "webhook.disabled" && event.data.endpointId === endpoint.id) continue
        if (!Schema.is(eventCatalogue[event.type].schema)(event.data)) {
          yield* Effect.logWarning(
            `webhooks: event ${event.id} (${event.type}) does not match its documented payload schema; ` +
              "delivering it as is"
          )
        }
        yield* store.insertDelivery({
          id: yield* ids.make("whd"),
          endpointId: endpoint.id,
          agentId: endpoint.agentId,
          eventId: event.id,
          eventType: event.type,
          body: envelope(event),
          status: "pending",
          attempts: 0,
          dueAt: at,
          createdAt: at,
          updatedAt: at
        })
      }
      return batch.length
    },
    atomically,
    traced("Webhooks.fanOut")
  )
  const fanOut = (limit: number = FANOUT_BATCH) => fanOutBatch(limit)

  /** The attempt a vanished worker started and never reported. */
  const abandoned = (d: ClaimedDelivery, attempt: number, at: number) =>
    Effect.map(ids.make("wha"), (id): AttemptRecord => ({
      id,
      deliveryId: d.id,
      agentId: d.agentId,
      eventId: d.eventId,
      eventType: d.eventType,
      attempt,
      status: "failed",
      responseStatus: null,
      durationMs: 0,
      error: "no result recorded: the worker's lease expired (the request may have reached the endpoint)",
      attemptedAt: iso(at),
      nextRetryAt: iso(at)
    }))

  /**
   * The endpoint's health after an attempt: a success ends any failing period (the backlog resumes);
   * a failure counts, makes the endpoint failing at FAILING_AFTER in a row (next probe at `probeAt`),
   * and disables it DISABLE_AFTER_MS into a failing period, telling its owner. Pending deliveries stay.
   */
  const noteHealth = Effect.fnUntraced(function* (
    e: EndpointRecord,
    d: DeliveryRecord,
    attemptedAt: number,
    result: WebhookResponse,
    failures: number,
    probeAt: number | null
  ) {
    const at = iso(attemptedAt)
    const tag = `webhooks: endpoint ${e.id} of agent ${d.agentId}`
    if (result.ok) {
      if (e.failingSince !== null || e.retryAt !== null || e.consecutiveFailures > 0) {
        yield* store.updateEndpoint({ ...e, failingSince: null, consecutiveFailures: 0, retryAt: null, updatedAt: at })
        if (e.retryAt !== null) yield* Effect.logInfo(`${tag} answered again; its backlog resumes`)
      }
      return
    }
    const failingSince = e.failingSince ?? at
    const health = {
      failingSince,
      consecutiveFailures: failures,
      lastError: result.error,
      lastErrorAt: at,
      updatedAt: at
    }
    if (e.disabledAt === null && attemptedAt - Date.parse(failingSince) >= DISABLE_AFTER_MS) {
      const reason = `every delivery attempt has failed since ${failingSince} (24 hours without a 2xx answer)`
      yield* store.updateEndpoint({ ...e, ...health, retryAt: null, disabledAt: at, disabledReason: reason })
      const data = { endpointId: e.id, url: e.url, reason, failingSince, disabledAt: at }
      yield* events.emit(d.agentId, "webhook.disabled", data)
      yield* Effect.logWarning(`${tag} disabled after sustained failure (its pending deliveries are kept)`)
      return
    }
    const retryAt = probeAt === null ? null : iso(probeAt)
    yield* store.updateEndpoint({ ...e, ...health, retryAt })
    if (e.retryAt === null && retryAt !== null) {
      yield* Effect.logWarning(
        `${tag} failing after ${failures} failed attempts in a row; its backlog waits, next probe at ${retryAt}`
      )
    }
  })

  /**
   * Records one attempt's outcome: the delivery row (fenced), the attempt log, the endpoint's health.
   * While the endpoint is failing, a failed event waits for the endpoint (its own attempt count
   * never gives it up: the outage is the endpoint's, not the event's).
   */
  const record = Effect.fnUntraced(function* (
    d: ClaimedDelivery,
    seen: EndpointRecord,
    startedAt: number,
    result: WebhookResponse
  ) {
    // Lock order endpoint → delivery, as DELETE /webhook takes them; and only when its health changes.
    // (A success that saw a healthy endpoint skips the lock: if a concurrent attempt failed
    // meanwhile, its count stays until the next success or probe — at most 1, since reaching
    // FAILING_AFTER needs earlier failures that this attempt would have seen.)
    const healthy = seen.consecutiveFailures === 0 && seen.retryAt === null && seen.failingSince === null
    const locked = !result.ok || !healthy ? yield* store.getEndpointForUpdate(d.agentId) : undefined
    const current = locked && locked.id === d.endpointId ? locked : undefined
    const finishedAt = yield* Clock.currentTimeMillis
    const attempt = d.attempts
    const failures = result.ok ? 0 : (current?.consecutiveFailures ?? seen.consecutiveFailures) + 1
    const failing = !result.ok && failures >= FAILING_AFTER
    const probeAt = failing ? finishedAt + (yield* jittered(probeDelay(failures))) : null
    const final = result.ok || (!failing && attempt >= MAX_ATTEMPTS)
    const nextRetryAt = final ? null : iso(probeAt ?? finishedAt + (yield* jittered(retryDelay(attempt))))
    // While failing, the endpoint's probe time gates the row, not its own: it is due again the
    // moment the endpoint recovers (a probe's 2xx or its owner's PUT), with the rest of the backlog.
    const dueAt = failing ? iso(finishedAt) : nextRetryAt
    const applied = yield* store.finishDelivery(
      { ...d, status: result.ok ? "succeeded" : final ? "failed" : "pending", dueAt, updatedAt: iso(finishedAt) },
      attempt
    )
    // Not ours any more: the lease ran out and another worker took the row (it logs both attempts).
    if (!applied) return
    if (d.leaseExpired) yield* store.insertAttempt(yield* abandoned(d, attempt - 1, startedAt))
    yield* store.insertAttempt({
      id: yield* ids.make("wha"),
      deliveryId: d.id,
      agentId: d.agentId,
      eventId: d.eventId,
      eventType: d.eventType,
      attempt,
      status: result.ok ? "succeeded" : "failed",
      responseStatus: result.status,
      durationMs: result.durationMs,
      error: result.error,
      attemptedAt: iso(startedAt),
      nextRetryAt
    })
    if (current) yield* noteHealth(current, d, startedAt, result, failures, probeAt)
  }, atomically)

  const cancel = (d: ClaimedDelivery) =>
    atomically(store.finishDelivery({ ...d, status: "cancelled", dueAt: null }, d.attempts).pipe(Effect.asVoid))

  /**
   * Back in the queue unsent (the endpoint was paused or disabled after the claim). The claim's
   * attempt count stays (the fence needs it); no attempt is logged.
   */
  const release = (d: ClaimedDelivery, now: number) =>
    atomically(
      store
        .finishDelivery({ ...d, status: "pending", dueAt: iso(now), updatedAt: iso(now) }, d.attempts)
        .pipe(Effect.asVoid)
    )

  /** The last attempt was claimed and never reported (its worker died): log it and give up. */
  const giveUp = Effect.fnUntraced(function* (d: ClaimedDelivery, at: number) {
    const applied = yield* store.finishDelivery({ ...d, status: "failed", dueAt: null, updatedAt: iso(at) }, d.attempts)
    if (applied) yield* store.insertAttempt({ ...(yield* abandoned(d, d.attempts - 1, at)), nextRetryAt: null })
  }, atomically)

  /** Sends one claimed delivery (outside any transaction) and records the outcome. */
  const deliverOne = Effect.fnUntraced(
    function* (d: ClaimedDelivery) {
      const e = yield* store.getEndpoint(d.agentId)
      // Deleted or replaced since the event was queued: nothing to send.
      if (!e || e.id !== d.endpointId) return yield* cancel(d)
      const startedAt = yield* Clock.currentTimeMillis
      // Paused or disabled since the claim: the row waits with the rest of the backlog.
      if (!receives(e)) return yield* release(d, startedAt)
      if (d.leaseExpired && d.attempts > MAX_ATTEMPTS && e.retryAt === null) return yield* giveUp(d, startedAt)
      const headers = signedHeaders(e, d.eventId, startedAt, d.body)
      const result = yield* transport.send({ url: e.url, headers, body: d.body })
      yield* record(d, e, startedAt, result)
    },
    (effect, d) => traced("Webhooks.deliverOne", { attributes: { delivery: d.id, attempt: d.attempts } })(effect)
  )

  /** Claims up to `limit` deliveries under a lease, fairly across endpoints, in one short transaction. */
  const claimDue = (limit: number = DELIVERY_BATCH) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      atomically(store.claimDue(iso(now), iso(now + leaseMs), limit, MAX_IN_FLIGHT_PER_ENDPOINT))
    ).pipe(traced("Webhooks.claimDue"))

  /** Sends one claimed delivery and records it; a storage outage is logged (the lease brings the row back). */
  const deliver = (d: ClaimedDelivery) =>
    deliverOne(d).pipe(
      Effect.catchTag("StorageUnavailable", (err) => Effect.logWarning(`webhooks: delivery ${d.id}: ${err.message}`))
    )

  /** Claims due deliveries and sends them concurrently; returns how many. */
  const deliverDueBatch = Effect.fnUntraced(function* (limit: number) {
    const claimed = yield* claimDue(limit)
    yield* Effect.forEach(claimed, deliver, { concurrency: "unbounded", discard: true })
    return claimed.length
  }, traced("Webhooks.deliverDue"))
  const deliverDue = (limit: number = DELIVERY_BATCH) => deliverDueBatch(limit)

  /** One deterministic step of the worker: fan out every new event, then deliver what is due. */
  const runOnce = Effect.gen(function* () {
    let dispatched = 0
    for (;;) {
      const n = yield* fanOut(FANOUT_BATCH)
      dispatched += n
      if (n < FANOUT_BATCH) break
    }
    let delivered = 0
    // Until nothing is claimable: a pass claims at most MAX_IN_FLIGHT_PER_ENDPOINT per endpoint.
    for (;;) {
      const n = yield* deliverDue(DELIVERY_BATCH)
      delivered += n
      if (n === 0) break
    }
    return { dispatched, delivered }
  })

  return WebhookDelivery.of({ listDeliveries: store.listDeliveries, fanOut, claimDue, deliver, deliverDue, runOnce })
})

export class WebhookDelivery extends Context.Service<WebhookDelivery, WebhookDeliveryService>()(
  "agent-commerce/WebhookDelivery"
) {
  /** Provides the domain services it uses; only ports (stores, transport, config) stay open. */
  static readonly layer = Layer.effect(WebhookDelivery, make).pipe(Layer.provide([Events.layer]))
}
