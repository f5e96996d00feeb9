// Postgres webhook store: endpoints, fan-out of the outbox (dispatched_at marker, SKIP LOCKED),
// delivery rows claimed fairly (endpoints round-robin by last claim, a per-endpoint cap, both under
// SKIP LOCKED so replicas share them) with a lease and finished under a fence, the attempt log.
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Layer, Schema } from "effect"
import { Conflict } from "../../schema/platform/errors.js"
import { DomainEvent, EventType } from "../../schema/events/events.js"
import type {
  AttemptRecord,
  BacklogSummary,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord
} from "../../schema/webhooks/records.js"
import { AttemptStatus } from "../../schema/webhooks/deliveries.js"
import { EventFilter } from "../../schema/webhooks/endpoint.js"
import { WebhookStore } from "../../services/webhooks/WebhookStore.js"
import { isUniqueViolation, orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

// Rows as the records carry them: timestamptz as ISO strings, the status and event columns checked
// against their literals, extra columns (seq, last_claimed_at) dropped.

const EndpointRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventFilter),
  enabled: Schema.Boolean,
  secret: Schema.String,
  previousSecret: Schema.NullOr(Schema.String),
  previousSecretExpiresAt: IsoTimestampOrNull,
  failingSince: IsoTimestampOrNull,
  disabledAt: IsoTimestampOrNull,
  disabledReason: Schema.NullOr(Schema.String),
  consecutiveFailures: Schema.Number,
  retryAt: IsoTimestampOrNull,
  lastError: Schema.NullOr(Schema.String),
  lastErrorAt: IsoTimestampOrNull,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})

const DeliveryStatus = Schema.Literals(["pending", "delivering", "succeeded", "failed", "cancelled"])

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  agentId: Schema.String,
  eventId: Schema.String,
  eventType: EventType,
  body: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Number,
  dueAt: IsoTimestampOrNull,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})

/** A claimed row: the delivery, what its status was before the claim, its outbox order (bigserial). */
const ClaimedRow = Schema.Struct({ ...DeliveryRow.fields, prevStatus: DeliveryStatus, seq: Schema.Number })

const AttemptRow = Schema.Struct({
  id: Schema.String,
  deliveryId: Schema.String,
  agentId: Schema.String,
  eventId: Schema.String,
  eventType: EventType,
  attempt: Schema.Number,
  status: AttemptStatus,
  responseStatus: Schema.NullOr(Schema.Number),
  durationMs: Schema.Number,
  error: Schema.NullOr(Schema.String),
  attemptedAt: IsoTimestamp,
  nextRetryAt: IsoTimestampOrNull
})

const EventRow = Schema.Struct({
  seq: Schema.Number,
  id: Schema.String,
  type: EventType,
  agentId: Schema.String,
  occurredAt: IsoTimestamp,
  data: Schema.Record(Schema.String, Schema.Unknown)
})

const PickedRow = Schema.Struct({ id: Schema.String, failing: Schema.Boolean })

const BacklogRow = Schema.Struct({ pending: Schema.Number, oldest: IsoTimestampOrNull, nextDue: IsoTimestampOrNull })

type Decode<A> = (rows: ReadonlyArray<unknown>) => Effect.Effect<A>
// Typed with the records: a row schema that drifted from its record fails to compile here.
const endpoints: Decode<ReadonlyArray<EndpointRecord>> = decodeRows(EndpointRow)
const endpoint: Decode<EndpointRecord | undefined> = decodeFirst(EndpointRow)
const deliveries: Decode<ReadonlyArray<DeliveryRecord>> = decodeRows(DeliveryRow)
const attempts: Decode<ReadonlyArray<AttemptRecord>> = decodeRows(AttemptRow)
const newEvents = decodeRows(EventRow)
const pickedEndpoints = decodeRows(PickedRow)
const claimedRows = decodeRows(ClaimedRow)

