// Postgres store of orders (migrations 0027, 0030): one row per order, the push schedule in its own
// columns, the saga that placed it (null: a buy), keyset pages by (created_at, id), the sweeps through their partial indexes.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { PricingModel } from "../../schema/commerce/common.js"
import { OrderMode, OrderStatus, type Order, sagaOf } from "../../schema/orders/orders.js"
import { OrderStore } from "../../services/purchases/OrderStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

/** An orders row (ORDER_COLUMNS), decoded. */
export const OrderRow = Schema.Struct({
  id: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tierId: Schema.String,
  listPriceCents: Schema.Number,
  sellerAgentId: Schema.String,
  buyerAgentId: Schema.String,
  input: Schema.Unknown,
  priceCents: Schema.Number,
  mode: OrderMode,
  status: OrderStatus,
  createdAt: IsoTimestamp,
  deadlineAt: IsoTimestamp,
  answeredAt: IsoTimestampOrNull,
  output: Schema.Unknown,
  error: Schema.NullOr(Schema.String),
  latencyMs: Schema.NullOr(Schema.Number),
  reportedLatencyMs: Schema.NullOr(Schema.Number),
  negotiationId: Schema.NullOr(Schema.String),
  approvalId: Schema.NullOr(Schema.String),
  idempotencyKey: Schema.NullOr(Schema.String),
  pushAttempts: Schema.NullOr(Schema.Number),
  pushNextAttemptAt: IsoTimestampOrNull,
  pushAcceptedAt: IsoTimestampOrNull,
  pushLastError: Schema.NullOr(Schema.String),
  sagaId: Schema.NullOr(Schema.String),
  challengeId: Schema.NullOr(Schema.String),
  offeredAt: IsoTimestampOrNull,
  promisedP95Ms: Schema.NullOr(Schema.Number),
  promisedUptimePct: Schema.NullOr(Schema.Number)
})

export const toOrder = (r: typeof OrderRow.Type): Order => ({
  id: r.id,
  transactionId: r.id,
  serviceId: r.serviceId,
  serviceName: r.serviceName,
  category: r.category,
  pricingModel: r.pricingModel,
  tierId: r.tierId,
  listPriceCents: r.listPriceCents,
  sellerAgentId: r.sellerAgentId,
  buyerAgentId: r.buyerAgentId,
  input: r.input ?? null,
  priceCents: r.priceCents,
  mode: r.mode,
  status: r.status,
  createdAt: r.createdAt,
  deadlineAt: r.deadlineAt,
  answeredAt: r.answeredAt,
  output: r.output ?? null,
  error: r.error,
  latencyMs: r.latencyMs,
  reportedLatencyMs: r.reportedLatencyMs,
  negotiationId: r.negotiationId,
  approvalId: r.approvalId,
  idempotencyKey: r.idempotencyKey,
  push:
    r.pushAttempts === null
      ? null
      : {
          attempts: r.pushAttempts,
          nextAttemptAt: r.pushNextAttemptAt,
          acceptedAt: r.pushAcceptedAt,
          lastError: r.pushLastError
        },
  origin:
    r.sagaId !== null
      ? { kind: "saga", sagaId: r.sagaId }
      : r.challengeId !== null
        ? { kind: "paid_call", challengeId: r.challengeId }
        : { kind: "buy" },
  offeredAt: r.offeredAt,
  promisedP95LatencyMs: r.promisedP95Ms,
  promisedUptimePct: r.promisedUptimePct
})

export const ORDER_COLUMNS = `id, service_id, service_name, category, pricing_model, tier_id, list_price_cents, seller_agent_id,
  buyer_agent_id, input, price_cents, mode, status, created_at, deadline_at, answered_at, output, error, latency_ms,
  negotiation_id, approval_id, idempotency_key, push_attempts, push_next_attempt_at, push_accepted_at, push_last_error, saga_id, challenge_id,
  reported_latency_ms, offered_at, promised_p95_ms, promised_uptime_pct`

/** The INSERT of a new order: a statement alone, or a CTE of the settlement's one write. */
export const orderInsert = (sql: SqlClient.SqlClient, o: Order) =>
  sql`INSERT INTO orders (${sql.literal(ORDER_COLUMNS)})
    VALUES (${o.id}, ${o.serviceId}, ${o.serviceName}, ${o.category}, ${o.pricingModel}, ${o.tierId},
      ${o.listPriceCents}, ${o.sellerAgentId}, ${o.buyerAgentId}, ${json(o.input)}::jsonb, ${o.priceCents},
      ${o.mode}, ${o.status}, ${o.createdAt}, ${o.deadlineAt}, ${o.answeredAt}, ${json(o.output)}::jsonb,
      ${o.error}, ${o.latencyMs}, ${o.negotiationId}, ${o.approvalId}, ${o.idempotencyKey},
      ${o.push?.attempts ?? null},
      ${o.push?.nextAttemptAt ?? null}, ${o.push?.acceptedAt ?? null}, ${o.push?.lastError ?? null},
      ${sagaOf(o)}, ${o.origin?.kind === "paid_call" ? o.origin.challengeId : null},
      ${o.reportedLatencyMs ?? null}, ${o.offeredAt ?? null}, ${o.promisedP95LatencyMs ?? null},
      ${o.promisedUptimePct ?? null})`

