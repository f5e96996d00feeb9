// Postgres commerce stores: catalog, wallets (row-locked FOR UPDATE), transactions with their
// deliveries and reviews, approvals, disputes and the analytics aggregates.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { type ApprovalRecord } from "../../schema/commerce/approvals.js"
import { type DeliveryRecord, type TransactionRecord, type TransactionRow } from "../../schema/commerce/transactions.js"
import { type DisputeRecord } from "../../schema/commerce/disputes.js"
import { type ReputationInputs } from "../../schema/reputation/reputation.js"
import { type ReviewRecord } from "../../schema/commerce/reviews.js"
import { searchText, type ServiceRecord } from "../../schema/commerce/services.js"
import { type ServiceFilter, type RankedFilter, type TransactionFilter } from "../../schema/commerce/filters.js"
import { type UsageRow } from "../../schema/commerce/analytics.js"
import { type WalletRecord } from "../../schema/commerce/wallets.js"
import { Conflict } from "../../schema/platform/errors.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { CatalogStore } from "../../services/commerce/Catalog.js"
import { CommerceStore } from "../../services/commerce/CommerceStore.js"
import { DisputeStore } from "../../services/commerce/Disputes.js"
import { AnalyticsStore, type ServiceCountRow } from "../../services/reputation/Reputation.js"
import { dayBoundary, utcDay } from "../../schema/wallet/policy.js"
import { type RechargeRequest, WalletStore } from "../../services/wallet/WalletStore.js"
import { categoryDelta, counterShard, disputeDeltas, serviceDeltas, transactionDeltas } from "./counters.js"
import { categoryCountsCte, COUNTER_DRIFT_SQL, countersCte, serviceCountsCte } from "./counters.postgres.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

type Dated<T, K extends keyof T> = Omit<T, K> & { readonly [P in K]: T[P] extends string ? Date : Date | null }

export type ServiceRow = Dated<ServiceRecord, "createdAt" | "updatedAt">
export const toService = (r: ServiceRow): ServiceRecord => ({ ...r, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) })
export const SERVICE_COLUMNS = "id, seller_agent_id, name, description, category, pricing_model, tags, tiers, negotiation, status, rating_sum, rating_count, created_at, updated_at"

interface TxJoinRow extends Dated<TransactionRecord, "createdAt" | "refundedAt"> {
  readonly dServiceId: string | null
  readonly dTierId: string | null
  readonly dSuccess: boolean | null
  readonly dLatencyMs: number | null
  readonly dOutput: unknown
  readonly dError: string | null
  readonly dDeliveredAt: Date | null
  readonly rId: string | null
  readonly rReviewerAgentId: string | null
  readonly rRating: number | null
  readonly rText: string | null
  readonly rCreatedAt: Date | null
  readonly disputeId: string | null
}
const TX_COLUMNS = `t.id, t.buyer_agent_id, t.seller_agent_id, t.service_id, t.service_name, t.category, t.pricing_model, t.tier_id,
  t.list_price_cents, t.price_cents, t.seller_cents, t.fee_cents, t.negotiation_id, t.approval_id, t.idempotency_key, t.status,
  t.ledger_entry_id, t.created_at, t.refunded_at`
/**
 * The transaction columns joined with its delivery, review and dispute, from `source` aliased t.
 * Each is a per-row lookup by its unique transaction_id (LATERAL … LIMIT 1 keeps the planner from
 * hashing a whole table for a page of 20: it did for reviews, test/suites/pages.test.ts).
 */
const TX_SELECT_FROM = (source: string) => `SELECT ${TX_COLUMNS},
  d.service_id AS d_service_id, d.tier_id AS d_tier_id, d.success AS d_success, d.latency_ms AS d_latency_ms, d.output AS d_output,
  d.error AS d_error, d.delivered_at AS d_delivered_at,
  r.id AS r_id, r.reviewer_agent_id AS r_reviewer_agent_id, r.rating AS r_rating, r.text AS r_text, r.created_at AS r_created_at,
  dp.id AS dispute_id
  FROM ${source} t
  LEFT JOIN LATERAL (SELECT * FROM commerce_deliveries WHERE transaction_id = t.id LIMIT 1) d ON TRUE
  LEFT JOIN LATERAL (SELECT * FROM commerce_reviews WHERE transaction_id = t.id LIMIT 1) r ON TRUE
  LEFT JOIN LATERAL (SELECT id FROM commerce_disputes WHERE transaction_id = t.id LIMIT 1) dp ON TRUE`
const TX_SELECT = TX_SELECT_FROM("commerce_transactions")

const toTxRecord = (r: Dated<TransactionRecord, "createdAt" | "refundedAt">): TransactionRecord => ({
  id: r.id,
  buyerAgentId: r.buyerAgentId,
  sellerAgentId: r.sellerAgentId,
  serviceId: r.serviceId,
  serviceName: r.serviceName,
  category: r.category,
  pricingModel: r.pricingModel,
  tierId: r.tierId,
  listPriceCents: r.listPriceCents,
  priceCents: r.priceCents,
  sellerCents: r.sellerCents,
  feeCents: r.feeCents,
  negotiationId: r.negotiationId,
  approvalId: r.approvalId,
  idempotencyKey: r.idempotencyKey,
  status: r.status,
  ledgerEntryId: r.ledgerEntryId,
  createdAt: iso(r.createdAt),
  refundedAt: isoOrNull(r.refundedAt)
})

const toTxRow = (r: TxJoinRow): TransactionRow => {
  const tx = toTxRecord(r)
  const delivery: DeliveryRecord | undefined =
    r.dSuccess === null
      ? undefined
      : { transactionId: r.id, serviceId: r.dServiceId!, tierId: r.dTierId!, success: r.dSuccess, latencyMs: r.dLatencyMs!, output: r.dOutput ?? null, error: r.dError, deliveredAt: iso(r.dDeliveredAt!) }
  const review: ReviewRecord | undefined =
    r.rId === null
      ? undefined
      : { id: r.rId, transactionId: r.id, serviceId: r.serviceId, reviewerAgentId: r.rReviewerAgentId!, sellerAgentId: r.sellerAgentId, rating: r.rRating!, text: r.rText, createdAt: iso(r.rCreatedAt!) }
  return { tx, delivery, review, disputeId: r.disputeId }
}

