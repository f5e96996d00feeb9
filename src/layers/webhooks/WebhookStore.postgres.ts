// Postgres webhook store: endpoints, fan-out of the outbox (dispatched_at marker, SKIP LOCKED),
// delivery rows claimed fairly (endpoints round-robin by last claim, a per-endpoint cap, both under
// SKIP LOCKED so replicas share them) with a lease and finished under a fence, the attempt log.
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { Conflict } from "../../schema/platform/errors.js"
import { DomainEvent, type EventType } from "../../schema/events/events.js"
import type {
  AttemptRecord,
  BacklogSummary,
  ClaimedDelivery,
  DeliveryRecord,
  DeliveryStatus,
  EndpointRecord
} from "../../schema/webhooks/records.js"
import type { AttemptStatus } from "../../schema/webhooks/deliveries.js"
import type { EventFilter } from "../../schema/webhooks/endpoint.js"
import { WebhookStore } from "../../services/webhooks/WebhookStore.js"
import { iso, isoOrNull, isUniqueViolation, orUnavailable } from "../storage/postgres/PgDb.js"

interface EndpointRow {
  id: string
  agentId: string
  url: string
  events: ReadonlyArray<EventFilter>
  enabled: boolean
  secret: string
  previousSecret: string | null
  previousSecretExpiresAt: Date | null
  failingSince: Date | null
  disabledAt: Date | null
  disabledReason: string | null
  consecutiveFailures: number
  retryAt: Date | null
  lastError: string | null
  lastErrorAt: Date | null
  createdAt: Date
  updatedAt: Date
}

const toEndpoint = (r: EndpointRow): EndpointRecord => ({
  id: r.id,
  agentId: r.agentId,
  url: r.url,
  events: r.events,
  enabled: r.enabled,
  secret: r.secret,
  previousSecret: r.previousSecret,
  previousSecretExpiresAt: isoOrNull(r.previousSecretExpiresAt),
  failingSince: isoOrNull(r.failingSince),
  disabledAt: isoOrNull(r.disabledAt),
  disabledReason: r.disabledReason,
  consecutiveFailures: r.consecutiveFailures,
  retryAt: isoOrNull(r.retryAt),
  lastError: r.lastError,
  lastErrorAt: isoOrNull(r.lastErrorAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt)
})

interface DeliveryRow {
  id: string
  endpointId: string
  agentId: string
  eventId: string
  eventType: EventType
  body: string
  status: DeliveryStatus
  attempts: number
  dueAt: Date | null
  createdAt: Date
  updatedAt: Date
  /** Outbox order within the endpoint (bigserial, read as bigint). */
  seq?: bigint | number
}

const toDelivery = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id,
  endpointId: r.endpointId,
  agentId: r.agentId,
  eventId: r.eventId,
  eventType: r.eventType,
  body: r.body,
  status: r.status,
  attempts: r.attempts,
  dueAt: isoOrNull(r.dueAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt)
})

interface AttemptRow {
  id: string
  deliveryId: string
  agentId: string
  eventId: string
  eventType: EventType
  attempt: number
  status: AttemptStatus
  responseStatus: number | null
  durationMs: number
  error: string | null
  attemptedAt: Date
  nextRetryAt: Date | null
}

const toAttemptRecord = (r: AttemptRow): AttemptRecord => ({
  id: r.id,
  deliveryId: r.deliveryId,
  agentId: r.agentId,
  eventId: r.eventId,
  eventType: r.eventType,
  attempt: r.attempt,
  status: r.status,
  responseStatus: r.responseStatus,
  durationMs: r.durationMs,
  error: r.error,
  attemptedAt: iso(r.attemptedAt),
  nextRetryAt: isoOrNull(r.nextRetryAt)
})

interface EventRow {
  seq: number
  id: string
  type: EventType
  agentId: string
  occurredAt: Date
  data: Record<string, unknown>
}

/**
 * The delivery log, newest first: walks (agent_id, seq DESC), or (agent_id, event_id, seq) for one
 * event (migration 0019), from the cursor's attempt and stops at the page (test/suites/pages.test.ts).
 */
export const attemptsPage = (
  sql: SqlClient.SqlClient,
  agentId: string,
  page: { readonly limit: number; readonly eventId?: string | undefined; readonly beforeId?: string | undefined }
) =>
  sql<AttemptRow>`SELECT * FROM webhook_attempts WHERE agent_id = ${agentId}${page.eventId === undefined ? sql`` : sql` AND event_id = ${page.eventId}`}${
    page.beforeId === undefined ? sql`` : sql` AND seq < (SELECT seq FROM webhook_attempts WHERE id = ${page.beforeId} AND agent_id = ${agentId})`
  } ORDER BY seq DESC LIMIT ${page.limit}`

