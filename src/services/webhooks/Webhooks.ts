// Webhooks: each agent's endpoint (URL, event filter, signing secret) and the durable delivery of
// outbox events to it — fan-out into delivery rows, leased claims, Standard Webhooks signatures,
// retries with backoff and jitter, claims fair across endpoints (round-robin, a per-endpoint cap), a
// failing endpoint backed off as a whole (single probes) and disabled after a day (docs/webhooks.md).
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Random, Schema, Layer } from "effect"
import { createHmac } from "node:crypto"
import { Conflict, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import { type DomainEvent, eventTypes } from "../../schema/events/events.js"
import {
  type AttemptRecord,
  type BacklogSummary,
  type ClaimedDelivery,
  type DeliveryRecord,
  type EndpointRecord
} from "../../schema/webhooks/records.js"
import { DeliveryAttempt } from "../../schema/webhooks/deliveries.js"
import {
  type EventFilter,
  type PutWebhookBody,
  type PutWebhookResponse,
  WebhookConfig,
  type WebhookStatus
} from "../../schema/webhooks/endpoint.js"
import { eventCatalogue } from "../../schema/webhooks/payloads.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"

// ---------------------------------------------------------------------------------------------
// Ports

/** Storage port: endpoints, delivery rows (the per-endpoint queue) and the attempt log. */
export class WebhookStore extends Context.Service<
  WebhookStore,
  {
    readonly getEndpoint: (agentId: string) => Effect.Effect<EndpointRecord | undefined, StorageUnavailable>
    /** The agent's endpoint, locked for this unit of work. */
    readonly getEndpointForUpdate: (agentId: string) => Effect.Effect<EndpointRecord | undefined, StorageUnavailable>
    /** Fails with Conflict when the agent already has an endpoint (two concurrent creations). */
    readonly insertEndpoint: (record: EndpointRecord) => Effect.Effect<void, StorageUnavailable | Conflict>
    readonly updateEndpoint: (record: EndpointRecord) => Effect.Effect<void, StorageUnavailable>
    /** Removes the endpoint with its deliveries and attempts; false when there was none. */
    readonly deleteEndpoint: (agentId: string) => Effect.Effect<boolean, StorageUnavailable>
    /**
     * Up to `limit` outbox events not yet fanned out, oldest first, each with its agent's endpoint,
     * marked as fanned out in this unit of work (rows another worker holds are skipped). Events of
     * agents without an endpoint may be marked without being returned.
     */
    readonly takeNewEvents: (
      now: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<{ readonly event: DomainEvent; readonly endpoint: EndpointRecord | undefined }>, StorageUnavailable>
    /** Inserts a delivery; a second row for the same (endpoint, event) is ignored. */
    readonly insertDelivery: (record: DeliveryRecord) => Effect.Effect<void, StorageUnavailable>
    /**
     * Claims up to `limit` deliveries at `now`, fairly across endpoints: endpoints that are enabled,
     * not disabled and have claimable work are visited least recently served first (round-robin).
     * A healthy endpoint (`retryAt` null) gives its due rows — pending ones whose time has come and
     * leased ones whose lease expired — oldest first (outbox order), while fewer than `perEndpoint`
     * of its rows hold an unexpired lease. A failing endpoint (`retryAt` set) gives one row, its
     * oldest open one (the probe), once `retryAt` has come and none of its rows is in flight. Each
     * claimed row becomes `delivering` with one more attempt and a lease until `leaseUntil`.
     * Endpoints and rows another worker holds are skipped (SKIP LOCKED), so replicas share the caps.
     */
    readonly claimDue: (
      now: string,
      leaseUntil: string,
      limit: number,
      perEndpoint: number
    ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageUnavailable>
    /** The endpoint's open deliveries: how many, the oldest, the next due (indexed reads). */
    readonly backlog: (endpointId: string) => Effect.Effect<BacklogSummary, StorageUnavailable>
    /** Writes the outcome only if the row is still the claimed attempt (status delivering, same attempts). */
    readonly finishDelivery: (record: DeliveryRecord, claimedAttempt: number) => Effect.Effect<boolean, StorageUnavailable>
    readonly insertAttempt: (record: AttemptRecord) => Effect.Effect<void, StorageUnavailable>
    /**
     * Up to `limit` attempts of the agent's endpoint (of one event when `eventId` is given), newest
     * first, starting after the attempt `beforeId` (a keyset page on (agent, seq) or (agent, event,
     * seq); an unknown `beforeId` gives an empty page).
     */
    readonly listAttempts: (
      agentId: string,
      page: { readonly limit: number; readonly eventId?: string | undefined; readonly beforeId?: string | undefined }
    ) => Effect.Effect<ReadonlyArray<AttemptRecord>, StorageUnavailable>
    /**
     * Up to `limit` deliveries of the agent's endpoint, oldest first (outbox order), starting after
     * the delivery `afterId` (a keyset page on (agent, seq); tests and operators).
     */
    readonly listDeliveries: (
      agentId: string,
      page: { readonly limit: number; readonly afterId?: string | undefined }
    ) => Effect.Effect<ReadonlyArray<DeliveryRecord>, StorageUnavailable>
  }
>()("WebhookStore") {}

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface WebhookResponse {
  /** A 2xx answer. */
  readonly ok: boolean
  readonly status: number | null
  readonly durationMs: number
  readonly error: string | null
}

/** Network port: the URL policy and the one POST. The Node implementation is src/layers/webhooks/WebhookTransport.node.ts. */
export class WebhookTransport extends Context.Service<
  WebhookTransport,
  {
    /** Configuration-time check: syntax, scheme, and every address the host resolves to (400 naming the reason). */
    readonly check: (url: string) => Effect.Effect<void, InvalidInput>
    /** One POST: resolves and checks again, connects to the checked address, with timeout and body cap. Never fails. */
    readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse>
  }
>()("WebhookTransport") {}

// ---------------------------------------------------------------------------------------------
// The numbers (docs/webhooks.md; test/suites/webhooks.test.ts pins them)

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** Delay before retry n (after attempt n fails): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
/** The first try plus one per retry delay: 8. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
/** Each delay is scaled by a uniform factor in [1 − JITTER, 1 + JITTER]. */
export const JITTER = 0.1
/** An endpoint whose attempts have all failed for this long (no 2xx in between) is disabled. */
export const DISABLE_AFTER_MS = 24 * HOUR
/** Failed attempts in a row (any event) after which the endpoint is "failing": its backlog waits, single probes go out. */
export const FAILING_AFTER = 3
/** Delay before probe n of a failing endpoint: 5 s, 30 s, 2 min, 10 min, 30 min, then hourly. */
export const PROBE_DELAYS_MS: ReadonlyArray<number> = [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR]
/** Deliveries of one endpoint in flight at once (all workers, all replicas): a slow endpoint holds at most this many slots. */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 2
/** A claimed delivery is the claimer's for this long; then any worker may take it back. */
export const LEASE_MS = 60 * SECOND
/** Per attempt: DNS, connect, send and response headers; then the body is read up to the cap. */
export const DELIVERY_TIMEOUT_MS = 10 * SECOND
/** Within that: the TCP (and TLS) connection must be up this soon, so a dead address costs about a second. */
export const CONNECT_TIMEOUT_MS = 1 * SECOND
export const MAX_RESPONSE_BYTES = 64 * 1024
/** After a rotation, deliveries carry a second signature made with the previous secret for this long. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * HOUR
export const SECRET_BYTES = 32
export const FANOUT_BATCH = 200
export const DELIVERY_BATCH = 10
export const DEFAULT_ATTEMPTS_LIMIT = 50

// ---------------------------------------------------------------------------------------------
// Pure helpers

export const statusOf = (e: EndpointRecord): WebhookStatus =>
  e.disabledAt !== null ? "disabled" : !e.enabled ? "paused" : e.retryAt !== null ? "failing" : "active"

/** Endpoints whose events are queued (fan-out) and sent (claims): paused and disabled ones keep what they have. */
export const receives = (e: EndpointRecord): boolean => e.enabled && e.disabledAt === null

const noBacklog: BacklogSummary = { pending: 0, oldestCreatedAt: null, nextDueAt: null }

/** When the next attempt may go: the probe while failing, else the earliest due row (not before now). */
const nextAttemptOf = (e: EndpointRecord, b: BacklogSummary, nowMs: number): string | null => {
  if (!receives(e) || b.pending === 0) return null
  if (e.retryAt !== null) return e.retryAt
  if (b.nextDueAt === null) return null
  return Date.parse(b.nextDueAt) > nowMs ? b.nextDueAt : new Date(nowMs).toISOString()
}

export const toConfig = (e: EndpointRecord, backlog: BacklogSummary = noBacklog, nowMs: number = Date.parse(e.updatedAt)): WebhookConfig =>
  WebhookConfig.make({
    id: e.id,
    url: e.url,
    events: [...e.events],
    enabled: e.enabled,
    status: statusOf(e),
    disabledReason: e.disabledReason,
    disabledAt: e.disabledAt,
    failingSince: e.failingSince,
    previousSecretExpiresAt: e.previousSecretExpiresAt,
    consecutiveFailures: e.consecutiveFailures,
    lastError: e.lastError,
    lastErrorAt: e.lastErrorAt,
    pendingCount: backlog.pending,
    oldestPendingAt: backlog.oldestCreatedAt,
    oldestPendingAgeSeconds: backlog.oldestCreatedAt === null ? null : Math.max(0, Math.floor((nowMs - Date.parse(backlog.oldestCreatedAt)) / 1000)),
    nextAttemptAt: nextAttemptOf(e, backlog, nowMs),
    createdAt: e.createdAt,
    updatedAt: e.updatedAt
  })

export const toAttempt = (a: AttemptRecord): DeliveryAttempt =>
  DeliveryAttempt.make({
    id: a.id,
    deliveryId: a.deliveryId,
    eventId: a.eventId,
    eventType: a.eventType,
    attempt: a.attempt,
    status: a.status,
    responseStatus: a.responseStatus,
    durationMs: a.durationMs,
    error: a.error,
    attemptedAt: a.attemptedAt,
    nextRetryAt: a.nextRetryAt
  })

/** "*" alone, or the named types once each, in catalogue order. */
export const normalizeFilter = (events: ReadonlyArray<EventFilter> | undefined): ReadonlyArray<EventFilter> => {
  if (events === undefined || events.includes("*")) return ["*"]
  return eventTypes.filter((t) => events.includes(t))
}

/** Test pings go to the endpoint whatever its filter. */
export const wants = (e: EndpointRecord, event: DomainEvent): boolean =>
  event.type === "webhook.test" || e.events.includes("*") || e.events.includes(event.type)

/** The delivery body: the Standard Webhooks envelope plus the event id. */
export const envelope = (event: DomainEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, timestamp: event.occurredAt, data: event.data })

/** `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed with the secret's decoded bytes. */
export const signature = (secret: string, id: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`

/** The three Standard Webhooks headers; during a rotation's grace period, two space-separated signatures. */
export const signedHeaders = (e: EndpointRecord, id: string, nowMs: number, body: string): Record<string, string> => {
  const ts = Math.floor(nowMs / 1000)
  const signatures = [signature(e.secret, id, ts, body)]
  if (e.previousSecret !== null && e.previousSecretExpiresAt !== null && Date.parse(e.previousSecretExpiresAt) > nowMs) {
    signatures.push(signature(e.previousSecret, id, ts, body))
  }
  return {
    "content-type": "application/json",
    "user-agent": "agent-commerce-webhooks/1.0",
    "webhook-id": id,
    "webhook-timestamp": String(ts),
    "webhook-signature": signatures.join(" ")
  }
}

const iso = (ms: number) => new Date(ms).toISOString()

const noEndpoint = (agentId: string) => new NotFound({ message: "no webhook is configured for this agent; PUT /webhook first", resource: "webhook", id: agentId })

// ---------------------------------------------------------------------------------------------

export class Webhooks extends Context.Service<Webhooks>()("Webhooks", {
  make: Effect.gen(function* () {
    const store = yield* WebhookStore
    const transport = yield* WebhookTransport
    const events = yield* Events
    const ids = yield* Ids
    const { atomically } = yield* Transactor

    const newSecret = Effect.map(ids.secret(SECRET_BYTES), (b64url) => `whsec_${Buffer.from(b64url, "base64url").toString("base64")}`)

    // ------------------------------------------------------------------ configuration

    /** The configuration with its health and backlog, as of now. */
    const view = Effect.fnUntraced(function* (e: EndpointRecord) {
      const backlog = yield* store.backlog(e.id)
      return toConfig(e, backlog, yield* Clock.currentTimeMillis)
    })

    const getConfig = Effect.fnUntraced(function* (agentId: string) {
      const e = yield* store.getEndpoint(agentId)
      if (!e) return yield* Effect.fail(noEndpoint(agentId))
      return yield* view(e)
    })

    /** Creates or replaces the agent's endpoint; the secret is in the answer only on creation. */
    const put = Effect.fnUntraced(function* (agentId: string, body: PutWebhookBody) {
      const url = body.url.trim()
      // DNS happens here, outside the unit of work.
      yield* transport.check(url)
      const filter = normalizeFilter(body.events)
      const enabled = body.enabled ?? true
      return yield* atomically(
        Effect.gen(function* () {
          const at = iso(yield* Clock.currentTimeMillis)
          const existing = yield* store.getEndpointForUpdate(agentId)
          if (existing) {
            // Any PUT is the owner acting: a platform disable is lifted, a failing endpoint's backoff
            // ends (its backlog goes out at once: "try now"), and a new URL starts clean.
            const fresh = existing.disabledAt !== null || existing.url !== url
            const updated: EndpointRecord = {
              ...existing,
              url,
              events: filter,
              enabled,
              disabledAt: null,
              disabledReason: null,
              failingSince: fresh ? null : existing.failingSince,
              consecutiveFailures: 0,
              retryAt: null,
              updatedAt: at
            }
            yield* store.updateEndpoint(updated)
            return { webhook: yield* view(updated), created: false } satisfies PutWebhookResponse
          }
          const secret = yield* newSecret
          const record: EndpointRecord = {
            id: yield* ids.make("whep"),
            agentId,
            url,
            events: filter,
            enabled,
            secret,
            previousSecret: null,
            previousSecretExpiresAt: null,
            failingSince: null,
            disabledAt: null,
            disabledReason: null,
            consecutiveFailures: 0,
            retryAt: null,
            lastError: null,
            lastErrorAt: null,
            createdAt: at,
            updatedAt: at
          }
          yield* store.insertEndpoint(record)
          return { webhook: yield* view(record), created: true, secret } satisfies PutWebhookResponse
        })
      )
    }, traced("Webhooks.put"))

    const remove = (agentId: string) =>
      atomically(Effect.flatMap(store.deleteEndpoint(agentId), (found) => (found ? Effect.void : Effect.fail(noEndpoint(agentId))))).pipe(
        traced("Webhooks.remove")
      )

    /** A new secret, shown once; the old one keeps signing (second signature) for the grace period. */
    const rotateSecret = Effect.fnUntraced(function* (agentId: string) {
        const now = yield* Clock.currentTimeMillis
        const existing = yield* store.getEndpointForUpdate(agentId)
        if (!existing) return yield* Effect.fail(noEndpoint(agentId))
        const secret = yield* newSecret
        const updated: EndpointRecord = {
          ...existing,
          secret,
          previousSecret: existing.secret,
          previousSecretExpiresAt: iso(now + PREVIOUS_SECRET_GRACE_MS),
          updatedAt: iso(now)
        }
        yield* store.updateEndpoint(updated)
        return { webhook: yield* view(updated), secret }
      }, atomically, traced("Webhooks.rotateSecret"))

    /** Enqueues a webhook.test event for the agent's active endpoint. */
    const sendTest = Effect.fnUntraced(function* (agentId: string) {
        const e = yield* store.getEndpoint(agentId)
        if (!e) return yield* Effect.fail(noEndpoint(agentId))
        const status = statusOf(e)
        if (status !== "active" && status !== "failing") {
          return yield* Effect.fail(new Conflict({ message: `the webhook is ${status}; PUT it with enabled=true first`, state: status }))
        }
        const event = yield* events.emit(agentId, "webhook.test", { endpointId: e.id, message: "Test event from agent-commerce: your endpoint is reachable and verifies signatures." })
        return { eventId: event.id, type: "webhook.test" as const }
      }, atomically, traced("Webhooks.sendTest"))

    /** The delivery log, newest first, a keyset page: `nextCursor` names the page's last attempt. */
    const listAttempts = Effect.fnUntraced(function* (agentId: string, options: { readonly limit?: number; readonly eventId?: string; readonly cursor?: string } = {}) {
      const limit = options.limit ?? DEFAULT_ATTEMPTS_LIMIT
      let beforeId: string | undefined
      if (options.cursor !== undefined) {
        const c = decodeCursor(options.cursor) as { a?: unknown } | undefined
        if (!c || typeof c.a !== "string") return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
        beforeId = c.a
      }
      const rows = yield* store.listAttempts(agentId, { limit: limit + 1, eventId: options.eventId, beforeId })
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return { data: page.map(toAttempt), nextCursor: rows.length > limit && last ? encodeCursor({ a: last.id }) : null }
    })

    // ------------------------------------------------------------------ the worker's steps

    /** Turns new outbox events into delivery rows for subscribed, active endpoints; returns events taken. */
    const fanOutBatch = Effect.fnUntraced(function* (limit: number) {
        const now = yield* Clock.currentTimeMillis
        const at = iso(now)
        const batch = yield* store.takeNewEvents(at, limit)
        for (const { endpoint, event } of batch) {
          if (!endpoint || !receives(endpoint)) continue
          if (event.occurredAt < endpoint.createdAt || !wants(endpoint, event)) continue
          if (event.type === "webhook.disabled" && event.data.endpointId === endpoint.id) continue
          if (!Schema.is(eventCatalogue[event.type].schema)(event.data)) {
            yield* Effect.logWarning(`webhooks: event ${event.id} (${event.type}) does not match its documented payload schema; delivering it as is`)
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
      }, atomically, traced("Webhooks.fanOut"))
    const fanOut = (limit: number = FANOUT_BATCH) => fanOutBatch(limit)

    const jittered = (base: number) => Effect.map(Random.next, (r) => Math.round(base * (1 - JITTER + 2 * JITTER * r)))

    /**
     * Records one attempt's outcome: the delivery row (fenced), the attempt log, the endpoint's health.
     * While the endpoint is failing, a failed event waits for the endpoint (its own attempt count
     * never gives it up: the outage is the endpoint's, not the event's).
     */
    const record = Effect.fnUntraced(function* (d: ClaimedDelivery, seen: EndpointRecord, startedAt: number, result: WebhookResponse) {
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
        const probeAt = failing ? finishedAt + (yield* jittered(PROBE_DELAYS_MS[Math.min(failures - FAILING_AFTER, PROBE_DELAYS_MS.length - 1)])) : null
        const final = result.ok || (!failing && attempt >= MAX_ATTEMPTS)
        const nextRetryAt = final ? null : iso(probeAt ?? finishedAt + (yield* jittered(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1])))
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
     * and disables it 24 h into a failing period, telling its owner. Pending deliveries stay.
     */
    const noteHealth = Effect.fnUntraced(function* (e: EndpointRecord, d: DeliveryRecord, attemptedAt: number, result: WebhookResponse, failures: number, probeAt: number | null) {
      const at = iso(attemptedAt)
      if (result.ok) {
        if (e.failingSince !== null || e.retryAt !== null || e.consecutiveFailures > 0) {
          yield* store.updateEndpoint({ ...e, failingSince: null, consecutiveFailures: 0, retryAt: null, updatedAt: at })
          if (e.retryAt !== null) yield* Effect.logInfo(`webhooks: endpoint ${e.id} of agent ${d.agentId} answered again; its backlog resumes`)
        }
        return
      }
      const failingSince = e.failingSince ?? at
      const health = { failingSince, consecutiveFailures: failures, lastError: result.error, lastErrorAt: at, updatedAt: at }
      if (e.disabledAt === null && attemptedAt - Date.parse(failingSince) >= DISABLE_AFTER_MS) {
        const reason = `every delivery attempt has failed since ${failingSince} (24 hours without a 2xx answer)`
        yield* store.updateEndpoint({ ...e, ...health, retryAt: null, disabledAt: at, disabledReason: reason })
        yield* events.emit(d.agentId, "webhook.disabled", { endpointId: e.id, url: e.url, reason, failingSince, disabledAt: at })
        yield* Effect.logWarning(`webhooks: endpoint ${e.id} of agent ${d.agentId} disabled after sustained failure (its pending deliveries are kept)`)
        return
      }
      const retryAt = probeAt === null ? null : iso(probeAt)
      yield* store.updateEndpoint({ ...e, ...health, retryAt })
      if (e.retryAt === null && retryAt !== null) {
        yield* Effect.logWarning(`webhooks: endpoint ${e.id} of agent ${d.agentId} failing after ${failures} failed attempts in a row; its backlog waits, next probe at ${retryAt}`)
      }
    })

    const cancel = (d: ClaimedDelivery) =>
      atomically(store.finishDelivery({ ...d, status: "cancelled", dueAt: null }, d.attempts).pipe(Effect.asVoid))

    /**
     * Back in the queue unsent (the endpoint was paused or disabled after the claim). The claim's
     * attempt count stays (the fence needs it); no attempt is logged.
     */
    const release = (d: ClaimedDelivery, now: number) =>
      atomically(store.finishDelivery({ ...d, status: "pending", dueAt: iso(now), updatedAt: iso(now) }, d.attempts).pipe(Effect.asVoid))

    /** Sends one claimed delivery (outside any transaction) and records the outcome. */
    const deliverOne = Effect.fnUntraced(function* (d: ClaimedDelivery) {
      const e = yield* store.getEndpoint(d.agentId)
      // Deleted or replaced since the event was queued: nothing to send.
      if (!e || e.id !== d.endpointId) return yield* cancel(d)
      const startedAt = yield* Clock.currentTimeMillis
      // Paused or disabled since the claim: the row waits with the rest of the backlog.
      if (!receives(e)) return yield* release(d, startedAt)
      if (d.leaseExpired && d.attempts > MAX_ATTEMPTS && e.retryAt === null) {
        // The last attempt was claimed and never reported (its worker died): log it and give up.
        return yield* atomically(
          Effect.gen(function* () {
            const applied = yield* store.finishDelivery({ ...d, status: "failed", dueAt: null, updatedAt: iso(startedAt) }, d.attempts)
            if (applied) yield* store.insertAttempt({ ...(yield* abandoned(d, d.attempts - 1, startedAt)), nextRetryAt: null })
          })
        )
      }
      const result = yield* transport.send({ url: e.url, headers: signedHeaders(e, d.eventId, startedAt, d.body), body: d.body })
      yield* record(d, e, startedAt, result)
    }, (effect, d) => traced("Webhooks.deliverOne", { attributes: { delivery: d.id, attempt: d.attempts } })(effect))

    /** Claims up to `limit` deliveries under a lease, fairly across endpoints, in one short transaction. */
    const claimDue = (limit: number = DELIVERY_BATCH) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        atomically(store.claimDue(iso(now), iso(now + LEASE_MS), limit, MAX_IN_FLIGHT_PER_ENDPOINT))
      ).pipe(traced("Webhooks.claimDue"))

    /** Sends one claimed delivery and records it; a storage outage is logged (the lease brings the row back). */
    const deliver = (d: ClaimedDelivery) =>
      deliverOne(d).pipe(Effect.catchTag("StorageUnavailable", (err) => Effect.logWarning(`webhooks: delivery ${d.id}: ${err.message}`)))

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

    return {
      getConfig,
      put,
      remove,
      rotateSecret,
      sendTest,
      listAttempts,
      listDeliveries: store.listDeliveries,
      fanOut,
      claimDue,
      deliver,
      deliverDue,
      runOnce
    } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Webhooks, Webhooks.make).pipe(Layer.provide([Events.layer]))
}