type ApprovalRow = Dated<ApprovalRecord, "createdAt" | "decidedAt" | "expiresAt">
const toApproval = (r: ApprovalRow): ApprovalRecord => ({
  ...r,
  input: r.input ?? null,
  createdAt: iso(r.createdAt),
  decidedAt: isoOrNull(r.decidedAt),
  expiresAt: iso(r.expiresAt)
})

type DisputeRow = Dated<DisputeRecord, "respondBy" | "reviewDueAt" | "createdAt" | "updatedAt" | "resolvedAt">
const toDispute = (r: DisputeRow): DisputeRecord => ({
  ...r,
  respondBy: iso(r.respondBy),
  reviewDueAt: isoOrNull(r.reviewDueAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
  resolvedAt: isoOrNull(r.resolvedAt)
})

const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * The CTEs (for a WITH) that write a transaction: `t` (the row), the buyer's running totals of
 * its UTC day (spend, and usage per service) when it completed, its agents' counters (migration
 * 0018: buyer and seller rows on the transaction's shard, in agent order), and `dl`, its delivery
 * record. Shared by insertTransaction and the settlement's one statement (settlement.ts).
 */
export const transactionCtes = (sql: SqlClient.SqlClient, tx: TransactionRecord, d: DeliveryRecord) => {
  const shard = counterShard(tx.id)
  const services = serviceDeltas(tx, null, tx.status)
  const categories = categoryDelta(null, tx.status)
  return sql`t AS (
      INSERT INTO commerce_transactions (id, buyer_agent_id, seller_agent_id, service_id, service_name, category, pricing_model, tier_id,
        list_price_cents, price_cents, seller_cents, fee_cents, negotiation_id, approval_id, idempotency_key, status, ledger_entry_id, created_at, refunded_at)
      VALUES (${tx.id}, ${tx.buyerAgentId}, ${tx.sellerAgentId}, ${tx.serviceId}, ${tx.serviceName}, ${tx.category}, ${tx.pricingModel}, ${tx.tierId},
        ${tx.listPriceCents}, ${tx.priceCents}, ${tx.sellerCents}, ${tx.feeCents}, ${tx.negotiationId}, ${tx.approvalId}, ${tx.idempotencyKey},
        ${tx.status}, ${tx.ledgerEntryId}, ${tx.createdAt}, ${tx.refundedAt})
      RETURNING id),
    spend AS (
      INSERT INTO agent_spend_days (agent_id, day, spent_cents)
      SELECT ${tx.buyerAgentId}, ${utcDay(tx.createdAt)}::date, ${tx.priceCents}::bigint FROM t WHERE ${tx.status} = 'completed'
      ON CONFLICT (agent_id, day) DO UPDATE SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents),
    usage AS (
      INSERT INTO agent_usage_days (agent_id, day, service_id, service_name, calls, spent_cents)
      SELECT ${tx.buyerAgentId}, ${utcDay(tx.createdAt)}::date, ${tx.serviceId}, ${tx.serviceName}, 1, ${tx.priceCents}::bigint FROM t WHERE ${tx.status} = 'completed'
      ON CONFLICT (agent_id, day, service_id) DO UPDATE SET calls = agent_usage_days.calls + 1,
        spent_cents = agent_usage_days.spent_cents + excluded.spent_cents,
        service_name = GREATEST(agent_usage_days.service_name, excluded.service_name)),
    ${countersCte(sql, "counters", transactionDeltas(tx, null, { status: tx.status, rating: null }), shard, sql`t`)},${
    services.length > 0 ? sql` ${serviceCountsCte(sql, "svc_counts", services, shard, sql`t`)},` : sql``
  }${categories !== 0 ? sql` ${categoryCountsCte(sql, "cat_counts", tx.buyerAgentId, tx.category, categories, sql`t`)},` : sql``}
    dl AS (
      INSERT INTO commerce_deliveries (transaction_id, service_id, tier_id, success, latency_ms, output, error, delivered_at)
      SELECT t.id, ${d.serviceId}, ${d.tierId}, ${d.success}, ${d.latencyMs}, ${json(d.output)}::jsonb, ${d.error}, ${d.deliveredAt} FROM t)`
}

// The pages: each walks an index that serves its filter and order ((agent | account [, status],
// created_at DESC, id DESC); migrations 0005 and 0018) and stops after `limit` rows. Exported so
// test/suites/pages.test.ts EXPLAINs the very statements the stores run.

const TRANSACTION_STATUSES: Readonly<Record<TransactionRecord["status"], string>> = { completed: "completed", failed: "failed", refunded: "refunded" }

/** An agent's transactions, newest first: each side walks its own (agent, created_at, id) index and stops after `limit` rows; only the page's rows are joined. */
export const transactionsPage = (sql: SqlClient.SqlClient, f: TransactionFilter) => {
  const filters = [sql`TRUE`]
  if (f.serviceId !== undefined) filters.push(sql`service_id = ${f.serviceId}`)
  // A literal (a decoded TransactionStatus, never free text): the planner then proves a rare status's
  // partial index applies, in every plan (migration 0019).
  if (f.status !== undefined) filters.push(sql`status = ${sql.literal(`'${TRANSACTION_STATUSES[f.status]}'`)}`)
  if (f.from !== undefined) filters.push(sql`created_at >= ${f.from}`)
  if (f.to !== undefined) filters.push(sql`created_at < ${f.to}`)
  if (f.before !== undefined) filters.push(sql`(created_at, id) < (${f.before.createdAt}::timestamptz, ${f.before.id})`)
  const side = (column: "buyer_agent_id" | "seller_agent_id", extra = sql`TRUE`) =>
    sql`(SELECT * FROM commerce_transactions WHERE ${sql(column)} = ${f.agentId} AND ${extra} AND ${sql.and(filters)}
         ORDER BY created_at DESC, id DESC LIMIT ${f.limit})`
  const source =
    f.role === "buyer"
      ? side("buyer_agent_id")
      : f.role === "seller"
        ? side("seller_agent_id")
        : sql`(${side("buyer_agent_id")} UNION ALL ${side("seller_agent_id", sql`buyer_agent_id <> ${f.agentId}`)})`
  return sql<TxJoinRow>`WITH page AS (SELECT * FROM ${source} u ORDER BY created_at DESC, id DESC LIMIT ${f.limit})
                 ${sql.literal(TX_SELECT_FROM("page"))} ORDER BY t.created_at DESC, t.id DESC`
}

const APPROVAL_COLUMN_LIST = "id, account_id, agent_id, service_id, tier_id, quoted_price_cents, negotiation_id, input, reason, status, idempotency_key, reserved_transaction_id, transaction_id, decided_by, created_at, decided_at, expires_at"

/** An account's approvals, newest first, optionally of one status: (account_id[, status], created_at DESC, id DESC). */
export const approvalsPage = (
  sql: SqlClient.SqlClient,
  accountId: string,
  status: ApprovalRecord["status"] | undefined,
  limit: number,
  before?: { readonly createdAt: string; readonly id: string }
) =>
  sql<ApprovalRow>`SELECT ${sql.literal(APPROVAL_COLUMN_LIST)} FROM commerce_approvals WHERE account_id = ${accountId} ${status === undefined ? sql`` : sql`AND status = ${status}`}
                   ${before === undefined ? sql`` : sql`AND (created_at, id) < (${before.createdAt}::timestamptz, ${before.id})`}
                   ORDER BY created_at DESC, id DESC LIMIT ${limit}`

const DISPUTE_COLUMNS =
  "id, transaction_id, buyer_agent_id, seller_agent_id, reason, status, seller_response, seller_note, resolution, refund_cents, refund_entry_id, respond_by, review_due_at, created_at, updated_at, resolved_at"

/** An agent's disputes as buyer or seller, newest first: each side walks its (agent, created_at, id) index (an OR would read both sides whole and sort). */
export const disputesPage = (sql: SqlClient.SqlClient, agentId: string, limit: number, before?: { readonly createdAt: string; readonly id: string }) => {
  const after = before === undefined ? sql`` : sql`AND (created_at, id) < (${before.createdAt}::timestamptz, ${before.id})`
  return sql<DisputeRow>`SELECT * FROM (
      (SELECT ${sql.literal(DISPUTE_COLUMNS)} FROM commerce_disputes WHERE buyer_agent_id = ${agentId} ${after} ORDER BY created_at DESC, id DESC LIMIT ${limit})
      UNION ALL
      (SELECT ${sql.literal(DISPUTE_COLUMNS)} FROM commerce_disputes WHERE seller_agent_id = ${agentId} AND buyer_agent_id <> ${agentId} ${after}
       ORDER BY created_at DESC, id DESC LIMIT ${limit})
    ) d ORDER BY created_at DESC, id DESC LIMIT ${limit}`
}

const minTier = (r: ServiceRecord) => (r.tiers.length === 0 ? null : Math.min(...r.tiers.map((t) => t.priceCents)))
const maxTier = (r: ServiceRecord) => (r.tiers.length === 0 ? null : Math.max(...r.tiers.map((t) => t.priceCents)))

/**
 * A page of listed services in id order, filtered: walks the primary key, or (category, id) /
 * (seller, id) for the listed ones, or the trigram index for a rare `q`, as the planner prefers
 * (migration 0018; test/suites/pages.test.ts EXPLAINs it at 100k services).
 */
export const servicesPage = (sql: SqlClient.SqlClient, f: ServiceFilter) => {
  const clauses = [sql`status = 'active'`]
  if (f.afterId !== undefined) clauses.push(sql`id > ${f.afterId}`)
  if (f.category !== undefined) clauses.push(sql`category = ${f.category}`)
  if (f.pricingModel !== undefined) clauses.push(sql`pricing_model = ${f.pricingModel}`)
  if (f.sellerId !== undefined) clauses.push(sql`seller_agent_id = ${f.sellerId}`)
  // Some tier ≥ min ⟺ the dearest is; some tier ≤ max ⟺ the cheapest is (columns kept by every write).
  if (f.minPriceCents !== undefined) clauses.push(sql`max_tier_cents >= ${f.minPriceCents}`)
  if (f.maxPriceCents !== undefined) clauses.push(sql`min_tier_cents <= ${f.maxPriceCents}`)
  if (f.minRating !== undefined) clauses.push(sql`rating_count > 0 AND rating_sum::float8 / rating_count >= ${f.minRating}`)
  if (f.q !== undefined) clauses.push(sql`search LIKE ${likePattern(f.q)}`)
  return sql<ServiceRow>`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE ${sql.and(clauses)} ORDER BY id LIMIT ${f.limit}`
}

/** The kept ranking's key (rankOf in SQL, the same float8 division): the expression of migration 0020's indexes. */
const RANK = "((rating_sum + 6)::float8 / (rating_count + 2))"

/**
 * The recommendations' candidates: listed services in the kept ranking's order, walking
 * (category,) rank DESC, id (migration 0020) with the policy as filters, or an allowed seller's
 * (seller, id) rows sorted, as the planner prefers (test/suites/ranking.test.ts EXPLAINs it).
 */
export const rankedPage = (sql: SqlClient.SqlClient, f: RankedFilter) => {
  const clauses = [sql`status = 'active'`]
  if (f.category !== undefined) clauses.push(sql`category = ${f.category}`)
  if (f.excludeSeller !== undefined) clauses.push(sql`seller_agent_id <> ${f.excludeSeller}`)
  if (f.sellers !== null) clauses.push(sql`seller_agent_id IN ${sql.in([...f.sellers])}`)
  if (f.categories !== null) clauses.push(sql`category IN ${sql.in([...f.categories])}`)
  if (f.maxTierCents !== null) clauses.push(sql`min_tier_cents <= ${f.maxTierCents}`)
  return sql<ServiceRow>`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE ${sql.and(clauses)}
    ORDER BY ${sql.literal(RANK)} DESC, id LIMIT ${f.limit}`
}

export const PgCatalogStore = Layer.effect(
  CatalogStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const insert = (r: ServiceRecord, onConflict: "error" | "refresh") =>
      sql`INSERT INTO commerce_services (id, seller_agent_id, name, description, category, pricing_model, tags, tiers, negotiation, status, rating_sum, rating_count, search,
            min_tier_cents, max_tier_cents, created_at, updated_at)
          VALUES (${r.id}, ${r.sellerAgentId}, ${r.name}, ${r.description}, ${r.category}, ${r.pricingModel}, ${json(r.tags)}::jsonb, ${json(r.tiers)}::jsonb,
                  ${json(r.negotiation)}::jsonb, ${r.status}, ${r.ratingSum}, ${r.ratingCount}, ${searchText(r)}, ${minTier(r)}, ${maxTier(r)}, ${r.createdAt}, ${r.updatedAt})
          ${onConflict === "refresh"
            ? sql`ON CONFLICT (id) DO UPDATE SET seller_agent_id = EXCLUDED.seller_agent_id, name = EXCLUDED.name, description = EXCLUDED.description,
                  category = EXCLUDED.category, pricing_model = EXCLUDED.pricing_model, tags = EXCLUDED.tags, tiers = EXCLUDED.tiers,
                  negotiation = EXCLUDED.negotiation, status = EXCLUDED.status, search = EXCLUDED.search,
                  min_tier_cents = EXCLUDED.min_tier_cents, max_tier_cents = EXCLUDED.max_tier_cents, updated_at = EXCLUDED.updated_at`
            : sql``}`
    return {
      upsertSeed: (rows) => orUnavailable(Effect.forEach(rows, (r) => insert(r, "refresh"), { discard: true })),
      insert: (r) => orUnavailable(insert(r, "error")).pipe(Effect.asVoid),
      update: (r) =>
        orUnavailable(
          sql`UPDATE commerce_services SET name = ${r.name}, description = ${r.description}, category = ${r.category}, pricing_model = ${r.pricingModel},
              tags = ${json(r.tags)}::jsonb, tiers = ${json(r.tiers)}::jsonb, negotiation = ${json(r.negotiation)}::jsonb, status = ${r.status},
              search = ${searchText(r)}, min_tier_cents = ${minTier(r)}, max_tier_cents = ${maxTier(r)}, updated_at = ${r.updatedAt} WHERE id = ${r.id}`
        ).pipe(Effect.asVoid),
      get: (id) =>
        orUnavailable(sql<ServiceRow>`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE id = ${id}`).pipe(Effect.map((rows) => (rows[0] ? toService(rows[0]) : undefined))),
      // Unprepared, so each page is planned for its own values: a prepared statement switches to a
      // generic plan after five runs, which cannot know that `q` or a price band is rare and walks
      // the id order through the whole catalogue (80 ms at 100k services for a rare q, bench/history.ts).
      list: (f) => orUnavailable(servicesPage(sql, f).unprepared).pipe(Effect.map((rows) => rows.map(toService))),
      // Unprepared for the same reason as list: an allowed-sellers list is best served by its sellers' rows.
      ranked: (f) =>
        (f.sellers !== null && f.sellers.length === 0) || (f.categories !== null && f.categories.length === 0)
          ? Effect.succeed([])
          : orUnavailable(rankedPage(sql, f).unprepared).pipe(Effect.map((rows) => rows.map(toService))),
      addRating: (id, rating) =>
        orUnavailable(sql`UPDATE commerce_services SET rating_sum = rating_sum + ${rating}, rating_count = rating_count + 1 WHERE id = ${id}`).pipe(Effect.asVoid),
      deliveryStats: (serviceId, since) =>
        orUnavailable(
          sql<{ tierId: string; deliveries: number; successes: number; p95LatencyMs: number | null }>`
            SELECT tier_id, count(*)::int AS deliveries, (count(*) FILTER (WHERE success))::int AS successes,
                   percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95_latency_ms
            FROM commerce_deliveries WHERE service_id = ${serviceId} AND delivered_at >= ${since} GROUP BY tier_id`
        )
    }
  })
)