/**
 * The delivery log, newest first: walks (agent_id, seq DESC), or (agent_id, event_id, seq) for one
 * event (migration 0019), from the cursor's attempt and stops at the page (test/suites/pages.test.ts).
 */
export const attemptsPage = (
  sql: SqlClient.SqlClient,
  agentId: string,
  page: { readonly limit: number; readonly eventId?: string | undefined; readonly beforeId?: string | undefined }
) =>
  sql`SELECT * FROM webhook_attempts WHERE agent_id = ${agentId}${page.eventId === undefined ? sql`` : sql` AND event_id = ${page.eventId}`}${
    page.beforeId === undefined
      ? sql``
      : sql` AND seq < (SELECT seq FROM webhook_attempts WHERE id = ${page.beforeId} AND agent_id = ${agentId})`
  } ORDER BY seq DESC LIMIT ${page.limit}`

/** The agent's deliveries in outbox order from the cursor's delivery: walks (agent_id, seq) (migration 0019). */
export const deliveriesPage = (
  sql: SqlClient.SqlClient,
  agentId: string,
  page: { readonly limit: number; readonly afterId?: string | undefined }
) =>
  sql`SELECT * FROM webhook_deliveries WHERE agent_id = ${agentId}${
    page.afterId === undefined
      ? sql``
      : sql` AND seq > (SELECT seq FROM webhook_deliveries WHERE id = ${page.afterId} AND agent_id = ${agentId})`
  } ORDER BY seq LIMIT ${page.limit}`

