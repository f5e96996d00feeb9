// Postgres DisputeStore: disputes, one per transaction; filing or resolving one moves the loser's
// disputes-lost counter in the same statement. Rows are decoded with DisputeRow.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { DisputeStatus } from "../../schema/commerce/disputes.js"
import { Conflict } from "../../schema/platform/errors.js"
import { DisputeStore } from "../../services/commerce/DisputeStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"
import { counterShard, disputeDeltas } from "../../schema/reputation/counters.js"
import { countersCte } from "../storage/postgres/counters.js"

const DISPUTE_COLUMNS =
  "id, transaction_id, buyer_agent_id, seller_agent_id, reason, status, seller_response, seller_note, resolution, " +
  "refund_cents, refund_entry_id, respond_by, review_due_at, created_at, updated_at, resolved_at"

/** A commerce_disputes row (DISPUTE_COLUMNS) as its DisputeRecord. */
const DisputeRow = Schema.Struct({
  id: Schema.String,
  transactionId: Schema.String,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  reason: Schema.String,
  status: DisputeStatus,
  sellerResponse: Schema.NullOr(Schema.Literals(["accept", "contest"])),
  sellerNote: Schema.NullOr(Schema.String),
  resolution: Schema.NullOr(Schema.String),
  refundCents: Schema.Number,
  refundEntryId: Schema.NullOr(Schema.String),
  respondBy: IsoTimestamp,
  reviewDueAt: IsoTimestampOrNull,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  resolvedAt: IsoTimestampOrNull
})
const IdRow = Schema.Struct({ id: Schema.String })
const StatusRow = Schema.Struct({ status: DisputeStatus })

/**
 * An agent's disputes as buyer or seller, newest first: each side walks its (agent, created_at, id)
 * index (an OR would read both sides whole and sort). Exported so test/suites/pages.test.ts EXPLAINs it.
 */
export const disputesPage = (
  sql: SqlClient.SqlClient,
  agentId: string,
  limit: number,
  before?: { readonly createdAt: string; readonly id: string }
) => {
  const after =
    before === undefined ? sql`` : sql`AND (created_at, id) < (${before.createdAt}::timestamptz, ${before.id})`
  const columns = sql.literal(DISPUTE_COLUMNS)
  return sql`SELECT * FROM (
      (SELECT ${columns} FROM commerce_disputes WHERE buyer_agent_id = ${agentId} ${after}
       ORDER BY created_at DESC, id DESC LIMIT ${limit})
      UNION ALL
      (SELECT ${columns} FROM commerce_disputes
       WHERE seller_agent_id = ${agentId} AND buyer_agent_id <> ${agentId} ${after}
       ORDER BY created_at DESC, id DESC LIMIT ${limit})
    ) d ORDER BY created_at DESC, id DESC LIMIT ${limit}`
}

export const PgDisputeStore = Layer.effect(
  DisputeStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const COLUMNS = sql.literal(DISPUTE_COLUMNS)
    const first = decodeFirst(DisputeRow)
    return {
      insert: (d) => {
        // Filed open in practice; one filed already resolved counts as lost at once.
        const lost = disputeDeltas(d, null, d.status)
        return orUnavailable(
          sql`WITH ins AS (
                INSERT INTO commerce_disputes (id, transaction_id, buyer_agent_id, seller_agent_id, reason, status,
                  seller_response, seller_note, resolution, refund_cents, refund_entry_id, respond_by, review_due_at,
                  created_at, updated_at, resolved_at)
                VALUES (${d.id}, ${d.transactionId}, ${d.buyerAgentId}, ${d.sellerAgentId}, ${d.reason}, ${d.status},
                  ${d.sellerResponse}, ${d.sellerNote}, ${d.resolution}, ${d.refundCents}, ${d.refundEntryId},
                  ${d.respondBy}, ${d.reviewDueAt}, ${d.createdAt}, ${d.updatedAt}, ${d.resolvedAt})
                ON CONFLICT (transaction_id) DO NOTHING RETURNING id)${
                  lost.length > 0
                    ? sql`, ${countersCte(sql, "counters", lost, counterShard(d.transactionId), sql`ins`)}`
                    : sql``
                }
              SELECT id FROM ins`
        ).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0
              ? Effect.fail(
                  new Conflict({ message: `transaction ${d.transactionId} already has a dispute`, state: "disputed" })
                )
              : Effect.void
          )
        )
      },
      get: (id) =>
        orUnavailable(sql`SELECT ${COLUMNS} FROM commerce_disputes WHERE id = ${id}`).pipe(Effect.flatMap(first)),
      lock: (id) =>
        orUnavailable(sql`SELECT ${COLUMNS} FROM commerce_disputes WHERE id = ${id} FOR UPDATE`).pipe(
          Effect.flatMap(first)
        ),
      // A resolution moves the loser's disputes-lost counter (seller on a refund, buyer on a
      // rejection): the row is read and locked first, the delta written with the update.
      update: Effect.fnUntraced(
        function* (d) {
          const before = yield* sql`SELECT status FROM commerce_disputes WHERE id = ${d.id} FOR UPDATE`.pipe(
            Effect.flatMap(decodeFirst(StatusRow))
          )
          const lost = before === undefined ? [] : disputeDeltas(d, before.status, d.status)
          yield* sql`WITH u AS (
              UPDATE commerce_disputes SET status = ${d.status}, seller_response = ${d.sellerResponse},
                seller_note = ${d.sellerNote}, resolution = ${d.resolution}, refund_cents = ${d.refundCents},
                refund_entry_id = ${d.refundEntryId}, review_due_at = ${d.reviewDueAt}, updated_at = ${d.updatedAt},
                resolved_at = ${d.resolvedAt} WHERE id = ${d.id} RETURNING id)${
                  lost.length > 0
                    ? sql`, ${countersCte(sql, "counters", lost, counterShard(d.transactionId), sql`u`)}`
                    : sql``
                }
            SELECT 1`
        },
        orUnavailable,
        Effect.asVoid
      ),
      listDue: (now, limit) =>
        orUnavailable(
          sql`SELECT id FROM commerce_disputes
            WHERE (status = 'open' AND respond_by <= ${now}) OR (status = 'under_review' AND review_due_at <= ${now})
            ORDER BY created_at LIMIT ${limit}`
        ).pipe(
          Effect.flatMap(decodeRows(IdRow)),
          Effect.map((rows) => rows.map((r) => r.id))
        ),
      listForAgent: (agentId, limit, before) =>
        orUnavailable(disputesPage(sql, agentId, limit, before)).pipe(Effect.flatMap(decodeRows(DisputeRow)))
    }
  })
)