/**
 * CTEs `w` (the wallet row) and `b` (its ledger balance: the locked base row plus the account's
 * credit shards, as the ledger store's lockBalances reads it), both FOR UPDATE, in the order every
 * purchase takes them. Credit shards of a wallet only grow, so a sum read from this snapshot errs
 * on the safe side. `w` is empty for an agent without a wallet row, `b` without a balance row:
 * makePurchaseRows makes them, then the lock is taken again.
 */
export const purchaseLockCtes = (sql: SqlClient.SqlClient, agentId: string) => {
  const account = walletAccount(agentId)
  return sql`w AS (SELECT agent_id, policy, created_at, updated_at FROM commerce_wallets WHERE agent_id = ${agentId} FOR UPDATE),
    b AS (SELECT (l.balance + COALESCE((SELECT SUM(c.amount) FROM ledger_balance_credits c WHERE c.account = ${account}), 0))::bigint AS balance
      FROM ledger_balances l WHERE l.account = ${account} FOR UPDATE OF l)`
}

/** A first purchase: the wallet row (as `initial`) and its balance row (0), where missing. */
export const makePurchaseRows = (sql: SqlClient.SqlClient, w: WalletRecord) =>
  Effect.andThen(
    sql`INSERT INTO commerce_wallets (agent_id, policy, created_at, updated_at)
        VALUES (${w.agentId}, ${json(w.policy)}::jsonb, ${w.createdAt}, ${w.updatedAt}) ON CONFLICT (agent_id) DO NOTHING`,
    sql`INSERT INTO ledger_balances (account, balance) VALUES (${walletAccount(w.agentId)}, 0) ON CONFLICT (account) DO NOTHING`
  )