export const PgWebhookStore = Layer.effect(
  WebhookStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    return {
      getEndpoint: (agentId) =>
        orUnavailable(sql`SELECT * FROM webhook_endpoints WHERE agent_id = ${agentId}`).pipe(Effect.flatMap(endpoint)),
      getEndpointForUpdate: (agentId) =>
        orUnavailable(sql`SELECT * FROM webhook_endpoints WHERE agent_id = ${agentId} FOR UPDATE`).pipe(
          Effect.flatMap(endpoint)
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
            isUniqueViolation(cause)
              ? Effect.fail(new Conflict({ message: "the webhook was created by a concurrent request; retry" }))
              : Effect.failCause(cause)
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
        orUnavailable(sql`DELETE FROM webhook_endpoints WHERE agent_id = ${agentId} RETURNING id`).pipe(
          Effect.map((rows) => rows.length > 0)
        ),
      takeNewEvents: Effect.fnUntraced(function* (now, limit) {
        const raw = yield* sql`
          WITH batch AS (
            SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          UPDATE events e SET dispatched_at = ${now}::timestamptz FROM batch WHERE e.id = batch.id
          RETURNING e.seq, e.id, e.type, e.agent_id, e.occurred_at, e.data`
        if (raw.length === 0) return []
        const rows = yield* newEvents(raw)
        const agents = [...new Set(rows.map((r) => r.agentId))]
        const found = yield* sql`SELECT * FROM webhook_endpoints WHERE agent_id IN ${sql.in(agents)}`.pipe(
          Effect.flatMap(endpoints)
        )
        const byAgent = new Map(found.map((e) => [e.agentId, e]))
        return [...rows]
          .sort((a, b) => a.seq - b.seq)
          .map(({ seq: _, ...event }) => ({
            event: DomainEvent.make(event),
            endpoint: byAgent.get(event.agentId)
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
      // The pick's counts are only a filter: under READ COMMITTED its snapshot is taken before its
      // locks, so another worker's claim that commits in between (and so releases the endpoint to
      // this one) is not in them. Each endpoint's statement runs after the lock is held and counts
      // again with its own snapshot, which has that claim: that count, not the pick's, sets how many
      // it takes (a stale count let a second worker take two more, 4 in flight, 2 rounds in 400).
      claimDue: Effect.fnUntraced(function* (now, leaseUntil, limit, perEndpoint) {
        const picked = yield* sql`
          SELECT e.id, e.retry_at IS NOT NULL AS failing
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
          FOR NO KEY UPDATE OF e SKIP LOCKED`.pipe(Effect.flatMap(pickedEndpoints))
        const claimed: Array<ClaimedDelivery> = []
        for (const p of picked) {
          const room = limit - claimed.length
          if (room <= 0) break
          // Failing: the probe is the oldest open row whatever its due time, and only with nothing in
          // flight; healthy: due rows, oldest first, up to the cap less what is in flight now.
          const taken = yield* sql`
            WITH flying AS (
              SELECT count(*)::int AS n FROM webhook_deliveries
              WHERE endpoint_id = ${p.id} AND status = 'delivering' AND due_at > ${now}::timestamptz
            ), due AS (
              SELECT id, status AS prev_status FROM webhook_deliveries
              WHERE endpoint_id = ${p.id} AND status IN ('pending','delivering') AND (${p.failing} OR due_at <= ${now}::timestamptz)
              ORDER BY seq
              LIMIT GREATEST(0, LEAST(${room}, ${
                p.failing
                  ? sql`CASE WHEN (SELECT n FROM flying) = 0 THEN 1 ELSE 0 END`
                  : sql`${perEndpoint} - (SELECT n FROM flying)`
              }))
              FOR UPDATE SKIP LOCKED
            )
            UPDATE webhook_deliveries d
            SET status = 'delivering', attempts = d.attempts + 1, due_at = ${leaseUntil}::timestamptz, updated_at = ${now}::timestamptz
            FROM due WHERE d.id = due.id
            RETURNING d.*, due.prev_status`.pipe(Effect.flatMap(claimedRows))
          claimed.push(
            ...[...taken]
              .sort((a, b) => a.seq - b.seq)
              .map(({ prevStatus, seq: _, ...d }): ClaimedDelivery => ({
                ...d,
                leaseExpired: prevStatus === "delivering"
              }))
          )
        }
        if (picked.length > 0) {
          yield* sql`UPDATE webhook_endpoints SET last_claimed_at = ${now}::timestamptz WHERE id IN ${sql.in(picked.map((p) => p.id))}`
        }
        return claimed
      }, orUnavailable),
      backlog: (endpointId) =>
        orUnavailable(sql`
          SELECT count(*)::int AS pending, min(created_at) AS oldest, min(due_at) AS next_due
          FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status IN ('pending','delivering')`).pipe(
          Effect.flatMap(decodeFirst(BacklogRow)),
          Effect.map((row): BacklogSummary => ({
            pending: row?.pending ?? 0,
            oldestCreatedAt: row?.oldest ?? null,
            nextDueAt: row?.nextDue ?? null
          }))
        ),
      finishDelivery: (r, claimedAttempt) =>
        orUnavailable(sql`
          UPDATE webhook_deliveries SET status = ${r.status}, due_at = ${r.dueAt}::timestamptz, updated_at = ${r.updatedAt}::timestamptz
          WHERE id = ${r.id} AND status = 'delivering' AND attempts = ${claimedAttempt}
          RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
      insertAttempt: (r) =>
        orUnavailable(sql`
          INSERT INTO webhook_attempts (id, delivery_id, agent_id, event_id, event_type, attempt, status, response_status, duration_ms, error,
            attempted_at, next_retry_at)
          VALUES (${r.id}, ${r.deliveryId}, ${r.agentId}, ${r.eventId}, ${r.eventType}, ${r.attempt}, ${r.status}, ${r.responseStatus},
            ${r.durationMs}, ${r.error}, ${r.attemptedAt}::timestamptz, ${r.nextRetryAt}::timestamptz)`).pipe(
          Effect.asVoid
        ),
      listAttempts: (agentId, page) => orUnavailable(attemptsPage(sql, agentId, page)).pipe(Effect.flatMap(attempts)),
      listDeliveries: (agentId, page) =>
        orUnavailable(deliveriesPage(sql, agentId, page)).pipe(Effect.flatMap(deliveries))
    }
  })
)
