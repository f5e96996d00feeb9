// The commerce_transactions statements shared by the Postgres PurchaseStore and the settlement's
// one statement: the row (TxRow decoded; a TxJoinRow page mapped by hand), the join with its delivery, review and
// dispute, the CTEs that write a transaction with its running totals and counters, and the page.
import type { SqlClient } from "effect/sql"
import { Schema } from "effect"
import { PricingModel } from "../../schema/commerce/common.js"
import type { TransactionFilter } from "../../schema/commerce/filters.js"
import {
  type DeliveryRecord,
  type TransactionRecord,
  type TransactionRow,
  TransactionStatus
} from "../../schema/commerce/transactions.js"
import { utcDay } from "../../schema/wallet/policy.js"
import { iso } from "../storage/postgres/PgDb.js"
import { IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"
import {
  categoryDelta,
  counterShard,
  earningDayDelta,
  serviceDeltas,
  transactionDeltas
} from "../../schema/reputation/counters.js"
import { categoryCountsCte, countersCte, earningDaysCte, serviceCountsCte } from "../storage/postgres/counters.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

const txFields = {
  id: Schema.String,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tierId: Schema.String,
  listPriceCents: Schema.Number,
  priceCents: Schema.Number,
  sellerCents: Schema.Number,
  feeCents: Schema.Number,
  negotiationId: Schema.NullOr(Schema.String),
  approvalId: Schema.NullOr(Schema.String),
  idempotencyKey: Schema.NullOr(Schema.String),
  status: TransactionStatus,
  ledgerEntryId: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  refundedAt: IsoTimestampOrNull
}

/** A commerce_transactions row (TX_COLUMNS) as its TransactionRecord. */
export const TxRow = Schema.Struct(txFields)

/** A row of TX_SELECT_FROM: the transaction's columns and its delivery's, review's and dispute's. */
export const TxJoinRow = Schema.Struct({
  ...txFields,
  dServiceId: Schema.NullOr(Schema.String),
  dTierId: Schema.NullOr(Schema.String),
  dSuccess: Schema.NullOr(Schema.Boolean),
  dLatencyMs: Schema.NullOr(Schema.Number),
  dOutput: Schema.Unknown,
  dError: Schema.NullOr(Schema.String),
  dDeliveredAt: IsoTimestampOrNull,
  rId: Schema.NullOr(Schema.String),
  rReviewerAgentId: Schema.NullOr(Schema.String),
  rRating: Schema.NullOr(Schema.Number),
  rText: Schema.NullOr(Schema.String),
  rCreatedAt: IsoTimestampOrNull,
  disputeId: Schema.NullOr(Schema.String)
})

type Raw = Readonly<Record<string, unknown>>
const isoOf = (value: unknown): string => iso(value as Date | string)
const isoOrNullOf = (value: unknown): string | null => (value === null ? null : iso(value as Date | string))

/**
 * A transactions page's row mapped by hand, straight to the stores' TransactionRow, rather than
 * decoded: it is a hot read (docs/performance.md). One pass with literal object shapes: a generic
 * key loop and rest destructuring cost a page a fifth of its server time. Row types come from the
 * driver (the columns' SQL types); timestamps become ISO strings as TxJoinRow's decode makes them.
 * test/suites/row-mapping-commerce.test.ts pins this to `toTxRow` of TxJoinRow's decode.
 */
export const mapTxPageRow = (raw: unknown): TransactionRow => {
  const r = raw as Raw
  const id = r.id as string
  const serviceId = r.serviceId as string
  const sellerAgentId = r.sellerAgentId as string
  const tx: TransactionRecord = {
    id,
    buyerAgentId: r.buyerAgentId as string,
    sellerAgentId,
    serviceId,
    serviceName: r.serviceName as string,
    category: r.category as string,
    pricingModel: r.pricingModel as TransactionRecord["pricingModel"],
    tierId: r.tierId as string,
    listPriceCents: r.listPriceCents as number,
    priceCents: r.priceCents as number,
    sellerCents: r.sellerCents as number,
    feeCents: r.feeCents as number,
    negotiationId: r.negotiationId as string | null,
    approvalId: r.approvalId as string | null,
    idempotencyKey: r.idempotencyKey as string | null,
    status: r.status as TransactionRecord["status"],
    ledgerEntryId: r.ledgerEntryId as string | null,
    createdAt: isoOf(r.createdAt),
    refundedAt: isoOrNullOf(r.refundedAt)
  }
  const delivery: DeliveryRecord | undefined =
    r.dSuccess === null
      ? undefined
      : {
          transactionId: id,
          serviceId: r.dServiceId as string,
          tierId: r.dTierId as string,
          success: r.dSuccess as boolean,
          latencyMs: r.dLatencyMs as number,
          output: r.dOutput ?? null,
          error: r.dError as string | null,
          deliveredAt: isoOf(r.dDeliveredAt)
        }
  const review =
    r.rId === null
      ? undefined
      : {
          id: r.rId as string,
          transactionId: id,
          serviceId,
          reviewerAgentId: r.rReviewerAgentId as string,
          sellerAgentId,
          rating: r.rRating as number,
          text: r.rText as string | null,
          createdAt: isoOf(r.rCreatedAt)
        }
  return { tx, delivery, review, disputeId: r.disputeId as string | null }
}

/** A decoded TxJoinRow as the stores' TransactionRow: the delivery and review when the row has them. */
export const toTxRow = (r: typeof TxJoinRow.Type): TransactionRow => {
  const { dServiceId, dTierId, dSuccess, dLatencyMs, dOutput, dError, dDeliveredAt, ...rest } = r
  const { rId, rReviewerAgentId, rRating, rText, rCreatedAt, disputeId, ...tx } = rest
  const delivery: DeliveryRecord | undefined =
    dSuccess === null
      ? undefined
      : {
          transactionId: r.id,
          serviceId: dServiceId!,
          tierId: dTierId!,
          success: dSuccess,
          latencyMs: dLatencyMs!,
          output: dOutput ?? null,
          error: dError,
          deliveredAt: dDeliveredAt!
        }
  const review =
    rId === null
      ? undefined
      : {
          id: rId,
          transactionId: r.id,
          serviceId: r.serviceId,
          reviewerAgentId: rReviewerAgentId!,
          sellerAgentId: r.sellerAgentId,
          rating: rRating!,
          text: rText,
          createdAt: rCreatedAt!
        }
  return { tx, delivery, review, disputeId }
}

export const TX_COLUMNS = `t.id, t.buyer_agent_id, t.seller_agent_id, t.service_id, t.service_name, t.category,
  t.pricing_model, t.tier_id, t.list_price_cents, t.price_cents, t.seller_cents, t.fee_cents, t.negotiation_id,
  t.approval_id, t.idempotency_key, t.status, t.ledger_entry_id, t.created_at, t.refunded_at`

/**
 * The transaction columns joined with its delivery, review and dispute, from `source` aliased t.
 * Each is a per-row lookup by its unique transaction_id (LATERAL … LIMIT 1 keeps the planner from
 * hashing a whole table for one page: it did for reviews, test/suites/pages.test.ts).
 */
export const TX_SELECT_FROM = (source: string) => `SELECT ${TX_COLUMNS},
  d.service_id AS d_service_id, d.tier_id AS d_tier_id, d.success AS d_success, d.latency_ms AS d_latency_ms,
  d.output AS d_output, d.error AS d_error, d.delivered_at AS d_delivered_at,
  r.id AS r_id, r.reviewer_agent_id AS r_reviewer_agent_id, r.rating AS r_rating, r.text AS r_text,
  r.created_at AS r_created_at,
  dp.id AS dispute_id
  FROM ${source} t
  LEFT JOIN LATERAL (SELECT * FROM commerce_deliveries WHERE transaction_id = t.id LIMIT 1) d ON TRUE
  LEFT JOIN LATERAL (SELECT * FROM commerce_reviews WHERE transaction_id = t.id LIMIT 1) r ON TRUE
  LEFT JOIN LATERAL (SELECT id FROM commerce_disputes WHERE transaction_id = t.id LIMIT 1) dp ON TRUE`

/**
 * The CTEs (for a WITH) that write a transaction: `t` (the row), the buyer's running totals of
 * its UTC day (spend, and usage per service) when it completed, its agents' counters (migration
 * 0018: buyer and seller rows on the transaction's shard, in agent order), and `dl`, its delivery
 * record. `t` inserts the row, or, for a purchase whose order was placed (`replacesPending`), turns
 * its pending row into this one: the pending row counted in nothing, so the totals, counters and
 * delivery are written as for a new transaction, and only if the row was still pending (`FROM t`).
 * Shared by insertTransaction and the settlement's one statement.
 */
export const transactionCtes = (
  sql: SqlClient.SqlClient,
  tx: TransactionRecord,
  d: DeliveryRecord,
  options: { readonly replacesPending?: boolean } = {}
) => {
  const shard = counterShard(tx.id)
  const services = serviceDeltas(tx, null, tx.status)
  const categories = categoryDelta(null, tx.status)
  const earned = earningDayDelta(tx, null, tx.status)
  const day = utcDay(tx.createdAt)
  const row =
    options.replacesPending === true
      ? sql`UPDATE commerce_transactions SET status = ${tx.status}, seller_cents = ${tx.sellerCents},
          fee_cents = ${tx.feeCents}, ledger_entry_id = ${tx.ledgerEntryId}, refunded_at = ${tx.refundedAt}
        WHERE id = ${tx.id} AND status = 'pending'
        RETURNING id`
      : sql`INSERT INTO commerce_transactions (id, buyer_agent_id, seller_agent_id, service_id, service_name, category,
        pricing_model, tier_id, list_price_cents, price_cents, seller_cents, fee_cents, negotiation_id, approval_id,
        idempotency_key, status, ledger_entry_id, created_at, refunded_at)
      VALUES (${tx.id}, ${tx.buyerAgentId}, ${tx.sellerAgentId}, ${tx.serviceId}, ${tx.serviceName}, ${tx.category},
        ${tx.pricingModel}, ${tx.tierId}, ${tx.listPriceCents}, ${tx.priceCents}, ${tx.sellerCents}, ${tx.feeCents},
        ${tx.negotiationId}, ${tx.approvalId}, ${tx.idempotencyKey}, ${tx.status}, ${tx.ledgerEntryId},
        ${tx.createdAt}, ${tx.refundedAt})
      RETURNING id`
  return sql`t AS (${row}),
    spend AS (
      INSERT INTO agent_spend_days (agent_id, day, spent_cents)
      SELECT ${tx.buyerAgentId}, ${day}::date, ${tx.priceCents}::bigint FROM t WHERE ${tx.status} = 'completed'
      ON CONFLICT (agent_id, day) DO UPDATE SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents),
    usage AS (
      INSERT INTO agent_usage_days (agent_id, day, service_id, service_name, calls, spent_cents)
      SELECT ${tx.buyerAgentId}, ${day}::date, ${tx.serviceId}, ${tx.serviceName}, 1, ${tx.priceCents}::bigint
      FROM t WHERE ${tx.status} = 'completed'
      ON CONFLICT (agent_id, day, service_id) DO UPDATE SET calls = agent_usage_days.calls + 1,
        spent_cents = agent_usage_days.spent_cents + excluded.spent_cents,
        service_name = GREATEST(agent_usage_days.service_name, excluded.service_name)),
    ${countersCte(sql, "counters", transactionDeltas(tx, null, { status: tx.status, rating: null }), shard, sql`t`)},${
      services.length > 0 ? sql` ${serviceCountsCte(sql, "svc_counts", services, shard, sql`t`)},` : sql``
    }${
      categories !== 0
        ? sql` ${categoryCountsCte(sql, "cat_counts", tx.buyerAgentId, tx.category, categories, sql`t`)},`
        : sql``
    }${earned !== null ? sql` ${earningDaysCte(sql, "earned", earned, shard, sql`t`)},` : sql``}
    dl AS (
      INSERT INTO commerce_deliveries (transaction_id, service_id, tier_id, success, latency_ms, output, error,
        delivered_at)
      SELECT t.id, ${d.serviceId}, ${d.tierId}, ${d.success}, ${d.latencyMs}, ${json(d.output)}::jsonb, ${d.error},
        ${d.deliveredAt} FROM t)`
}

/**
 * A pending transaction's row alone (an order waiting for its seller): no delivery, and no running
 * total or counter moves until it ends. A statement alone, or the settlement's CTE.
 */
export const insertPendingTransaction = (sql: SqlClient.SqlClient, tx: TransactionRecord) =>
  sql`INSERT INTO commerce_transactions (id, buyer_agent_id, seller_agent_id, service_id, service_name, category,
      pricing_model, tier_id, list_price_cents, price_cents, seller_cents, fee_cents, negotiation_id, approval_id,
      idempotency_key, status, ledger_entry_id, created_at, refunded_at)
    VALUES (${tx.id}, ${tx.buyerAgentId}, ${tx.sellerAgentId}, ${tx.serviceId}, ${tx.serviceName}, ${tx.category},
      ${tx.pricingModel}, ${tx.tierId}, ${tx.listPriceCents}, ${tx.priceCents}, ${tx.sellerCents}, ${tx.feeCents},
      ${tx.negotiationId}, ${tx.approvalId}, ${tx.idempotencyKey}, 'pending', ${tx.ledgerEntryId},
      ${tx.createdAt}, ${tx.refundedAt})`

const TRANSACTION_STATUSES: Readonly<Record<TransactionRecord["status"], string>> = {
  pending: "pending",
  completed: "completed",
  failed: "failed",
  refunded: "refunded"
}

/**
 * An agent's transactions, newest first (rows of TxJoinRow): each side walks its own (agent,
 * created_at, id) index and stops after `limit` rows; only the page's rows are joined. Exported so
 * test/suites/pages.test.ts EXPLAINs the very statement the store runs.
 */
export const transactionsPage = (sql: SqlClient.SqlClient, f: TransactionFilter) => {
  const filters = [sql`TRUE`]
  if (f.serviceId !== undefined) filters.push(sql`service_id = ${f.serviceId}`)
  // A literal (a decoded TransactionStatus, never free text): the planner then proves a rare status's
  // partial index applies, in every plan (migration 0019).
  if (f.status !== undefined) filters.push(sql`status = ${sql.literal(`'${TRANSACTION_STATUSES[f.status]}'`)}`)
  if (f.from !== undefined) filters.push(sql`created_at >= ${f.from}`)
  if (f.to !== undefined) filters.push(sql`created_at < ${f.to}`)
  if (f.before !== undefined) {
    filters.push(sql`(created_at, id) < (${f.before.createdAt}::timestamptz, ${f.before.id})`)
  }
  const side = (column: "buyer_agent_id" | "seller_agent_id", extra = sql`TRUE`) =>
    sql`(SELECT * FROM commerce_transactions WHERE ${sql(column)} = ${f.agentId} AND ${extra} AND ${sql.and(filters)}
         ORDER BY created_at DESC, id DESC LIMIT ${f.limit})`
  const source =
    f.role === "buyer"
      ? side("buyer_agent_id")
      : f.role === "seller"
        ? side("seller_agent_id")
        : sql`(${side("buyer_agent_id")} UNION ALL ${side("seller_agent_id", sql`buyer_agent_id <> ${f.agentId}`)})`
  return sql`WITH page AS (SELECT * FROM ${source} u ORDER BY created_at DESC, id DESC LIMIT ${f.limit})
                 ${sql.literal(TX_SELECT_FROM("page"))} ORDER BY t.created_at DESC, t.id DESC`
}
