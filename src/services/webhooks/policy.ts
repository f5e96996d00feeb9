// The webhooks' numbers and pure policy: retry and probe delays with jitter, when an endpoint is
// failing or disabled, the status and next attempt an owner is shown, the event filter
// (docs/webhooks.md; test/suites/webhooks-numbers.test.ts pins the numbers).
import { Effect, Random } from "effect"
import { type DomainEvent, eventTypes } from "../../schema/events/events.js"
import type { AttemptRecord, BacklogSummary, EndpointRecord } from "../../schema/webhooks/records.js"
import { DeliveryAttempt } from "../../schema/webhooks/deliveries.js"
import { type EventFilter, WebhookConfig, type WebhookStatus } from "../../schema/webhooks/endpoint.js"

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** Delay before retry n (after attempt n fails): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR
]
/** The first try plus one per retry delay: 8. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
/** Each delay is scaled by a uniform factor in [1 − JITTER, 1 + JITTER]. */
export const JITTER = 0.1
/** An endpoint whose attempts have all failed for this long (no 2xx in between) is disabled. */
export const DISABLE_AFTER_MS = 24 * HOUR
/**
 * Failed attempts in a row (any event) after which the endpoint is "failing": its backlog waits,
 * single probes go out.
 */
export const FAILING_AFTER = 3
/** Delay before probe n of a failing endpoint: 5 s, 30 s, 2 min, 10 min, 30 min, then hourly. */
export const PROBE_DELAYS_MS: ReadonlyArray<number> = [
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR
]
/**
 * Deliveries of one endpoint in flight at once (all workers, all replicas): a slow endpoint holds
 * at most this many slots.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 2
/** What a claimed send's lease gives beyond the transport's timeout: reading its state, recording the outcome. */
export const SEND_LEASE_MARGIN_MS = 5 * SECOND

/**
 * How long a claimed batch of sends is its worker's, sent `concurrency` at a time: a send starts when
 * one before it ends, each may take the transport's whole timeout (WEBHOOK_TIMEOUT_MS), so the last
 * starts up to (waves - 1) timeouts after the claim, waves = ⌈batch / concurrency⌉. A shorter lease let another process claim a notice still waiting in the
 * batch and send it too (A2A push notifications, ACP order events: a fixed 30 s for 3 waves of 10 s).
 */
export const batchLeaseMs = (timeoutMs: number, batch: number, concurrency: number): number =>
  Math.ceil(batch / concurrency) * timeoutMs + SEND_LEASE_MARGIN_MS

/** A claimed delivery is the claimer's for this long; then any worker may take it back. */
export const LEASE_MS = 60 * SECOND

/**
 * A claimed delivery's lease under a transport timeout (claimed deliveries are all sent at once): 60 s,
 * or the timeout and the margin when WEBHOOK_TIMEOUT_MS is near its 60 s maximum, so the lease never
 * ends while an attempt may still be waiting for its endpoint.
 */
export const deliveryLeaseMs = (timeoutMs: number): number => Math.max(LEASE_MS, timeoutMs + SEND_LEASE_MARGIN_MS)
/** Per attempt: DNS, connect, send and response headers; then the body is read up to the cap. */
export const DELIVERY_TIMEOUT_MS = 10 * SECOND
/** Within that: the TCP (and TLS) connection must be up this soon, so a dead address fails fast. */
export const CONNECT_TIMEOUT_MS = 1 * SECOND
export const MAX_RESPONSE_BYTES = 64 * 1024
/** After a rotation, deliveries carry a second signature made with the previous secret for this long. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * HOUR
export const SECRET_BYTES = 32
export const FANOUT_BATCH = 200
export const DELIVERY_BATCH = 10
export const DEFAULT_ATTEMPTS_LIMIT = 50

/** A delay scaled by a random factor in [1 − JITTER, 1 + JITTER], so retries of many events spread out. */
export const jittered = (base: number) =>
  Effect.map(Random.next, (r) => Math.round(base * (1 - JITTER + 2 * JITTER * r)))

/** The base delay before retry `attempt` (after that attempt failed). */
export const retryDelay = (attempt: number): number => RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]

/** The base delay before the next probe of an endpoint with `failures` failed attempts in a row. */
export const probeDelay = (failures: number): number =>
  PROBE_DELAYS_MS[Math.min(failures - FAILING_AFTER, PROBE_DELAYS_MS.length - 1)]

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

const ageSeconds = (since: string | null, nowMs: number): number | null =>
  since === null ? null : Math.max(0, Math.floor((nowMs - Date.parse(since)) / 1000))

export const toConfig = (
  e: EndpointRecord,
  backlog: BacklogSummary = noBacklog,
  nowMs: number = Date.parse(e.updatedAt)
): WebhookConfig =>
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
    oldestPendingAgeSeconds: ageSeconds(backlog.oldestCreatedAt, nowMs),
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