/**
 * The escrow the buyer's running sagas hold (escrow done, settle not yet): read through the partial
 * index of running sagas (migration 0021), not the buyer's saga history.
 */
export const heldStatement = (sql: SqlClient.SqlClient, agentId: string) =>
  sql<{ total: number }>`SELECT COALESCE(SUM(price_cents), 0)::bigint AS total FROM sagas
    WHERE buyer_agent_id = ${agentId} AND status = 'running' AND price_cents IS NOT NULL
      AND steps @> '[{"name":"escrow","status":"succeeded"}]'::jsonb
      AND NOT steps @> '[{"name":"settle","status":"succeeded"}]'::jsonb`

export const PgWalletStore = Layer.effect(
  WalletStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    type Row = { agentId: string; policy: WalletRecord["policy"]; createdAt: Date; updatedAt: Date }
    const toWallet = (r: Row): WalletRecord => ({ agentId: r.agentId, policy: r.policy, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) })
    return {
      lock: Effect.fnUntraced(function* (w) {
          const select = sql<Row>`SELECT agent_id, policy, created_at, updated_at FROM commerce_wallets WHERE agent_id = ${w.agentId} FOR UPDATE`
          // One statement when the wallet exists (the common case); created on first use.
          const found = yield* select
          if (found[0]) return toWallet(found[0])
          yield* sql`INSERT INTO commerce_wallets (agent_id, policy, created_at, updated_at)
                     VALUES (${w.agentId}, ${json(w.policy)}::jsonb, ${w.createdAt}, ${w.updatedAt}) ON CONFLICT (agent_id) DO NOTHING`
          return toWallet((yield* select)[0])
        }, orUnavailable),
      lockForPurchase: Effect.fnUntraced(function* (w) {
          // One statement for what took two (the wallet lock, then Ledger.prepare's balance lock).
          const select = sql<Row & { balance: number | null }>`
            WITH ${purchaseLockCtes(sql, w.agentId)}
            SELECT w.agent_id, w.policy, w.created_at, w.updated_at, b.balance FROM w LEFT JOIN b ON TRUE`
          const found = yield* select
          if (found[0] && found[0].balance !== null) return { wallet: toWallet(found[0]), balanceCents: found[0].balance }
          yield* makePurchaseRows(sql, w)
          const [row] = yield* select
          return { wallet: toWallet(row!), balanceCents: row!.balance ?? 0 }
        }, orUnavailable),
      get: (agentId) =>
        orUnavailable(sql<Row>`SELECT agent_id, policy, created_at, updated_at FROM commerce_wallets WHERE agent_id = ${agentId}`).pipe(Effect.map((r) => (r[0] ? toWallet(r[0]) : undefined))),
      put: (w) =>
        orUnavailable(
          sql`INSERT INTO commerce_wallets (agent_id, policy, created_at, updated_at) VALUES (${w.agentId}, ${json(w.policy)}::jsonb, ${w.createdAt}, ${w.updatedAt})
              ON CONFLICT (agent_id) DO UPDATE SET policy = EXCLUDED.policy, updated_at = EXCLUDED.updated_at`
        ).pipe(Effect.asVoid),
      // Only the buyer's running sagas (partial index sagas_running_buyer_idx), not its history.
      heldCents: (agentId) => orUnavailable(heldStatement(sql, agentId)).pipe(Effect.map((r) => r[0]?.total ?? 0)),
      addSpend: (agentId, at, cents) =>
        cents === 0
          ? Effect.void
          : orUnavailable(
              sql`INSERT INTO agent_spend_days (agent_id, day, spent_cents) VALUES (${agentId}, (${at}::timestamptz AT TIME ZONE 'UTC')::date, ${cents})
                  ON CONFLICT (agent_id, day) DO UPDATE SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents`
            ).pipe(Effect.asVoid),
      // From the running totals: at most a month of day rows, whatever the agent's history.
      spentSince: (agentId, since) =>
        Effect.flatMap(dayBoundary(since), (day) =>
          orUnavailable(
            sql<{ total: number }>`SELECT COALESCE(SUM(spent_cents), 0)::bigint AS total FROM agent_spend_days WHERE agent_id = ${agentId} AND day >= ${day}::date`
          ).pipe(Effect.map((r) => r[0]?.total ?? 0))
        ),
      spendDrift: orUnavailable(
        Effect.gen(function* () {
          const spend = yield* sql<{ agentId: string; day: string; kept: number; recomputed: number }>`
            SELECT COALESCE(k.agent_id, r.agent_id) AS agent_id, COALESCE(k.day, r.day)::text AS day,
              COALESCE(k.spent_cents, 0)::bigint AS kept, COALESCE(r.cents, 0)::bigint AS recomputed
            FROM agent_spend_days k
            FULL OUTER JOIN (
              SELECT agent_id, day, SUM(cents)::bigint AS cents FROM (
                SELECT buyer_agent_id AS agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, price_cents AS cents
                FROM commerce_transactions WHERE status = 'completed'
                UNION ALL
                SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date, amount_cents FROM investments
                UNION ALL
                SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date, cost_cents FROM projects WHERE status <> 'failed' AND cost_cents > 0
              ) d GROUP BY 1, 2
            ) r ON r.agent_id = k.agent_id AND r.day = k.day
            WHERE COALESCE(k.spent_cents, 0) <> COALESCE(r.cents, 0)
            ORDER BY 1, 2`
          const usage = yield* sql<{ agentId: string; day: string; serviceId: string; kept: number; recomputed: number; keptCalls: number; recomputedCalls: number }>`
            SELECT COALESCE(k.agent_id, r.agent_id) AS agent_id, COALESCE(k.day, r.day)::text AS day, COALESCE(k.service_id, r.service_id) AS service_id,
              COALESCE(k.spent_cents, 0)::bigint AS kept, COALESCE(r.cents, 0)::bigint AS recomputed,
              COALESCE(k.calls, 0)::int AS kept_calls, COALESCE(r.calls, 0)::int AS recomputed_calls
            FROM agent_usage_days k
            FULL OUTER JOIN (
              SELECT buyer_agent_id AS agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, service_id, count(*)::int AS calls, SUM(price_cents)::bigint AS cents
              FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, 2, 3
            ) r ON r.agent_id = k.agent_id AND r.day = k.day AND r.service_id = k.service_id
            WHERE COALESCE(k.spent_cents, 0) <> COALESCE(r.cents, 0) OR COALESCE(k.calls, 0) <> COALESCE(r.calls, 0)
            ORDER BY 1, 2, 3`
          return [
            ...spend.map((r) => ({ ...r, serviceId: null, keptCalls: null, recomputedCalls: null })),
            ...usage
          ]
        })
      ),
      countPendingApprovals: (agentId, now) =>
        orUnavailable(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM commerce_approvals WHERE agent_id = ${agentId} AND status = 'pending' AND expires_at > ${now}`
        ).pipe(Effect.map((r) => r[0]?.n ?? 0)),
      insertRecharge: (r) =>
        orUnavailable(
          sql`INSERT INTO commerce_recharges (id, agent_id, amount_cents, reason, status, ledger_entry_id, created_at)
              VALUES (${r.id}, ${r.agentId}, ${r.amountCents}, ${r.reason}, ${r.status}, ${r.ledgerEntryId}, ${r.createdAt})`
        ).pipe(Effect.asVoid),
      listRequestedRecharges: (limit) =>
        orUnavailable(
          sql<Dated<RechargeRequest, "createdAt">>`SELECT id, agent_id, amount_cents, reason, status, ledger_entry_id, created_at FROM commerce_recharges
                                                    WHERE status = 'requested' ORDER BY created_at LIMIT ${limit}`
        ).pipe(Effect.map((rows) => rows.map((r) => ({ ...r, createdAt: iso(r.createdAt) }))))
    }
  })
)

export const PgCommerceStore = Layer.effect(
  CommerceStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const selectTx = sql.literal(TX_SELECT)
    const one = (rows: ReadonlyArray<TxJoinRow>) => (rows[0] ? toTxRow(rows[0]) : undefined)
    const APPROVAL_COLUMNS = sql.literal(APPROVAL_COLUMN_LIST)
    return {
      // One statement: the transaction and its delivery (a data-modifying CTE).
      // The transaction, its delivery and (when completed) the buyer's spend of the day: one statement.
      insertTransaction: (tx, d) => orUnavailable(sql`WITH ${transactionCtes(sql, tx, d)} SELECT 1`).pipe(Effect.asVoid),
      getTransaction: (id) => orUnavailable(sql<TxJoinRow>`${selectTx} WHERE t.id = ${id}`).pipe(Effect.map(one)),
      lockTransaction: (id) =>
        orUnavailable(
          sql<Dated<TransactionRecord, "createdAt" | "refundedAt">>`SELECT ${sql.literal(TX_COLUMNS)} FROM commerce_transactions t WHERE t.id = ${id} FOR UPDATE`
        ).pipe(Effect.map((rows) => (rows[0] ? toTxRecord(rows[0]) : undefined))),
      // A status change moves the buyer's spend of the purchase's day with it (a refund gives it
      // back), and its agents' counters: the row's status and review are read (and locked) first,
      // so the counter deltas are computed once, by the same rules as the memory store's.
      updateTransaction: Effect.fnUntraced(function* (tx) {
          const [before] = yield* sql<{ status: TransactionRecord["status"]; rating: number | null }>`
            SELECT t.status, r.rating FROM commerce_transactions t LEFT JOIN commerce_reviews r ON r.transaction_id = t.id
            WHERE t.id = ${tx.id} FOR UPDATE OF t`
          if (before === undefined) return
          const shard = counterShard(tx.id)
          const counters = transactionDeltas(tx, before, { status: tx.status, rating: before.rating })
          const services = serviceDeltas(tx, before.status, tx.status)
          const categories = categoryDelta(before.status, tx.status)
          const extra = [
            ...(counters.length > 0 ? [countersCte(sql, "counters", counters, shard, sql`u`)] : []),
            ...(services.length > 0 ? [serviceCountsCte(sql, "svc_counts", services, shard, sql`u`)] : []),
            ...(categories !== 0 ? [categoryCountsCte(sql, "cat_counts", tx.buyerAgentId, tx.category, categories, sql`u`)] : [])
          ]
          yield* sql`WITH before AS (SELECT status, price_cents, buyer_agent_id, created_at, service_id, service_name FROM commerce_transactions WHERE id = ${tx.id}),
            u AS (UPDATE commerce_transactions SET status = ${tx.status}, refunded_at = ${tx.refundedAt} WHERE id = ${tx.id} RETURNING id),
            delta AS (
              SELECT buyer_agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, service_id, service_name,
                (CASE WHEN ${tx.status} = 'completed' THEN 1 ELSE 0 END) - (CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS sign,
                price_cents
              FROM before),
            spend AS (
              INSERT INTO agent_spend_days (agent_id, day, spent_cents)
              SELECT buyer_agent_id, day, sign * price_cents FROM delta WHERE sign <> 0
              ON CONFLICT (agent_id, day) DO UPDATE SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents)${
            extra.length > 0 ? sql`, ${sql.csv(extra)}` : sql``
          }
            INSERT INTO agent_usage_days (agent_id, day, service_id, service_name, calls, spent_cents)
            SELECT buyer_agent_id, day, service_id, service_name, sign, sign * price_cents FROM delta WHERE sign <> 0
            ON CONFLICT (agent_id, day, service_id) DO UPDATE SET calls = agent_usage_days.calls + excluded.calls,
              spent_cents = agent_usage_days.spent_cents + excluded.spent_cents`
        }, orUnavailable),
      findByIdempotencyKey: (buyer, key) =>
        orUnavailable(sql<TxJoinRow>`${selectTx} WHERE t.buyer_agent_id = ${buyer} AND t.idempotency_key = ${key}`).pipe(Effect.map(one)),
      listTransactions: (f) => orUnavailable(transactionsPage(sql, f)).pipe(Effect.map((rows) => rows.map(toTxRow))),
      insertReview: (r) =>
        orUnavailable(
          sql<{ id: string }>`WITH rv AS (
                INSERT INTO commerce_reviews (id, transaction_id, service_id, reviewer_agent_id, seller_agent_id, rating, text, created_at)
                VALUES (${r.id}, ${r.transactionId}, ${r.serviceId}, ${r.reviewerAgentId}, ${r.sellerAgentId}, ${r.rating}, ${r.text}, ${r.createdAt})
                ON CONFLICT (transaction_id) DO NOTHING RETURNING id),
              counters AS (
                INSERT INTO agent_counters (agent_id, shard, reviews_received, rating_sum)
                SELECT t.seller_agent_id, ${counterShard(r.transactionId)}::smallint, 1, ${r.rating}::bigint
                FROM rv JOIN commerce_transactions t ON t.id = ${r.transactionId} WHERE t.status <> 'failed'
                ON CONFLICT (agent_id, shard) DO UPDATE SET reviews_received = agent_counters.reviews_received + 1,
                  rating_sum = agent_counters.rating_sum + excluded.rating_sum)
              SELECT id FROM rv`
        ).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(new Conflict({ message: `transaction ${r.transactionId} was already reviewed`, state: "reviewed" })) : Effect.void
          )
        ),
      insertApproval: (a) =>
        orUnavailable(
          sql`INSERT INTO commerce_approvals (id, account_id, agent_id, service_id, tier_id, quoted_price_cents, negotiation_id, input, reason, status,
                idempotency_key, reserved_transaction_id, transaction_id, decided_by, created_at, decided_at, expires_at)
              VALUES (${a.id}, ${a.accountId}, ${a.agentId}, ${a.serviceId}, ${a.tierId}, ${a.quotedPriceCents}, ${a.negotiationId}, ${json(a.input)}::jsonb,
                ${a.reason}, ${a.status}, ${a.idempotencyKey}, ${a.reservedTransactionId}, ${a.transactionId}, ${a.decidedBy}, ${a.createdAt}, ${a.decidedAt}, ${a.expiresAt})`
        ).pipe(Effect.asVoid),
      lockApproval: (id) =>
        orUnavailable(sql<ApprovalRow>`SELECT ${APPROVAL_COLUMNS} FROM commerce_approvals WHERE id = ${id} FOR UPDATE`).pipe(Effect.map((r) => (r[0] ? toApproval(r[0]) : undefined))),
      updateApproval: (a) =>
        orUnavailable(
          sql`UPDATE commerce_approvals SET status = ${a.status}, transaction_id = ${a.transactionId}, decided_by = ${a.decidedBy}, decided_at = ${a.decidedAt} WHERE id = ${a.id}`
        ).pipe(Effect.asVoid),
      findApprovalByKey: (agentId, key) =>
        orUnavailable(sql<ApprovalRow>`SELECT ${APPROVAL_COLUMNS} FROM commerce_approvals WHERE agent_id = ${agentId} AND idempotency_key = ${key}`).pipe(
          Effect.map((r) => (r[0] ? toApproval(r[0]) : undefined))
        ),
      listApprovals: (accountId, status, limit, before) => orUnavailable(approvalsPage(sql, accountId, status, limit, before)).pipe(Effect.map((rows) => rows.map(toApproval)))
    }
  })
)

export const PgDisputeStore = Layer.effect(
  DisputeStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const COLUMNS = sql.literal(DISPUTE_COLUMNS)
    const first = (rows: ReadonlyArray<DisputeRow>) => (rows[0] ? toDispute(rows[0]) : undefined)
    return {
      insert: (d) => {
        // Filed open in practice; one filed already resolved counts as lost at once.
        const lost = disputeDeltas(d, null, d.status)
        return orUnavailable(
          sql<{ id: string }>`WITH ins AS (
                INSERT INTO commerce_disputes (id, transaction_id, buyer_agent_id, seller_agent_id, reason, status, seller_response, seller_note, resolution,
                  refund_cents, refund_entry_id, respond_by, review_due_at, created_at, updated_at, resolved_at)
                VALUES (${d.id}, ${d.transactionId}, ${d.buyerAgentId}, ${d.sellerAgentId}, ${d.reason}, ${d.status}, ${d.sellerResponse}, ${d.sellerNote}, ${d.resolution},
                  ${d.refundCents}, ${d.refundEntryId}, ${d.respondBy}, ${d.reviewDueAt}, ${d.createdAt}, ${d.updatedAt}, ${d.resolvedAt})
                ON CONFLICT (transaction_id) DO NOTHING RETURNING id)${
              lost.length > 0 ? sql`, ${countersCte(sql, "counters", lost, counterShard(d.transactionId), sql`ins`)}` : sql``
            }
              SELECT id FROM ins`
        ).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(new Conflict({ message: `transaction ${d.transactionId} already has a dispute`, state: "disputed" })) : Effect.void
          )
        )
      },
      get: (id) => orUnavailable(sql<DisputeRow>`SELECT ${COLUMNS} FROM commerce_disputes WHERE id = ${id}`).pipe(Effect.map(first)),
      lock: (id) => orUnavailable(sql<DisputeRow>`SELECT ${COLUMNS} FROM commerce_disputes WHERE id = ${id} FOR UPDATE`).pipe(Effect.map(first)),
      // A resolution moves the loser's disputes-lost counter (seller on a refund, buyer on a
      // rejection): the row is read and locked first, the delta written with the update.
      update: Effect.fnUntraced(function* (d) {
          const [before] = yield* sql<{ status: DisputeRecord["status"] }>`SELECT status FROM commerce_disputes WHERE id = ${d.id} FOR UPDATE`
          const lost = before === undefined ? [] : disputeDeltas(d, before.status, d.status)
          yield* sql`WITH u AS (
              UPDATE commerce_disputes SET status = ${d.status}, seller_response = ${d.sellerResponse}, seller_note = ${d.sellerNote}, resolution = ${d.resolution},
              refund_cents = ${d.refundCents}, refund_entry_id = ${d.refundEntryId}, review_due_at = ${d.reviewDueAt}, updated_at = ${d.updatedAt},
              resolved_at = ${d.resolvedAt} WHERE id = ${d.id} RETURNING id)${
            lost.length > 0 ? sql`, ${countersCte(sql, "counters", lost, counterShard(d.transactionId), sql`u`)}` : sql``
          }
            SELECT 1`
        }, orUnavailable, Effect.asVoid),
      listDue: (now, limit) =>
        orUnavailable(
          sql<{ id: string }>`SELECT id FROM commerce_disputes
            WHERE (status = 'open' AND respond_by <= ${now}) OR (status = 'under_review' AND review_due_at <= ${now})
            ORDER BY created_at LIMIT ${limit}`
        ).pipe(Effect.map((rows) => rows.map((r) => r.id))),
      listForAgent: (agentId, limit, before) => orUnavailable(disputesPage(sql, agentId, limit, before)).pipe(Effect.map((rows) => rows.map(toDispute)))
    }
  })
)

export const PgAnalyticsStore = Layer.effect(
  AnalyticsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      // Every per-agent figure below reads the agent's counter rows (≤ 16 shards, summed;
      // migration 0018), never its history.
      reputationInputs: Effect.fnUntraced(function* (agentIds) {
          if (agentIds !== "all" && agentIds.length === 0) return []
          const list =
            agentIds === "all"
              ? sql`(SELECT agent_id FROM agent_counters UNION SELECT seller_agent_id FROM commerce_services WHERE status = 'active')`
              : sql`(SELECT DISTINCT agent_id FROM (VALUES ${sql.csv(agentIds.map((id) => sql`(${id})`))}) v(agent_id))`
          return yield* sql<ReputationInputs>`
            SELECT a.agent_id, COALESCE(SUM(c.reviews_received), 0)::int AS reviews_received, COALESCE(SUM(c.rating_sum), 0)::int AS rating_sum,
              COALESCE(SUM(c.deals), 0)::int AS completed_deals, COALESCE(SUM(c.volume_cents), 0)::bigint AS volume_cents,
              COALESCE(SUM(c.disputes_lost), 0)::int AS disputes_lost
            FROM ${list} a LEFT JOIN agent_counters c ON c.agent_id = a.agent_id
            GROUP BY a.agent_id`
        }, orUnavailable),
      agentTotals: (agentId) =>
        orUnavailable(
          sql<{ purchases: number; spentCents: number; sales: number; earnedCents: number; feesGeneratedCents: number; refundsReceivedCents: number }>`
            SELECT COALESCE(SUM(purchases), 0)::int AS purchases, COALESCE(SUM(spent_cents), 0)::bigint AS spent_cents,
              COALESCE(SUM(sales), 0)::int AS sales, COALESCE(SUM(earned_cents), 0)::bigint AS earned_cents,
              COALESCE(SUM(fees_generated_cents), 0)::bigint AS fees_generated_cents, COALESCE(SUM(refunds_received_cents), 0)::bigint AS refunds_received_cents
            FROM agent_counters WHERE agent_id = ${agentId}`
        ).pipe(Effect.map((r) => r[0])),
      // Per agent: its services' rows (≤ 16 shards each on the seller side); platform-wide: every
      // seller's rows, i.e. O(services), not O(transactions) (and cached by Reputation).
      topServices: (by, limit) =>
        orUnavailable(
          sql<ServiceCountRow>`
            SELECT service_id, max(service_name) AS service_name, SUM(count)::int AS count, SUM(volume_cents)::bigint AS volume_cents
            FROM agent_service_counts
            WHERE ${by.buyer !== undefined ? sql`agent_id = ${by.buyer} AND role = 'buyer'` : by.seller !== undefined ? sql`agent_id = ${by.seller} AND role = 'seller'` : sql`role = 'seller'`}
            GROUP BY service_id HAVING SUM(count) > 0 ORDER BY SUM(count) DESC, SUM(volume_cents) DESC, service_id LIMIT ${limit}`
        ),
      // From every agent's counters: O(agents), not O(transactions).
      platformTotals: orUnavailable(
        Effect.gen(function* () {
          const [t] = yield* sql<{ transactions: number; volumeCents: number; feesCents: number; buyers: number; sellers: number }>`
            WITH per AS (SELECT agent_id, SUM(purchases) AS purchases, SUM(sales) AS sales, SUM(spent_cents) AS spent, SUM(fees_generated_cents) AS fees
                         FROM agent_counters GROUP BY agent_id)
            SELECT COALESCE(SUM(sales), 0)::int AS transactions, COALESCE(SUM(spent), 0)::bigint AS volume_cents, COALESCE(SUM(fees), 0)::bigint AS fees_cents,
                   (count(*) FILTER (WHERE purchases > 0))::int AS buyers, (count(*) FILTER (WHERE sales > 0))::int AS sellers
            FROM per`
          const [s] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM commerce_services WHERE status = 'active'`
          return { ...t, activeServices: s.n }
        })
      ),
      usage: Effect.fnUntraced(function* (agentId, from, to) {
          // From the running totals (at most days × services rows): `from` is a UTC day start, `to` now.
          const fromDay = yield* dayBoundary(from)
          const toDay = utcDay(new Date(Date.parse(to) - 1).toISOString())
          const byService = yield* sql<UsageRow>`
            SELECT service_id AS key, max(service_name) AS label, SUM(calls)::int AS calls, SUM(spent_cents)::bigint AS spent_cents
            FROM agent_usage_days WHERE agent_id = ${agentId} AND day >= ${fromDay}::date AND day <= ${toDay}::date
            GROUP BY service_id HAVING SUM(calls) > 0 ORDER BY service_id`
          const byDay = yield* sql<UsageRow>`
            SELECT to_char(day, 'YYYY-MM-DD') AS key, to_char(day, 'YYYY-MM-DD') AS label, SUM(calls)::int AS calls, SUM(spent_cents)::bigint AS spent_cents
            FROM agent_usage_days WHERE agent_id = ${agentId} AND day >= ${fromDay}::date AND day <= ${toDay}::date
            GROUP BY day HAVING SUM(calls) > 0 ORDER BY day`
          return { byService, byDay }
        }, orUnavailable),
      categoryHistory: (agentId) =>
        orUnavailable(
          sql<{ category: string; count: number }>`SELECT category, purchases AS count FROM agent_category_counts WHERE agent_id = ${agentId} AND purchases > 0`
        ),
      counterDrift: orUnavailable(sql.unsafe<{ agentId: string; counter: string; kept: number; recomputed: number }>(COUNTER_DRIFT_SQL))
    }
  })
)

export const PgCommerceStoresLive = Layer.mergeAll(PgCatalogStore, PgWalletStore, PgCommerceStore, PgDisputeStore, PgAnalyticsStore)