/** The agent's deliveries in outbox order from the cursor's delivery: walks (agent_id, seq) (migration 0019). */
export const deliveriesPage = (sql: SqlClient.SqlClient, agentId: string, page: { readonly limit: number; readonly afterId?: string | undefined }) =>
  sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE agent_id = ${agentId}${
    page.afterId === undefined ? sql`` : sql` AND seq > (SELECT seq FROM webhook_deliveries WHERE id = ${page.afterId} AND agent_id = ${agentId})`
  } ORDER BY seq LIMIT ${page.limit}`

export const PgWebhookStore = Layer.effect(
  WebhookStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    return {
      getEndpoint: (agentId) =>
        orUnavailable(sql<EndpointRow>`SELECT * FROM webhook_endpoints WHERE agent_id = ${agentId}`).pipe(
          Effect.map((rows) => (rows[0] ? toEndpoint(rows[0]) : undefined))
        ),
      getEndpointForUpdate: (agentId) =>
        orUnavailable(sql<EndpointRow>`SELECT * FROM webhook_endpoints WHERE agent_id = ${agentId} FOR UPDATE`).pipe(
          Effect.map((rows) => (rows[0] ? toEndpoint(rows[0]) : undefined))
        ),
      insertEndpoint: (r) =>
        sql`
          INSERT INTO webhook_endpoints (id, agent_id, url, events, enabled, secret, previous_secret, previous_secret_expires_at,
            failing_since, disabled_at, disabled_reason, consecutive_failures, retry_at, last_error, last_error_at, created_at, updated_at)
          VALUES (${r.id}, ${r.agentId}, ${r.url}, ${JSON.stringify(r.events)}::jsonb, ${r.enabled}, ${r.secret}, ${r.previousSecret},
            ${r.previousSecretExpiresAt}::timestamptz, ${r.failingSince}::timestamptz, ${r.disabledAt}::timestamptz, ${r.disabledReason},
            ${r.consecutiveFailures}, ${r.retryAt}::timestamptz, ${r.lastError}, ${r.lastErrorAt}::timestamptz,
            ${r.createdAt}::timestamptz, ${r.updatedAt}::timestamptz)`.pipe(
          Effect.asVoid,
          Effect.catchCause((cause): Effect.Effect<never, Conflict | SqlError> =>
            isUniqueViolation(cause) ? Effect.fail(new Conflict({ message: "the webhook was created by a concurrent request; retry" })) : Effect.failCause(cause)
          ),
          orUnavailable
        ),
      updateEndpoint: (r) =>
        orUnavailable(sql`
          UPDATE webhook_endpoints SET url = ${r.url}, events = ${JSON.stringify(r.events)}::jsonb, enabled = ${r.enabled}, secret = ${r.secret},
            previous_secret = ${r.previousSecret}, previous_secret_expires_at = ${r.previousSecretExpiresAt}::timestamptz,
            failing_since = ${r.failingSince}::timestamptz, disabled_at = ${r.disabledAt}::timestamptz, disabled_reason = ${r.disabledReason},
            consecutive_failures = ${r.consecutiveFailures}, retry_at = ${r.retryAt}::timestamptz, last_error = ${r.lastError},
            last_error_at = ${r.lastErrorAt}::timestamptz, updated_at = ${r.updatedAt}::timestamptz
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      // Deliveries and attempts go with it (ON DELETE CASCADE).
      deleteEndpoint: (agentId) =>
        orUnavailable(sql<{ id: string }>`DELETE FROM webhook_endpoints WHERE agent_id = ${agentId} RETURNING id`).pipe(
          Effect.map((rows) => rows.length > 0)
        ),
      takeNewEvents: Effect.fnUntraced(function* (now, limit) {
        const rows = yield* sql<EventRow>`
          WITH batch AS (
            SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          UPDATE events e SET dispatched_at = ${now}::timestamptz FROM batch WHERE e.id = batch.id
          RETURNING e.seq, e.id, e.type, e.agent_id, e.occurred_at, e.data`
        if (rows.length === 0) return []
        const agents = [...new Set(rows.map((r) => r.agentId))]
        const endpoints = yield* sql<EndpointRow>`SELECT * FROM webhook_endpoints WHERE agent_id IN ${sql.in(agents)}`
        const byAgent = new Map(endpoints.map((e) => [e.agentId, toEndpoint(e)]))
        return [...rows]
          .sort((a, b) => a.seq - b.seq)
          .map((r) => ({
            event: DomainEvent.make({ id: r.id, type: r.type, agentId: r.agentId, occurredAt: iso(r.occurredAt), data: r.data }),
            endpoint: byAgent.get(r.agentId)
          }))
      }, orUnavailable),
      insertDelivery: (r) =>
        orUnavailable(sql`
          INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_id, event_type, body, status, attempts, due_at, created_at, updated_at)
          VALUES (${r.id}, ${r.endpointId}, ${r.agentId}, ${r.eventId}, ${r.eventType}, ${r.body}, ${r.status}, ${r.attempts},
            ${r.dueAt}::timestamptz, ${r.createdAt}::timestamptz, ${r.updatedAt}::timestamptz)
          ON CONFLICT (endpoint_id, event_id) DO NOTHING`).pipe(Effect.asVoid),
      // Called inside `atomically`: the endpoint rows picked stay locked (FOR NO KEY UPDATE, which a
      // fan-out's foreign-key check does not wait for) until the claim commits, so two replicas never
      // serve one endpoint at once and its cap holds across them. Per endpoint: one indexed statement.
      claimDue: Effect.fnUntraced(function* (now, leaseUntil, limit, perEndpoint) {
        const picked = yield* sql<{ id: string; failing: boolean; inFlight: number }>`
          SELECT e.id, e.retry_at IS NOT NULL AS failing, f.n AS in_flight
          FROM webhook_endpoints e
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS n FROM webhook_deliveries d
            WHERE d.endpoint_id = e.id AND d.status = 'delivering' AND d.due_at > ${now}::timestamptz
          ) f
          WHERE e.enabled AND e.disabled_at IS NULL
            AND (CASE WHEN e.retry_at IS NULL THEN f.n < ${perEndpoint} ELSE e.retry_at <= ${now}::timestamptz AND f.n = 0 END)
            AND EXISTS (
              SELECT 1 FROM webhook_deliveries d
              WHERE d.endpoint_id = e.id AND d.status IN ('pending','delivering')
                AND (e.retry_at IS NOT NULL OR d.due_at <= ${now}::timestamptz)
            )
          ORDER BY e.last_claimed_at NULLS FIRST, e.id
          LIMIT ${limit}
          FOR NO KEY UPDATE OF e SKIP LOCKED`
        const claimed: Array<ClaimedDelivery> = []
        for (const p of picked) {
          const take = Math.min(p.failing ? 1 : perEndpoint - p.inFlight, limit - claimed.length)
          if (take <= 0) break
          // Failing: the probe is the oldest open row whatever its due time; healthy: due rows, oldest first.
          const rows = yield* sql<DeliveryRow & { prevStatus: DeliveryStatus }>`
            WITH due AS (
              SELECT id, status AS prev_status FROM webhook_deliveries
              WHERE endpoint_id = ${p.id} AND status IN ('pending','delivering') AND (${p.failing} OR due_at <= ${now}::timestamptz)
              ORDER BY seq LIMIT ${take}
              FOR UPDATE SKIP LOCKED
            )
            UPDATE webhook_deliveries d
            SET status = 'delivering', attempts = d.attempts + 1, due_at = ${leaseUntil}::timestamptz, updated_at = ${now}::timestamptz
            FROM due WHERE d.id = due.id
            RETURNING d.*, due.prev_status`
          claimed.push(
            ...rows
              .map((r) => ({ ...toDelivery(r), leaseExpired: r.prevStatus === "delivering", seq: Number(r.seq) }))
              .sort((a, b) => a.seq - b.seq)
              .map(({ seq: _, ...d }) => d)
          )
        }
        if (picked.length > 0) {
          yield* sql`UPDATE webhook_endpoints SET last_claimed_at = ${now}::timestamptz WHERE id IN ${sql.in(picked.map((p) => p.id))}`
        }
        return claimed
      }, orUnavailable),
      backlog: (endpointId) =>
        orUnavailable(sql<{ pending: number; oldest: Date | null; nextDue: Date | null }>`
          SELECT count(*)::int AS pending, min(created_at) AS oldest, min(due_at) AS next_due
          FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status IN ('pending','delivering')`).pipe(
          Effect.map((rows): BacklogSummary => ({
            pending: rows[0]?.pending ?? 0,
            oldestCreatedAt: isoOrNull(rows[0]?.oldest ?? null),
            nextDueAt: isoOrNull(rows[0]?.nextDue ?? null)
          }))
        ),
      finishDelivery: (r, claimedAttempt) =>
        orUnavailable(sql<{ id: string }>`
          UPDATE webhook_deliveries SET status = ${r.status}, due_at = ${r.dueAt}::timestamptz, updated_at = ${r.updatedAt}::timestamptz
          WHERE id = ${r.id} AND status = 'delivering' AND attempts = ${claimedAttempt}
          RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
      insertAttempt: (r) =>
        orUnavailable(sql`
          INSERT INTO webhook_attempts (id, delivery_id, agent_id, event_id, event_type, attempt, status, response_status, duration_ms, error,
            attempted_at, next_retry_at)
          VALUES (${r.id}, ${r.deliveryId}, ${r.agentId}, ${r.eventId}, ${r.eventType}, ${r.attempt}, ${r.status}, ${r.responseStatus},
            ${r.durationMs}, ${r.error}, ${r.attemptedAt}::timestamptz, ${r.nextRetryAt}::timestamptz)`).pipe(Effect.asVoid),
      listAttempts: (agentId, page) => orUnavailable(attemptsPage(sql, agentId, page)).pipe(Effect.map((rows) => rows.map(toAttemptRecord))),
      listDeliveries: (agentId, page) => orUnavailable(deliveriesPage(sql, agentId, page)).pipe(Effect.map((rows) => rows.map(toDelivery)))
    }
  })
)
