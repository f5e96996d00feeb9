// The memory engine's commerce tables: the catalogue and its indexes, wallets, transactions with
// deliveries and reviews, approvals, disputes, the running totals and counters, and the rows of
// other stores a wallet's figures read (sagas, investments, projects). The memory counterpart of
// the SQL tables: the commerce, wallet and reputation memory adapters each read the tables they
// need from here, as their Postgres twins query the same tables, so every adapter sees one state
// (the tables live on MemoryDb, looked up by name).
import { Effect } from "effect"
import type { ApprovalRecord } from "../../../schema/commerce/approvals.js"
import type { DeliveryRecord, TransactionRecord } from "../../../schema/commerce/transactions.js"
import type { DisputeRecord } from "../../../schema/commerce/disputes.js"
import type { ReviewRecord } from "../../../schema/commerce/reviews.js"
import type { ServiceRecord } from "../../../schema/commerce/services.js"
import type { WalletRecord } from "../../../schema/commerce/wallets.js"
import type { InvestmentRecord } from "../../../schema/invest/invest.js"
import type { ProjectRecord } from "../../../schema/projects/builder.js"
import type { SagaRecord } from "../../../schema/saga/saga.js"
import { utcDay } from "../../../schema/wallet/policy.js"
import type { RechargeRequest } from "../../../services/wallet/WalletStore.js"
import { MemoryDb } from "./MemoryDb.js"
import type { AgentCounters } from "../../../schema/reputation/counters.js"

/** A listed service's cheapest and dearest tier (the price index's entry). */
export interface PriceEntry {
  readonly min: number
  readonly max: number
  readonly id: string
}

/** A listed service's place in the kept ranking (RankedFilter). */
export interface RankEntry {
  readonly rank: number
  readonly id: string
}

/** Per (agent, side) and service: completed count, price and the greatest name seen. */
export interface ServiceCount {
  readonly count: number
  readonly volumeCents: number
  readonly label: string
}

/** Per (agent, day) and service: calls, cents and the greatest name seen. */
export interface UsageCell {
  readonly calls: number
  readonly spentCents: number
  readonly label: string
}

export const commerceTables = Effect.map(MemoryDb, (db) => ({
  services: db.table<string, ServiceRecord>("commerce_services"),
  // Service ids in id order: `all`, `category|<name>`, `seller|<agent>` (the catalogue's indexes:
  // a page binary-searches its cursor and walks forward, as the SQL store walks (…, id)).
  serviceOrder: db.table<string, Array<string>>("commerce_services_order"),
  // id → its lower-cased search text (what `q` matches), kept with the row instead of built per request.
  serviceSearch: db.table<string, string>("commerce_services_search"),
  // Trigram → the listed services whose search text holds it, in id order (no cap): a `q` walks its
  // rarest trigram's ids instead of the catalogue (Postgres: the pg_trgm index finds the matches, but
  // cannot give their id order: docs/performance.md, "Common-word search").
  serviceTrigrams: db.table<string, Array<string>>("commerce_services_trigrams"),
  // Span bucket (max − min tier price, by powers of two) → listed services' price entries sorted by
  // (min, id): a price band reads the entries that can overlap it (Postgres: the tier-price indexes).
  servicePrices: db.table<number, Array<PriceEntry>>("commerce_services_prices"),
  // `all` / `category|<name>` → listed services' rank entries in the kept ranking's order (rankOf
  // descending, then id): the recommendations' candidates (Postgres: the rank indexes, migration 0020).
  serviceRanking: db.table<string, Array<RankEntry>>("commerce_services_ranking"),
  wallets: db.table<string, WalletRecord>("commerce_wallets"),
  // The ledger store's balances (the same table): a purchase reads its wallet's with the wallet.
  ledgerBalances: db.table<string, number>("ledger_balances"),
  recharges: db.table<string, RechargeRequest>("commerce_recharges"),
  txs: db.table<string, TransactionRecord>("commerce_transactions"),
  txOrder: db.table<string, Array<string>>("commerce_transaction_order"),
  // `buyer|<agent>` / `seller|<agent>`, and `…|<status>` for the rarer statuses (failed, refunded):
  // ids oldest first by (createdAt, id), as the SQL store's per-side indexes and partial status
  // indexes (migrations 0005, 0019). A page walks one list per side from its bounds.
  txBySide: db.table<string, Array<string>>("commerce_transactions_by_side"),
  txByKey: db.table<string, string>("commerce_transactions_by_key"),
  deliveries: db.table<string, DeliveryRecord>("commerce_deliveries"),
  deliveriesByService: db.table<string, Array<string>>("commerce_deliveries_by_service"),
  reviews: db.table<string, ReviewRecord>("commerce_reviews"),
  approvals: db.table<string, ApprovalRecord>("commerce_approvals"),
  approvalsByKey: db.table<string, string>("commerce_approvals_by_key"),
  // account → approval ids oldest first by (createdAt, id): the page walks it from the end.
  approvalsByAccount: db.table<string, Array<string>>("commerce_approvals_by_account"),
  // `account|status` → approval ids oldest first by (createdAt, id): one status's page (Postgres:
  // (account_id, status, created_at, id)).
  approvalsByAccountStatus: db.table<string, Array<string>>("commerce_approvals_by_account_status"),
  // agent → its approval ids oldest first by (createdAt, id): the agent's own page (A2A ListTasks).
  approvalsByAgent: db.table<string, Array<string>>("commerce_approvals_by_agent"),
  // agent → ids of its pending approvals (the wallet view counts them).
  pendingApprovals: db.table<string, ReadonlyArray<string>>("commerce_approvals_pending"),
  disputes: db.table<string, DisputeRecord>("commerce_disputes"),
  disputeByTx: db.table<string, string>("commerce_dispute_by_transaction"),
  // agent (buyer or seller) → dispute ids oldest first by (createdAt, id).
  disputesByAgent: db.table<string, Array<string>>("commerce_disputes_by_agent"),
  // Running totals: `agent|YYYY-MM-DD` → cents spent that UTC day (journaled like every table).
  spendDays: db.table<string, number>("agent_spend_days"),
  // The saga store's rows and its index of running sagas per buyer: what a wallet holds in escrow.
  sagas: db.table<string, SagaRecord>("sagas"),
  sagasRunningByBuyer: db.table<string, ReadonlyArray<string>>("sagas_running_by_buyer"),
  // The invest and builder stores' rows: wallet debits that count as spend (the books check recomputes them).
  investments: db.table<string, InvestmentRecord>("investments"),
  projects: db.table<string, ProjectRecord>("projects"),
  // `agent|YYYY-MM-DD` → per service: calls, cents and the service's name (replaced, never mutated).
  usageDays: db.table<string, Readonly<Record<string, UsageCell>>>("agent_usage_days"),
  // Per-agent counters (migration 0018's, one record per agent: the memory engine serialises
  // writers, so there is no hot row to spread): agent → AgentCounters.
  counters: db.table<string, AgentCounters>("agent_counters"),
  // `agent|buyer` / `agent|seller` → per service: completed count, price and name.
  serviceCounts: db.table<string, Readonly<Record<string, ServiceCount>>>("agent_service_counts"),
  // agent → completed purchases per category.
  categoryCounts: db.table<string, Readonly<Record<string, number>>>("agent_category_counts"),
  // `seller|YYYY-MM-DD` → the seller's share of its completed sales placed that UTC day (migration 0034's).
  earningDays: db.table<string, number>("seller_earning_days")
}))

