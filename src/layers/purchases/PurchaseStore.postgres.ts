// Postgres PurchaseStore: transactions with their deliveries and reviews (transactions.postgres.ts
// has the row and the statements the settlement shares), and approvals. A write of a transaction,
// review or status change moves the buyer's running totals and its agents' counters in the same
// statement. Rows are decoded with TxRow and ApprovalRow; a transactions page is mapped by hand (mapTxPageRow: hot).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { type ApprovalRecord, ApprovalStatus } from "../../schema/commerce/approvals.js"
import { TransactionStatus } from "../../schema/commerce/transactions.js"
import { Conflict } from "../../schema/platform/errors.js"
import { PurchaseStore } from "../../services/purchases/PurchaseStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"
import {
  categoryDelta,
  counterShard,
  earningDayDelta,
  serviceDeltas,
  transactionDeltas
} from "../../schema/reputation/counters.js"
import { categoryCountsCte, countersCte, earningDaysCte, serviceCountsCte } from "../storage/postgres/counters.js"
import {
  mapTxPageRow,
  TX_COLUMNS,
  TX_SELECT_FROM,
  insertPendingTransaction,
  transactionCtes,
  transactionsPage,
  TxRow
} from "./transactions.postgres.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

const APPROVAL_COLUMN_LIST =
  "id, account_id, agent_id, service_id, tier_id, quoted_price_cents, negotiation_id, input, reason, status, " +
  "idempotency_key, reserved_transaction_id, transaction_id, decided_by, created_at, decided_at, expires_at"

/** A commerce_approvals row (APPROVAL_COLUMN_LIST); `input` is null when the buy had none. */
const ApprovalRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  agentId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  quotedPriceCents: Schema.Number,
  negotiationId: Schema.NullOr(Schema.String),
  input: Schema.Unknown,
  reason: Schema.Literals(["manual", "approvalThreshold"]),
  status: ApprovalStatus,
  idempotencyKey: Schema.NullOr(Schema.String),
  reservedTransactionId: Schema.String,
  transactionId: Schema.NullOr(Schema.String),
  decidedBy: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  decidedAt: IsoTimestampOrNull,
  expiresAt: IsoTimestamp
})
const toApproval = (a: typeof ApprovalRow.Type): ApprovalRecord => ({ ...a, input: a.input ?? null })
const approvals = (rows: ReadonlyArray<unknown>) => Effect.map(decodeRows(ApprovalRow)(rows), (a) => a.map(toApproval))
const approval = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodeFirst(ApprovalRow)(rows), (a) => (a === undefined ? undefined : toApproval(a)))

const txRows = (rows: ReadonlyArray<unknown>) => Effect.succeed(rows.map(mapTxPageRow))
const txRow = (rows: ReadonlyArray<unknown>) => Effect.succeed(rows.length === 0 ? undefined : mapTxPageRow(rows[0]))

/** What a status change reads (and locks) first: the row's status and its review's rating. */
const BeforeRow = Schema.Struct({ status: TransactionStatus, rating: Schema.NullOr(Schema.Number) })

/**
 * An account's approvals, newest first, optionally of one status: (account_id[, status],
 * created_at DESC, id DESC). Exported so test/suites/pages.test.ts EXPLAINs it.
 */
export const approvalsPage = (
  sql: SqlClient.SqlClient,
  accountId: string,
  status: ApprovalRecord["status"] | undefined,
  limit: number,
  before?: { readonly createdAt: string; readonly id: string }
) =>
  sql`SELECT ${sql.literal(APPROVAL_COLUMN_LIST)} FROM commerce_approvals WHERE account_id = ${accountId}
      ${status === undefined ? sql`` : sql`AND status = ${status}`}
      ${before === undefined ? sql`` : sql`AND (created_at, id) < (${before.createdAt}::timestamptz, ${before.id})`}
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`

