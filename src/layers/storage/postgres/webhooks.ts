// Postgres webhook store: endpoints, fan-out of the outbox (dispatched_at marker, SKIP LOCKED),
// delivery rows claimed with a lease in one statement and finished under a fence, the attempt log.
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { Conflict } from "../../../schema/errors.js"
import { DomainEvent, type EventType } from "../../../schema/events.js"
import type { AttemptRecord, AttemptStatus, ClaimedDelivery, DeliveryRecord, DeliveryStatus, EndpointRecord, EventFilter } from "../../../schema/webhooks.js"
import { WebhookStore } from "../../../services/Webhooks.js"
import { iso, isoOrNull, isUniqueViolation, orUnavailable } from "./PgDb.js"

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
            failing_since, disabled_at, disabled_reason, created_at, updated_at)
          VALUES (${r.id}, ${r.agentId}, ${r.url}, ${JSON.stringify(r.events)}::jsonb, ${r.enabled}, ${r.secret}, ${r.previousSecret},
            ${r.previousSecretExpiresAt}::timestamptz, ${r.failingSince}::timestamptz, ${r.disabledAt}::timestamptz, ${r.disabledReason},
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
            updated_at = ${r.updatedAt}::timestamptz
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      // Deliveries and attempts go with it (ON DELETE CASCADE).
      deleteEndpoint: (agentId) =>
        orUnavailable(sql<{ id: string }>`DELETE FROM webhook_endpoints WHERE agent_id = ${agentId} RETURNING id`).pipe(
          Effect.map((rows) => rows.length > 0)
        ),
      takeNewEvents: (now, limit) =>
        Effect.gen(function* () {
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
        }).pipe(orUnavailable),
      insertDelivery: (r) =>
        orUnavailable(sql`
          INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_id, event_type, body, status, attempts, due_at, created_at, updated_at)
          VALUES (${r.id}, ${r.endpointId}, ${r.agentId}, ${r.eventId}, ${r.eventType}, ${r.body}, ${r.status}, ${r.attempts},
            ${r.dueAt}::timestamptz, ${r.createdAt}::timestamptz, ${r.updatedAt}::timestamptz)
          ON CONFLICT (endpoint_id, event_id) DO NOTHING`).pipe(Effect.asVoid),
      // One statement, so one short transaction even outside `atomically`: lock, lease, count the attempt.
      claimDue: (now, leaseUntil, limit) =>
        orUnavailable(sql<DeliveryRow & { prevStatus: DeliveryStatus }>`
          WITH due AS (
            SELECT id, status AS prev_status FROM webhook_deliveries
            WHERE status IN ('pending','delivering') AND due_at <= ${now}::timestamptz
            ORDER BY due_at, id LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE webhook_deliveries d
          SET status = 'delivering', attempts = d.attempts + 1, due_at = ${leaseUntil}::timestamptz, updated_at = ${now}::timestamptz
          FROM due WHERE d.id = due.id
          RETURNING d.*, due.prev_status`).pipe(
          Effect.map((rows): ReadonlyArray<ClaimedDelivery> =>
            rows
              .map((r) => ({ ...toDelivery(r), leaseExpired: r.prevStatus === "delivering" }))
              .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
          )
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
      listAttempts: (agentId, limit, eventId) =>
        orUnavailable(
          eventId === undefined
            ? sql<AttemptRow>`SELECT * FROM webhook_attempts WHERE agent_id = ${agentId} ORDER BY seq DESC LIMIT ${limit}`
            : sql<AttemptRow>`SELECT * FROM webhook_attempts WHERE agent_id = ${agentId} AND event_id = ${eventId} ORDER BY seq DESC LIMIT ${limit}`
        ).pipe(Effect.map((rows) => rows.map(toAttemptRecord))),
      listDeliveries: (agentId) =>
        orUnavailable(sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE agent_id = ${agentId} ORDER BY created_at, id`).pipe(
          Effect.map((rows) => rows.map(toDelivery))
        )
    }
  })
)