export type Tables = Effect.Success<typeof commerceTables>

/** The UTC day after `day` ("YYYY-MM-DD"). */
export const nextDay = (day: string) =>
  new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10)

/** Adds `cents` to the buyer's spend of the UTC day the purchase was made. */
export const addSpend = (t: Tables, agentId: string, createdAt: string, cents: number) => {
  if (cents === 0) return Effect.void
  const k = `${agentId}|${utcDay(createdAt)}`
  return t.spendDays.set(k, (t.spendDays.get(k) ?? 0) + cents)
}

/** Every transaction, oldest first. */
export const allTxs = (t: Tables) => (t.txOrder.get("all") ?? []).map((id) => t.txs.get(id)!)

/** The insertSorted order of a row (createdAt, id) being added (`row`, not yet stored) among stored ones. */
export const olderBy =
  <R extends { readonly id: string; readonly createdAt: string }>(row: R, get: (id: string) => R | undefined) =>
  (a: string, b: string) => {
    const x = a === row.id ? row : get(a)!
    const y = b === row.id ? row : get(b)!
    return x.createdAt < y.createdAt || (x.createdAt === y.createdAt && x.id < y.id)
  }

/** How many ids of an oldest-first (createdAt, id) index sort before `key` (binary search). */
export const countBefore = <R extends { readonly id: string; readonly createdAt: string }>(
  ids: ReadonlyArray<string>,
  get: (id: string) => R,
  key: { readonly createdAt: string; readonly id: string }
) => {
  let lo = 0
  let hi = ids.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const r = get(ids[mid])
    if (r.createdAt < key.createdAt || (r.createdAt === key.createdAt && r.id < key.id)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Up to `limit` rows of an oldest-first (createdAt, id) index that `keep` accepts, newest first,
 * from before `before` (a keyset page).
 */
export const newestFirst = <R extends { readonly id: string; readonly createdAt: string }>(
  ids: ReadonlyArray<string> | undefined,
  get: (id: string) => R,
  keep: (r: R) => boolean,
  limit: number,
  before?: { readonly createdAt: string; readonly id: string }
): Array<R> => {
  const out: Array<R> = []
  if (ids === undefined) return out
  for (
    let i = (before === undefined ? ids.length : countBefore(ids, get, before)) - 1;
    i >= 0 && out.length < limit;
    i--
  ) {
    const r = get(ids[i])
    if (keep(r)) out.push(r)
  }
  return out
}