export const PgPurchaseStore = Layer.effect(
  PurchaseStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const selectTx = sql.literal(TX_SELECT_FROM("commerce_transactions"))
    const APPROVAL_COLUMNS = sql.literal(APPROVAL_COLUMN_LIST)
    return {
      // One statement: the transaction, its delivery, and (when completed) the buyer's running totals.
      insertTransaction: (tx, d) =>
        orUnavailable(sql`WITH ${transactionCtes(sql, tx, d)} SELECT 1`).pipe(Effect.asVoid),
      insertPending: (tx) => orUnavailable(insertPendingTransaction(sql, tx)).pipe(Effect.asVoid),
      finishPending: (tx, d) =>
        orUnavailable(sql`WITH ${transactionCtes(sql, tx, d, { replacesPending: true })} SELECT 1`).pipe(Effect.asVoid),
      getTransaction: (id) => orUnavailable(sql`${selectTx} WHERE t.id = ${id}`).pipe(Effect.flatMap(txRow)),
      lockTransaction: (id) =>
        orUnavailable(
          sql`SELECT ${sql.literal(TX_COLUMNS)} FROM commerce_transactions t WHERE t.id = ${id} FOR UPDATE`
        ).pipe(Effect.flatMap(decodeFirst(TxRow))),
      // A status change moves the buyer's spend of the purchase's day with it (a refund gives it
      // back), and its agents' counters: the row's status and review are read (and locked) first,
      // so the counter deltas are computed once, by the same rules as the memory store's.
      updateTransaction: Effect.fnUntraced(function* (tx) {
        const before = yield* sql`
            SELECT t.status, r.rating FROM commerce_transactions t
            LEFT JOIN commerce_reviews r ON r.transaction_id = t.id
            WHERE t.id = ${tx.id} FOR UPDATE OF t`.pipe(Effect.flatMap(decodeFirst(BeforeRow)))
        if (before === undefined) return
        const shard = counterShard(tx.id)
        const counters = transactionDeltas(tx, before, { status: tx.status, rating: before.rating })
        const services = serviceDeltas(tx, before.status, tx.status)
        const categories = categoryDelta(before.status, tx.status)
        const earned = earningDayDelta(tx, before.status, tx.status)
        const extra = [
          ...(counters.length > 0 ? [countersCte(sql, "counters", counters, shard, sql`u`)] : []),
          ...(services.length > 0 ? [serviceCountsCte(sql, "svc_counts", services, shard, sql`u`)] : []),
          ...(categories !== 0
            ? [categoryCountsCte(sql, "cat_counts", tx.buyerAgentId, tx.category, categories, sql`u`)]
            : []),
          ...(earned !== null ? [earningDaysCte(sql, "earned", earned, shard, sql`u`)] : [])
        ]
        yield* sql`WITH before AS (SELECT status, price_cents, buyer_agent_id, created_at, service_id, service_name
              FROM commerce_transactions WHERE id = ${tx.id}),
            u AS (UPDATE commerce_transactions SET status = ${tx.status}, refunded_at = ${tx.refundedAt}
              WHERE id = ${tx.id} RETURNING id),
            delta AS (
              SELECT buyer_agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, service_id, service_name,
                (CASE WHEN ${tx.status} = 'completed' THEN 1 ELSE 0 END)
                  - (CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS sign,
                price_cents
              FROM before),
            spend AS (
              INSERT INTO agent_spend_days (agent_id, day, spent_cents)
              SELECT buyer_agent_id, day, sign * price_cents FROM delta WHERE sign <> 0
              ON CONFLICT (agent_id, day) DO UPDATE
                SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents)${
                  extra.length > 0 ? sql`, ${sql.csv(extra)}` : sql``
                }
            INSERT INTO agent_usage_days (agent_id, day, service_id, service_name, calls, spent_cents)
            SELECT buyer_agent_id, day, service_id, service_name, sign, sign * price_cents FROM delta WHERE sign <> 0
            ON CONFLICT (agent_id, day, service_id) DO UPDATE SET calls = agent_usage_days.calls + excluded.calls,
              spent_cents = agent_usage_days.spent_cents + excluded.spent_cents`
      }, orUnavailable),
      findByIdempotencyKey: (buyer, key) =>
        orUnavailable(sql`${selectTx} WHERE t.buyer_agent_id = ${buyer} AND t.idempotency_key = ${key}`).pipe(
          Effect.flatMap(txRow)
        ),
      listTransactions: (f) => orUnavailable(transactionsPage(sql, f)).pipe(Effect.flatMap(txRows)),
      insertReview: (r) =>
        orUnavailable(
          sql`WITH rv AS (
                INSERT INTO commerce_reviews (id, transaction_id, service_id, reviewer_agent_id, seller_agent_id,
                  rating, text, created_at)
                VALUES (${r.id}, ${r.transactionId}, ${r.serviceId}, ${r.reviewerAgentId}, ${r.sellerAgentId},
                  ${r.rating}, ${r.text}, ${r.createdAt})
                ON CONFLICT (transaction_id) DO NOTHING RETURNING id),
              counters AS (
                INSERT INTO agent_counters (agent_id, shard, reviews_received, rating_sum)
                SELECT t.seller_agent_id, ${counterShard(r.transactionId)}::smallint, 1, ${r.rating}::bigint
                FROM rv JOIN commerce_transactions t ON t.id = ${r.transactionId} WHERE t.status = 'completed'
                ON CONFLICT (agent_id, shard) DO UPDATE SET reviews_received = agent_counters.reviews_received + 1,
                  rating_sum = agent_counters.rating_sum + excluded.rating_sum)
              SELECT id FROM rv`
        ).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0
              ? Effect.fail(
                  new Conflict({ message: `transaction ${r.transactionId} was already reviewed`, state: "reviewed" })
                )
              : Effect.void
          )
        ),
      insertApproval: (a) =>
        orUnavailable(
          sql`INSERT INTO commerce_approvals (id, account_id, agent_id, service_id, tier_id, quoted_price_cents,
                negotiation_id, input, reason, status, idempotency_key, reserved_transaction_id, transaction_id,
                decided_by, created_at, decided_at, expires_at)
              VALUES (${a.id}, ${a.accountId}, ${a.agentId}, ${a.serviceId}, ${a.tierId}, ${a.quotedPriceCents},
                ${a.negotiationId}, ${json(a.input)}::jsonb, ${a.reason}, ${a.status}, ${a.idempotencyKey},
                ${a.reservedTransactionId}, ${a.transactionId}, ${a.decidedBy}, ${a.createdAt}, ${a.decidedAt},
                ${a.expiresAt})`
        ).pipe(Effect.asVoid),
      lockApproval: (id) =>
        orUnavailable(sql`SELECT ${APPROVAL_COLUMNS} FROM commerce_approvals WHERE id = ${id} FOR UPDATE`).pipe(
          Effect.flatMap(approval)
        ),
      updateApproval: (a) =>
        orUnavailable(
          sql`UPDATE commerce_approvals SET status = ${a.status}, transaction_id = ${a.transactionId},
              decided_by = ${a.decidedBy}, decided_at = ${a.decidedAt} WHERE id = ${a.id}`
        ).pipe(Effect.asVoid),
      findApprovalByKey: (agentId, key) =>
        orUnavailable(
          sql`SELECT ${APPROVAL_COLUMNS} FROM commerce_approvals
              WHERE agent_id = ${agentId} AND idempotency_key = ${key}`
        ).pipe(Effect.flatMap(approval)),
      listApprovals: (accountId, status, limit, before) =>
        orUnavailable(approvalsPage(sql, accountId, status, limit, before)).pipe(Effect.flatMap(approvals)),
      listAgentApprovals: (agentId, limit, before) =>
        orUnavailable(
          sql`SELECT ${APPROVAL_COLUMNS} FROM commerce_approvals WHERE agent_id = ${agentId}
            ${before === undefined ? sql`` : sql`AND (created_at, id) < (${before.createdAt}::timestamptz, ${before.id})`}
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        ).pipe(Effect.flatMap(approvals))
    }
  })
)
