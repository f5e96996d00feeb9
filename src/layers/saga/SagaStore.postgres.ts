// Postgres store for purchase sagas (claimed by workers with FOR UPDATE SKIP LOCKED and a lease).
// Rows are decoded with the row schema below.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { SagaFailure, SagaStatus, SagaStep } from "../../schema/saga/saga.js"
import { SagaStore } from "../../services/saga/SagaStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

/** The `snapshot` column: what the quote step saw of the service (SagaSnapshot). */
const SnapshotColumn = Schema.Struct({
  serviceName: Schema.String,
  category: Schema.String,
  pricingModel: Schema.Literals(["per_call", "monthly", "usage_based", "tiered"]),
  listPriceCents: Schema.Number,
  promise: Schema.optionalKey(Schema.Struct({ p95LatencyMs: Schema.Number, uptimePct: Schema.Number })),
  deliveryLatencyMs: Schema.optionalKey(Schema.Number)
})

/** A `sagas` row as the SagaRecord it stores. */
const SagaRow = Schema.Struct({
  id: Schema.String,
  buyerAgentId: Schema.String,
  accountId: Schema.String,
  sellerAgentId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  input: Schema.Unknown,
  negotiationId: Schema.NullOr(Schema.String),
  priceCents: Schema.NullOr(Schema.Number),
  snapshot: Schema.NullOr(SnapshotColumn),
  transactionId: Schema.NullOr(Schema.String),
  status: SagaStatus,
  steps: Schema.Array(SagaStep),
  failure: Schema.NullOr(SagaFailure),
  output: Schema.Unknown,
  nextRunAt: IsoTimestampOrNull,
  deliverDueAt: IsoTimestampOrNull,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  finishedAt: IsoTimestampOrNull
})

const first = decodeFirst(SagaRow)
const rows = decodeRows(SagaRow)
const OwnedRow = Schema.Struct({ sagaId: Schema.String, transactionId: Schema.String })
const ClaimedRow = Schema.Struct({ id: Schema.String })
const claimedIds = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodeRows(ClaimedRow)(rows), (claimed) => claimed.map((r) => r.id))

/** jsonb parameter (null stays SQL NULL). */
const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v))

export const PgSagaStore = Layer.effect(
  SagaStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO sagas (id, buyer_agent_id, account_id, seller_agent_id, service_id, tier_id, input,
            negotiation_id, price_cents, snapshot, transaction_id, status, steps, failure, output, next_run_at,
            deliver_due_at, created_at, updated_at, finished_at)
          VALUES (${r.id}, ${r.buyerAgentId}, ${r.accountId}, ${r.sellerAgentId}, ${r.serviceId}, ${r.tierId},
            ${json(r.input)}::jsonb, ${r.negotiationId}, ${r.priceCents}, ${json(r.snapshot)}::jsonb,
            ${r.transactionId}, ${r.status}, ${JSON.stringify(r.steps)}::jsonb, ${json(r.failure)}::jsonb,
            ${json(r.output)}::jsonb, ${r.nextRunAt}, ${r.deliverDueAt}, ${r.createdAt}, ${r.updatedAt},
            ${r.finishedAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql`SELECT * FROM sagas WHERE id = ${id}`).pipe(Effect.flatMap(first)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM sagas WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(first)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE sagas SET price_cents = ${r.priceCents}, snapshot = ${json(r.snapshot)}::jsonb,
            transaction_id = ${r.transactionId}, status = ${r.status}, steps = ${JSON.stringify(r.steps)}::jsonb,
            failure = ${json(r.failure)}::jsonb, output = ${json(r.output)}::jsonb, next_run_at = ${r.nextRunAt},
            deliver_due_at = ${r.deliverDueAt}, updated_at = ${r.updatedAt}, finished_at = ${r.finishedAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      claimDue: (now, leaseUntil, limit) =>
        orUnavailable(sql`
          WITH due AS (
            SELECT id FROM sagas WHERE next_run_at IS NOT NULL AND next_run_at <= ${now}::timestamptz
            ORDER BY next_run_at, id COLLATE "C" LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE sagas s SET next_run_at = ${leaseUntil}::timestamptz FROM due WHERE s.id = due.id
          RETURNING s.id`).pipe(Effect.flatMap(claimedIds)),
      // The buyer's page walks sagas_buyer_page_idx (migration 0046), ids in byte order as in memory.
      listForBuyer: (buyerAgentId, limit, before) =>
        orUnavailable(sql`
          SELECT * FROM sagas WHERE buyer_agent_id = ${buyerAgentId}
            ${
              before === undefined
                ? sql``
                : sql`AND (created_at, id COLLATE "C") < (${before.createdAt}::timestamptz, ${before.id} COLLATE "C")`
            }
          ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${limit}`).pipe(Effect.flatMap(rows)),
      sagasOfTransactions: (buyerAgentId, transactionIds) =>
        transactionIds.length === 0
          ? Effect.succeed([])
          : orUnavailable(sql`
              SELECT id AS saga_id, transaction_id FROM sagas
              WHERE transaction_id IN ${sql.in(transactionIds)} AND buyer_agent_id = ${buyerAgentId}`).pipe(
              Effect.flatMap(decodeRows(OwnedRow))
            )
    }
  })
)