/** The UPDATE that closes an order as it ended (its lock held): a statement alone, or a CTE. */
export const orderClose = (sql: SqlClient.SqlClient, o: Order) =>
  sql`UPDATE orders SET status = ${o.status}, answered_at = ${o.answeredAt}, output = ${json(o.output)}::jsonb,
      error = ${o.error}, latency_ms = ${o.latencyMs}, reported_latency_ms = ${o.reportedLatencyMs ?? null},
      push_attempts = ${o.push?.attempts ?? null},
      push_next_attempt_at = ${o.push?.nextAttemptAt ?? null}, push_accepted_at = ${o.push?.acceptedAt ?? null},
      push_last_error = ${o.push?.lastError ?? null}, offered_at = ${o.offeredAt ?? null}
    WHERE id = ${o.id}`

export const PgOrderStore = Layer.effect(
  OrderStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(ORDER_COLUMNS)
    const many = (rows: ReadonlyArray<unknown>) => Effect.map(decodeRows(OrderRow)(rows), (rs) => rs.map(toOrder))
    const one = (rows: ReadonlyArray<unknown>) =>
      Effect.map(decodeFirst(OrderRow)(rows), (r) => (r === undefined ? undefined : toOrder(r)))
    return OrderStore.of({
      insert: (o) => orUnavailable(orderInsert(sql, o)).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql`SELECT ${columns} FROM orders WHERE id = ${id}`).pipe(Effect.flatMap(one)),
      findByKey: (buyerAgentId, key) =>
        orUnavailable(
          sql`SELECT ${columns} FROM orders WHERE buyer_agent_id = ${buyerAgentId} AND idempotency_key = ${key}`
        ).pipe(Effect.flatMap(one)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT ${columns} FROM orders WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(one)),
      listForSeller: (sellerAgentId, { status, after, limit }) =>
        orUnavailable(sql`
          SELECT ${columns} FROM orders
          WHERE seller_agent_id = ${sellerAgentId}
            ${status === undefined ? sql`` : sql`AND status = ${status}`}
            ${after === undefined ? sql`` : sql`AND (created_at, id) > (${after.createdAt}::timestamptz, ${after.id})`}
          ORDER BY created_at, id
          LIMIT ${limit}`).pipe(Effect.flatMap(many)),
      close: (o) => orUnavailable(orderClose(sql, o)).pipe(Effect.asVoid),
      dueExpiries: (now, limit) =>
        orUnavailable(sql`
          SELECT ${columns} FROM orders
          WHERE status = 'pending' AND deadline_at <= ${now}::timestamptz
          ORDER BY deadline_at LIMIT ${limit}`).pipe(Effect.flatMap(many)),
      // At most `perSeller` of each seller: a seller with thousands of due orders takes that many
      // places in the batch, not all of them.
      duePushes: (now, perSeller, limit) =>
        orUnavailable(sql`
          SELECT ${columns} FROM (
            SELECT o.*, row_number() OVER (PARTITION BY seller_agent_id ORDER BY push_next_attempt_at, id) AS n
            FROM orders o
            WHERE status = 'pending' AND push_next_attempt_at IS NOT NULL AND push_accepted_at IS NULL
              AND push_next_attempt_at <= ${now}::timestamptz
          ) d
          WHERE n <= ${perSeller}
          ORDER BY push_next_attempt_at, id LIMIT ${limit}`).pipe(Effect.flatMap(many)),
      recordPushAttempt: (id, p, offeredAt) =>
        orUnavailable(sql`
          UPDATE orders SET push_attempts = ${p.attempts}, push_next_attempt_at = ${p.nextAttemptAt},
            push_accepted_at = ${p.acceptedAt}, push_last_error = ${p.lastError}
            ${offeredAt === undefined ? sql`` : sql`, offered_at = ${offeredAt}`}
          WHERE id = ${id}`).pipe(Effect.asVoid),
      sellersWithNewOrders: (sellers, since) =>
        sellers.length === 0
          ? Effect.succeed([])
          : orUnavailable(
              sql<{ readonly sellerAgentId: string }>`SELECT DISTINCT seller_agent_id FROM orders
                WHERE seller_agent_id IN ${sql.in(sellers)} AND status = 'pending' AND created_at > ${since}`
            ).pipe(Effect.map((rows) => rows.map((r) => r.sellerAgentId))),
      endedAmong: (ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : orUnavailable(
              sql<{ readonly id: string }>`SELECT id FROM orders WHERE id IN ${sql.in(ids)} AND status <> 'pending'`
            ).pipe(Effect.map((rows) => rows.map((r) => r.id))),
      markOffered: (ids, at) =>
        ids.length === 0
          ? Effect.void
          : orUnavailable(
              sql`UPDATE orders SET offered_at = ${at} WHERE id IN ${sql.in(ids)} AND offered_at IS NULL
                AND status = 'pending'`
            ).pipe(Effect.asVoid)
    })
  })
)
