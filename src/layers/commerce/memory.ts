// In-memory commerce stores: catalog, wallets, transactions with deliveries and reviews,
// approvals, disputes and the analytics aggregates (same answers as the Postgres stores).
import { Clock, Effect, Layer } from "effect"
import { searchText, type ServiceRecord } from "../../schema/commerce/services.js"
import { type ApprovalRecord } from "../../schema/commerce/approvals.js"
import { type DeliveryRecord, type TransactionRecord, type TransactionRow } from "../../schema/commerce/transactions.js"
import { type DisputeRecord } from "../../schema/commerce/disputes.js"
import { type ReputationInputs } from "../../schema/reputation/reputation.js"
import { type ReviewRecord } from "../../schema/commerce/reviews.js"
import { rankOf } from "../../schema/commerce/filters.js"
import { type UsageRow } from "../../schema/commerce/analytics.js"
import { type WalletRecord } from "../../schema/commerce/wallets.js"
import { Conflict } from "../../schema/platform/errors.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { CatalogStore, type TierDeliveryStats } from "../../services/commerce/Catalog.js"
import { CommerceStore } from "../../services/commerce/Commerce.js"
import { DisputeStore } from "../../services/commerce/Disputes.js"
import { AnalyticsStore, type ServiceCountRow } from "../../services/reputation/Reputation.js"
import { dayBoundary, utcDay } from "../../schema/wallet/policy.js"
import { type RechargeRequest, WalletStore } from "../../services/wallet/WalletStore.js"

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10)
import {
  addCounters,
  type AgentCounters,
  categoryDelta,
  COUNTER_NAMES,
  type CounterDelta,
  disputeDeltas,
  serviceDeltas,
  type ServiceCountDelta,
  transactionDeltas,
  zeroCounters
} from "./counters.js"
import { lowerBound, MemoryDb } from "../storage/memory/MemoryDb.js"
import { type SagaRecord, sagaHolds } from "../../schema/saga/saga.js"
import type { InvestmentRecord } from "../../schema/invest/invest.js"
import type { ProjectRecord } from "../../schema/projects/builder.js"

/** The ⌈0.95·n⌉-th smallest value (Postgres percentile_disc(0.95) gives the same). */
export const p95 = (values: ReadonlyArray<number>): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil(0.95 * sorted.length) - 1]
}

const tables = Effect.map(MemoryDb, (db) => ({
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
  // `account|status` → approval ids oldest first by (createdAt, id): one status's page (Postgres: (account_id, status, created_at, id)).
  approvalsByAccountStatus: db.table<string, Array<string>>("commerce_approvals_by_account_status"),
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
  categoryCounts: db.table<string, Readonly<Record<string, number>>>("agent_category_counts")
}))

interface ServiceCount {
  readonly count: number
  readonly volumeCents: number
  readonly label: string
}

const addCounterDeltas = (t: Tables, deltas: ReadonlyArray<CounterDelta>) =>
  Effect.forEach(deltas, (d) => t.counters.set(d.agentId, addCounters(t.counters.get(d.agentId) ?? zeroCounters, d.delta)), { discard: true })

const addServiceDeltas = (t: Tables, deltas: ReadonlyArray<ServiceCountDelta>) =>
  Effect.forEach(
    deltas,
    (d) => {
      const k = `${d.agentId}|${d.role}`
      const cells = t.serviceCounts.get(k) ?? {}
      const c = cells[d.serviceId] ?? { count: 0, volumeCents: 0, label: d.serviceName }
      const label = c.label > d.serviceName ? c.label : d.serviceName
      return t.serviceCounts.set(k, { ...cells, [d.serviceId]: { count: c.count + d.count, volumeCents: c.volumeCents + d.volumeCents, label } })
    },
    { discard: true }
  )

const addCategory = (t: Tables, buyer: string, category: string, delta: number) => {
  if (delta === 0) return Effect.void
  const cells = t.categoryCounts.get(buyer) ?? {}
  return t.categoryCounts.set(buyer, { ...cells, [category]: (cells[category] ?? 0) + delta })
}

/** Every counter's move for a transaction going from `before` (null: new) to its status. */
const moveCounters = (t: Tables, tx: TransactionRecord, before: TransactionRecord | undefined) => {
  const rating = t.reviews.get(tx.id)?.rating ?? null
  return Effect.all(
    [
      addCounterDeltas(t, transactionDeltas(tx, before === undefined ? null : { status: before.status, rating }, { status: tx.status, rating })),
      addServiceDeltas(t, serviceDeltas(tx, before?.status ?? null, tx.status)),
      addCategory(t, tx.buyerAgentId, tx.category, categoryDelta(before?.status ?? null, tx.status))
    ],
    { discard: true }
  )
}

interface UsageCell {
  readonly calls: number
  readonly spentCents: number
  readonly label: string
}

/** Adds `cents` to the buyer's spend of the UTC day the purchase was made. */
const addSpend = (t: Tables, agentId: string, createdAt: string, cents: number) => {
  if (cents === 0) return Effect.void
  const k = `${agentId}|${utcDay(createdAt)}`
  return t.spendDays.set(k, (t.spendDays.get(k) ?? 0) + cents)
}
/** The escrow held by these running sagas: escrow step succeeded, settle not yet. */
const heldBy = (sagas: { get(id: string): SagaRecord | undefined }, ids: ReadonlyArray<string>) => {
  let sum = 0
  for (const id of ids) {
    const r = sagas.get(id)
    if (r !== undefined && r.status === "running" && r.priceCents !== null && sagaHolds(r)) sum += r.priceCents
  }
  return sum
}

/** Wallet debits that are not purchases and count as spend: investments, and project charges of builds that did not fail. */
const otherSpend = (t: Tables) => [
  ...[...t.investments.values()].map((i) => ({ agentId: i.agentId, at: i.createdAt, cents: i.amountCents })),
  ...[...t.projects.values()].filter((p) => p.status !== "failed" && p.costCents > 0).map((p) => ({ agentId: p.agentId, at: p.createdAt, cents: p.costCents }))
]

const completedCents = (tx: TransactionRecord | undefined) => (tx !== undefined && tx.status === "completed" ? tx.priceCents : 0)

/** Adds `sign` calls (and sign × price) to the buyer's usage of the service on the purchase's day. */
const addUsage = (t: Tables, tx: TransactionRecord, sign: number) => {
  if (sign === 0) return Effect.void
  const k = `${tx.buyerAgentId}|${utcDay(tx.createdAt)}`
  const day = t.usageDays.get(k) ?? {}
  const cell = day[tx.serviceId] ?? { calls: 0, spentCents: 0, label: tx.serviceName }
  const label = cell.label > tx.serviceName ? cell.label : tx.serviceName
  return t.usageDays.set(k, { ...day, [tx.serviceId]: { calls: cell.calls + sign, spentCents: cell.spentCents + sign * tx.priceCents, label } })
}
const completedSign = (tx: TransactionRecord | undefined) => (tx !== undefined && tx.status === "completed" ? 1 : 0)
type Tables = Effect.Success<typeof tables>

const row = (t: Tables, tx: TransactionRecord): TransactionRow => ({
  tx,
  delivery: t.deliveries.get(tx.id),
  review: t.reviews.get(tx.id),
  disputeId: t.disputeByTx.get(tx.id) ?? null
})



/** The insertSorted order of a row (createdAt, id) being added (`row`, not yet stored) among stored ones. */
const olderBy =
  <R extends { readonly id: string; readonly createdAt: string }>(row: R, get: (id: string) => R | undefined) =>
  (a: string, b: string) => {
    const x = a === row.id ? row : get(a)!
    const y = b === row.id ? row : get(b)!
    return x.createdAt < y.createdAt || (x.createdAt === y.createdAt && x.id < y.id)
  }

/** How many ids of an oldest-first (createdAt, id) index sort before `key` (binary search). */
const countBefore = <R extends { readonly id: string; readonly createdAt: string }>(
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

/** Up to `limit` rows of an oldest-first (createdAt, id) index that `keep` accepts, newest first, from before `before` (a keyset page). */
const newestFirst = <R extends { readonly id: string; readonly createdAt: string }>(
  ids: ReadonlyArray<string> | undefined,
  get: (id: string) => R,
  keep: (r: R) => boolean,
  limit: number,
  before?: { readonly createdAt: string; readonly id: string }
): Array<R> => {
  const out: Array<R> = []
  if (ids === undefined) return out
  for (let i = (before === undefined ? ids.length : countBefore(ids, get, before)) - 1; i >= 0 && out.length < limit; i--) {
    const r = get(ids[i])
    if (keep(r)) out.push(r)
  }
  return out
}

/** Keeps the agent's pending set in step with an approval's status. */
const setPending = (t: Tables, a: ApprovalRecord) => {
  const ids = t.pendingApprovals.get(a.agentId) ?? []
  const has = ids.includes(a.id)
  if (a.status === "pending" && !has) return t.pendingApprovals.set(a.agentId, [...ids, a.id])
  if (a.status !== "pending" && has) return t.pendingApprovals.set(a.agentId, ids.filter((id) => id !== a.id))
  return Effect.void
}

const byId = (a: string, b: string) => a < b

/** A transaction's per-side lists: its buyer's and seller's, and their status lists for a rare status. */
const sideKeys = (tx: TransactionRecord): Array<string> => {
  const keys = [`buyer|${tx.buyerAgentId}`, `seller|${tx.sellerAgentId}`]
  return tx.status === "completed" ? keys : [...keys, ...keys.map((k) => `${k}|${tx.status}`)]
}
/** (createdAt, id) order: true when `a` sorts before `b`. */
const olderThan = (a: { readonly createdAt: string; readonly id: string }, b: { readonly createdAt: string; readonly id: string }) =>
  a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)
/** insertSorted's order for `tx` (not stored yet, or being moved) among stored transactions. */
const olderTx = (t: Tables, tx: TransactionRecord) => (a: string, b: string) => olderThan(a === tx.id ? tx : t.txs.get(a)!, b === tx.id ? tx : t.txs.get(b)!)

/**
 * A catalogue page reads candidates from the price index instead of walking the id order when
 * there are at most this many (and fewer than the rows left to walk).
 */
export const CATALOGUE_CANDIDATES = 2048

/** A listed service's cheapest and dearest tier (the price index's entry). */
interface PriceEntry {
  readonly min: number
  readonly max: number
  readonly id: string
}
const byMinThenId = (a: PriceEntry, b: PriceEntry) => a.min - b.min || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
/** The largest span (max − min) bucket `b` holds: 0, 1, 3, 7, … (2^b − 1). */
const spanBound = (b: number) => 2 ** b - 1
const spanBucket = (span: number) => {
  let b = 0
  while (span > spanBound(b)) b++
  return b
}
const priceEntry = (r: ServiceRecord): PriceEntry | undefined =>
  r.status !== "active" || r.tiers.length === 0
    ? undefined
    : { min: Math.min(...r.tiers.map((x) => x.priceCents)), max: Math.max(...r.tiers.map((x) => x.priceCents)), id: r.id }

/** A listed service's place in the kept ranking (RankedFilter). */
interface RankEntry {
  readonly rank: number
  readonly id: string
}
const byRankThenId = (a: RankEntry, b: RankEntry) => b.rank - a.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const rankEntry = (r: ServiceRecord): RankEntry | undefined => (r.status === "active" ? { rank: rankOf(r), id: r.id } : undefined)

/** Keeps the ranking (`all` and the service's category) in step with a write of the service or its rating. */
const rankService = Effect.fnUntraced(function* (t: Tables, before: ServiceRecord | undefined, after: ServiceRecord) {
  const old = before === undefined ? undefined : rankEntry(before)
  const now = rankEntry(after)
  if (old?.rank === now?.rank && before?.category === after.category) return
  if (old !== undefined) for (const key of ["all", `category|${before!.category}`]) yield* t.serviceRanking.removeOrdered(key, old, byRankThenId)
  if (now !== undefined) for (const key of ["all", `category|${after.category}`]) yield* t.serviceRanking.insertOrdered(key, now, byRankThenId)
})

/** Every 3-character window of a search text (what any `q` of 3 or more characters it contains also has). */
export const trigramsOf = (text: string): Set<string> => {
  const out = new Set<string>()
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3))
  return out
}

/** Keeps the catalogue's ordered indexes, search text, trigram and price indexes in step with a service's write. */
const indexService = Effect.fnUntraced(function* (t: Tables, before: ServiceRecord | undefined, after: ServiceRecord) {
  if (before === undefined) yield* t.serviceOrder.insertSorted("all", after.id, byId)
  for (const key of ["category", "seller"] as const) {
    const of = (r: ServiceRecord) => `${key}|${key === "category" ? r.category : r.sellerAgentId}`
    if (before !== undefined && of(before) === of(after)) continue
    if (before !== undefined) yield* t.serviceOrder.removeItem(of(before), before.id)
    yield* t.serviceOrder.insertSorted(of(after), after.id, byId)
  }
  const previousText = t.serviceSearch.get(after.id)
  const text = searchText(after)
  if (previousText !== text) yield* t.serviceSearch.set(after.id, text)
  // Trigrams of listed services only (as the partial SQL index): the difference is written.
  const had = before !== undefined && before.status === "active" && previousText !== undefined ? trigramsOf(previousText) : new Set<string>()
  const has = after.status === "active" ? trigramsOf(text) : new Set<string>()
  const gone = [...had].filter((x) => !has.has(x))
  const added = [...has].filter((x) => !had.has(x))
  if (gone.length > 0) yield* t.serviceTrigrams.removeOrderedAll(gone, after.id, compareIds)
  if (added.length > 0) yield* t.serviceTrigrams.insertOrderedAll(added, after.id, compareIds)
  yield* rankService(t, before, after)
  const oldEntry = before === undefined ? undefined : priceEntry(before)
  const newEntry = priceEntry(after)
  if (oldEntry?.min !== newEntry?.min || oldEntry?.max !== newEntry?.max) {
    if (oldEntry !== undefined) yield* t.servicePrices.removeOrdered(spanBucket(oldEntry.max - oldEntry.min), oldEntry, byMinThenId)
    if (newEntry !== undefined) yield* t.servicePrices.insertOrdered(spanBucket(newEntry.max - newEntry.min), newEntry, byMinThenId)
  }
})

/**
 * Ids of listed services whose tiers can overlap [low, high] (some tier ≥ low and some ≤ high ⟺
 * max ≥ low and min ≤ high): per span bucket, the entries with min in [low − bound, high], those
 * with max ≥ low kept. Undefined once more than `budget` entries would be read (walk the id order).
 */
const priceCandidates = (t: Tables, low: number, high: number, budget: number): Array<string> | undefined => {
  const out: Array<string> = []
  let read = 0
  for (const [bucket, entries] of t.servicePrices.rows) {
    const from = low - spanBound(bucket)
    for (let i = lowerBound(entries, { min: from, max: from, id: "" }, byMinThenId); i < entries.length && entries[i].min <= high; i++) {
      if (++read > budget) return undefined
      if (entries[i].max >= low) out.push(entries[i].id)
    }
  }
  return out
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The id-ordered list a page walks: the narrowest of the seller, category or whole catalogue's
 * (`ids`) and, for a `q` of 3+ characters, its rarest trigram's listed services — which hold every
 * match, so walking them from the cursor and checking the whole filter stops after about a page
 * when q's words are common and reads no more than q's rarest trigram when they are rare (a
 * trigram no listed service has: nothing to walk).
 */
const walkedIds = (t: Tables, ids: ReadonlyArray<string>, q: string | undefined): ReadonlyArray<string> => {
  if (q === undefined || q.length < 3) return ids
  let rarest = ids
  for (const tri of trigramsOf(q)) {
    const posting = t.serviceTrigrams.get(tri)
    if (posting === undefined) return []
    if (posting.length < rarest.length) rarest = posting
  }
  return rarest
}

/** First position in an id-ordered index whose id is greater than `afterId`. */
const firstAfter = (ids: ReadonlyArray<string>, afterId: string | undefined) => {
  if (afterId === undefined) return 0
  let lo = 0
  let hi = ids.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ids[mid] <= afterId) lo = mid + 1
    else hi = mid
  }
  return lo
}

export const MemoryCatalogStore = Layer.effect(
  CatalogStore,
  Effect.map(tables, (t) => ({
    upsertSeed: (rows) =>
      Effect.forEach(rows, (r) => {
        const existing = t.services.get(r.id)
        const next = existing ? { ...r, ratingSum: existing.ratingSum, ratingCount: existing.ratingCount, createdAt: existing.createdAt } : r
        return Effect.andThen(t.services.set(r.id, next), indexService(t, existing, next))
      }, { discard: true }),
    insert: (r) =>
      Effect.suspend(() => {
        const before = t.services.get(r.id)
        return Effect.andThen(t.services.set(r.id, r), indexService(t, before, r))
      }),
    update: (r) => Effect.suspend(() => {
      const current = t.services.get(r.id)
      const next = current ? { ...r, ratingSum: current.ratingSum, ratingCount: current.ratingCount } : r
      return Effect.andThen(t.services.set(r.id, next), indexService(t, current, next))
    }),
    get: (id) => Effect.sync(() => t.services.get(id)),
    // Walks the narrowest id-ordered index (seller, category, all, or q's rarest trigram) from the
    // cursor and stops after `limit` matches: no copy, filter and sort of the whole catalogue per request.
    // …or, for a narrow price band, reads the few candidates its index holds (at most
    // CATALOGUE_CANDIDATES), checks each against the whole filter and sorts the matches by id: the
    // same rows in the same order either way (test/suites/catalogue.test.ts), bounded by the matches.
    list: (f) =>
      Effect.sync(() => {
        const q = f.q?.toLowerCase()
        const matches = (s: ServiceRecord) =>
          s.status === "active" &&
          (f.category === undefined || s.category === f.category) &&
          (f.pricingModel === undefined || s.pricingModel === f.pricingModel) &&
          (f.sellerId === undefined || s.sellerAgentId === f.sellerId) &&
          (f.minPriceCents === undefined || s.tiers.some((x) => x.priceCents >= f.minPriceCents!)) &&
          (f.maxPriceCents === undefined || s.tiers.some((x) => x.priceCents <= f.maxPriceCents!)) &&
          (f.minRating === undefined || (s.ratingCount > 0 && s.ratingSum / s.ratingCount >= f.minRating)) &&
          (q === undefined || (t.serviceSearch.get(s.id) ?? searchText(s)).includes(q))
        const ids = walkedIds(t, t.serviceOrder.get(f.sellerId !== undefined ? `seller|${f.sellerId}` : f.category !== undefined ? `category|${f.category}` : "all") ?? [], q)
        const start = firstAfter(ids, f.afterId)
        let candidates: ReadonlyArray<string> | undefined
        const budget = Math.min(CATALOGUE_CANDIDATES, ids.length - start)
        if (f.minPriceCents !== undefined || f.maxPriceCents !== undefined) {
          const priced = priceCandidates(t, f.minPriceCents ?? Number.NEGATIVE_INFINITY, f.maxPriceCents ?? Number.POSITIVE_INFINITY, budget)
          if (priced !== undefined && (candidates === undefined || priced.length < candidates.length)) candidates = priced
        }
        if (candidates !== undefined) {
          const out: Array<ServiceRecord> = []
          for (const id of candidates) {
            if (f.afterId !== undefined && id <= f.afterId) continue
            const s = t.services.get(id)!
            if (matches(s)) out.push(s)
          }
          return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, f.limit)
        }
        const out: Array<ServiceRecord> = []
        for (let i = start; i < ids.length && out.length < f.limit; i++) {
          const s = t.services.get(ids[i])!
          if (matches(s)) out.push(s)
        }
        return out
      }),
    addRating: (id, rating) =>
      Effect.suspend(() => {
        const s = t.services.get(id)
        if (s === undefined) return Effect.void
        const next = { ...s, ratingSum: s.ratingSum + rating, ratingCount: s.ratingCount + 1 }
        return Effect.andThen(t.services.set(id, next), rankService(t, s, next))
      }),
    // Walks the kept ranking (of the category, or all) and stops at `limit` services the policy
    // allows; with an allowed-sellers list, ranks just those sellers' services (their id lists).
    ranked: (f) =>
      Effect.sync(() => {
        const keep = (s: ServiceRecord) =>
          s.status === "active" &&
          (f.category === undefined || s.category === f.category) &&
          s.sellerAgentId !== f.excludeSeller &&
          (f.sellers === null || f.sellers.includes(s.sellerAgentId)) &&
          (f.categories === null || f.categories.includes(s.category)) &&
          (f.maxTierCents === null || s.tiers.some((x) => x.priceCents <= f.maxTierCents!))
        if (f.categories !== null && f.categories.length === 0) return []
        if (f.sellers !== null) {
          const rows = [...new Set(f.sellers)].flatMap((seller) => (t.serviceOrder.get(`seller|${seller}`) ?? []).map((id) => t.services.get(id)!)).filter(keep)
          return rows.map((s) => ({ s, e: { rank: rankOf(s), id: s.id } })).sort((a, b) => byRankThenId(a.e, b.e)).slice(0, f.limit).map((x) => x.s)
        }
        const out: Array<ServiceRecord> = []
        for (const e of t.serviceRanking.get(f.category === undefined ? "all" : `category|${f.category}`) ?? []) {
          if (out.length >= f.limit) break
          const s = t.services.get(e.id)!
          if (keep(s)) out.push(s)
        }
        return out
      }),
    deliveryStats: (serviceId, since) =>
      Effect.sync(() => {
        const byTier = new Map<string, Array<DeliveryRecord>>()
        for (const id of t.deliveriesByService.get(serviceId) ?? []) {
          const d = t.deliveries.get(id)!
          if (d.deliveredAt < since) continue
          byTier.set(d.tierId, [...(byTier.get(d.tierId) ?? []), d])
        }
        return [...byTier].map(([tierId, ds]): TierDeliveryStats => ({
          tierId,
          deliveries: ds.length,
          successes: ds.filter((d) => d.success).length,
          p95LatencyMs: p95(ds.map((d) => d.latencyMs))
        }))
      })
  }))
)

export const MemoryWalletStore = Layer.effect(
  WalletStore,
  Effect.map(tables, (t) => ({
    // The memory engine's write lock serialises units of work: reading is locking.
    lock: (initial) => Effect.suspend(() => {
      const w = t.wallets.get(initial.agentId)
      return w ? Effect.succeed(w) : Effect.as(t.wallets.set(initial.agentId, initial), initial)
    }),
    lockForPurchase: (initial) =>
      Effect.suspend(() => {
        const w = t.wallets.get(initial.agentId)
        const balanceCents = t.ledgerBalances.get(walletAccount(initial.agentId)) ?? 0
        return w ? Effect.succeed({ wallet: w, balanceCents }) : Effect.as(t.wallets.set(initial.agentId, initial), { wallet: initial, balanceCents })
      }),
    get: (agentId) => Effect.sync(() => t.wallets.get(agentId)),
    put: (w) => t.wallets.set(w.agentId, w),
    heldCents: (agentId) => Effect.sync(() => heldBy(t.sagas, t.sagasRunningByBuyer.get(agentId) ?? [])),
    addSpend: (agentId, at, cents) => addSpend(t, agentId, at, cents),
    // From the running totals: one lookup per day since `since` (a day or a month).
    spentSince: (agentId, since) =>
      Effect.flatMap(Effect.all([dayBoundary(since), Clock.currentTimeMillis]), ([first, now]) =>
        Effect.sync(() => {
          // Up to today by the program's clock (purchases are dated by it too).
          const today = utcDay(new Date(now).toISOString())
          let sum = 0
          for (let day = first, n = 0; day <= today && n < 400; day = nextDay(day), n++) sum += t.spendDays.get(`${agentId}|${day}`) ?? 0
          return sum
        })
      ),
    spendDrift: Effect.sync(() => {
      const recomputed = new Map<string, number>()
      for (const id of t.txOrder.get("all") ?? []) {
        const tx = t.txs.get(id)!
        if (tx.status !== "completed") continue
        const k = `${tx.buyerAgentId}|${utcDay(tx.createdAt)}`
        recomputed.set(k, (recomputed.get(k) ?? 0) + tx.priceCents)
      }
      for (const debit of otherSpend(t)) {
        const k = `${debit.agentId}|${utcDay(debit.at)}`
        recomputed.set(k, (recomputed.get(k) ?? 0) + debit.cents)
      }
      const keys = new Set([...recomputed.keys(), ...t.spendDays.rows.keys()])
      const spend = [...keys]
        .filter((k) => (t.spendDays.get(k) ?? 0) !== (recomputed.get(k) ?? 0))
        .sort()
        .map((k) => {
          const [agentId, day] = k.split("|")
          return { agentId, day, serviceId: null, kept: t.spendDays.get(k) ?? 0, recomputed: recomputed.get(k) ?? 0, keptCalls: null, recomputedCalls: null }
        })
      // Usage per agent, day and service, the same way.
      const usage = new Map<string, { calls: number; cents: number }>()
      for (const id of t.txOrder.get("all") ?? []) {
        const tx = t.txs.get(id)!
        if (tx.status !== "completed") continue
        const k = `${tx.buyerAgentId}|${utcDay(tx.createdAt)}|${tx.serviceId}`
        const u = usage.get(k) ?? { calls: 0, cents: 0 }
        usage.set(k, { calls: u.calls + 1, cents: u.cents + tx.priceCents })
      }
      const kept = new Map<string, UsageCell>()
      for (const [dayKey, cells] of t.usageDays.rows) for (const [serviceId, cell] of Object.entries(cells)) kept.set(`${dayKey}|${serviceId}`, cell)
      const usageDrift = [...new Set([...usage.keys(), ...kept.keys()])]
        .filter((k) => (kept.get(k)?.calls ?? 0) !== (usage.get(k)?.calls ?? 0) || (kept.get(k)?.spentCents ?? 0) !== (usage.get(k)?.cents ?? 0))
        .sort()
        .map((k) => {
          const [agentId, day, serviceId] = k.split("|")
          return { agentId, day, serviceId, kept: kept.get(k)?.spentCents ?? 0, recomputed: usage.get(k)?.cents ?? 0, keptCalls: kept.get(k)?.calls ?? 0, recomputedCalls: usage.get(k)?.calls ?? 0 }
        })
      return [...spend, ...usageDrift]
    }),
    countPendingApprovals: (agentId, nowIso) =>
      Effect.sync(() => (t.pendingApprovals.get(agentId) ?? []).filter((id) => t.approvals.get(id)!.expiresAt > nowIso).length),
    insertRecharge: (r) => t.recharges.set(r.id, r),
    listRequestedRecharges: (limit) =>
      Effect.sync(() => [...t.recharges.values()].filter((r) => r.status === "requested").sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1)).slice(0, limit))
  }))
)

export const MemoryCommerceStore = Layer.effect(
  CommerceStore,
  Effect.map(tables, (t) => ({
    insertTransaction: Effect.fnUntraced(function* (tx: TransactionRecord, delivery: DeliveryRecord) {
      yield* t.txs.set(tx.id, tx)
      yield* t.txOrder.append("all", tx.id)
      // Per side (and rare status), oldest first by (createdAt, id): the order every page walks (from the end).
      for (const key of sideKeys(tx)) yield* t.txBySide.insertSorted(key, tx.id, olderTx(t, tx))
      if (tx.idempotencyKey !== null) yield* t.txByKey.set(`${tx.buyerAgentId}|${tx.idempotencyKey}`, tx.id)
      yield* t.deliveries.set(tx.id, delivery)
      yield* t.deliveriesByService.append(delivery.serviceId, tx.id)
      yield* addSpend(t, tx.buyerAgentId, tx.createdAt, completedCents(tx))
      yield* addUsage(t, tx, completedSign(tx))
      yield* moveCounters(t, tx, undefined)
    }),
    getTransaction: (id) => Effect.sync(() => (t.txs.get(id) ? row(t, t.txs.get(id)!) : undefined)),
    lockTransaction: (id) => Effect.sync(() => t.txs.get(id)),
    updateTransaction: Effect.fnUntraced(function* (tx: TransactionRecord) {
      const before = t.txs.get(tx.id)
      yield* t.txs.set(tx.id, tx)
      if (before !== undefined && before.status !== tx.status) {
        // A refund moves the row between the status lists (the SQL partial indexes follow the same update).
        const now = new Set(sideKeys(tx))
        const was = sideKeys(before)
        for (const key of was) if (!now.has(key)) yield* t.txBySide.removeItem(key, tx.id)
        for (const key of now) if (!was.includes(key)) yield* t.txBySide.insertSorted(key, tx.id, olderTx(t, tx))
      }
      yield* addSpend(t, tx.buyerAgentId, tx.createdAt, completedCents(tx) - completedCents(before))
      yield* addUsage(t, tx, completedSign(tx) - completedSign(before))
      if (before !== undefined) yield* moveCounters(t, tx, before)
    }),
    findByIdempotencyKey: (buyer, key) =>
      Effect.sync(() => {
        const id = t.txByKey.get(`${buyer}|${key}`)
        return id ? row(t, t.txs.get(id)!) : undefined
      }),
    // Newest first: walks the agent's ordered index back from the cursor (binary search) and stops
    // after `limit` matches, as the Postgres page walks its (agent, created_at, id) index.
    listTransactions: (f) =>
      Effect.sync(() => {
        // One list per side asked for: the side's own, or its status list for a rare status.
        const rare = f.status !== undefined && f.status !== "completed" ? `|${f.status}` : ""
        const sides = f.role === undefined ? (["buyer", "seller"] as const) : [f.role]
        const lists = sides.map((side) => t.txBySide.get(`${side}|${f.agentId}${rare}`) ?? [])
        const get = (id: string) => t.txs.get(id)!
        // Each list's end: before the cursor and before `to` (binary searches), so nothing newer is walked.
        const ends = lists.map((ids) => {
          let end = f.before === undefined ? ids.length : countBefore(ids, get, f.before)
          if (f.to !== undefined) end = Math.min(end, countBefore(ids, get, { createdAt: f.to, id: "" }))
          return end
        })
        const out: Array<TransactionRow> = []
        let last: string | undefined
        // Newest first across the sides (a merge from the ends), a purchase from oneself once.
        while (out.length < f.limit) {
          let pick = -1
          for (let k = 0; k < lists.length; k++) {
            if (ends[k] === 0) continue
            if (pick < 0 || olderThan(get(lists[pick][ends[pick] - 1]), get(lists[k][ends[k] - 1]))) pick = k
          }
          if (pick < 0) break
          const tx = get(lists[pick][--ends[pick]])
          if (f.from !== undefined && tx.createdAt < f.from) break
          if (tx.id === last) continue
          last = tx.id
          if (f.serviceId !== undefined && tx.serviceId !== f.serviceId) continue
          if (f.status !== undefined && tx.status !== f.status) continue
          out.push(row(t, tx))
        }
        return out
      }),
    insertReview: (r) =>
      Effect.suspend(() => {
        if (t.reviews.get(r.transactionId)) return Effect.fail(new Conflict({ message: `transaction ${r.transactionId} was already reviewed`, state: "reviewed" }))
        const tx = t.txs.get(r.transactionId)
        const counted = tx !== undefined && tx.status !== "failed"
        return Effect.andThen(
          t.reviews.set(r.transactionId, r),
          counted ? addCounterDeltas(t, [{ agentId: tx.sellerAgentId, delta: { ...zeroCounters, reviewsReceived: 1, ratingSum: r.rating } }]) : Effect.void
        )
      }),
    insertApproval: (a) =>
      Effect.all(
        [
          t.approvals.set(a.id, a),
          a.idempotencyKey !== null ? t.approvalsByKey.set(`${a.agentId}|${a.idempotencyKey}`, a.id) : Effect.void,
          t.approvalsByAccount.insertSorted(a.accountId, a.id, olderBy(a, (id) => t.approvals.get(id))),
          t.approvalsByAccountStatus.insertSorted(`${a.accountId}|${a.status}`, a.id, olderBy(a, (id) => t.approvals.get(id))),
          setPending(t, a)
        ],
        { discard: true }
      ),
    lockApproval: (id) => Effect.sync(() => t.approvals.get(id)),
    updateApproval: (a) =>
      Effect.suspend(() => {
        const previous = t.approvals.get(a.id)
        const moved =
          previous === undefined || previous.status === a.status
            ? Effect.void
            : Effect.andThen(
                t.approvalsByAccountStatus.removeItem(`${previous.accountId}|${previous.status}`, a.id),
                t.approvalsByAccountStatus.insertSorted(`${a.accountId}|${a.status}`, a.id, olderBy(a, (id) => t.approvals.get(id)))
              )
        return Effect.all([t.approvals.set(a.id, a), moved, setPending(t, a)], { discard: true })
      }),
    findApprovalByKey: (agentId, key) =>
      Effect.sync(() => {
        const id = t.approvalsByKey.get(`${agentId}|${key}`)
        return id ? t.approvals.get(id) : undefined
      }),
    // Newest first: walks the account's (or the account's one status's) ordered index from the cursor, stopping at the page.
    listApprovals: (accountId, status, limit, before) =>
      Effect.sync(() =>
        newestFirst(
          status === undefined ? t.approvalsByAccount.get(accountId) : t.approvalsByAccountStatus.get(`${accountId}|${status}`),
          (id) => t.approvals.get(id)!,
          () => true,
          limit,
          before
        )
      )
  }))
)

export const MemoryDisputeStore = Layer.effect(
  DisputeStore,
  Effect.map(tables, (t) => ({
    insert: (d) =>
      t.disputeByTx.get(d.transactionId)
        ? Effect.fail(new Conflict({ message: `transaction ${d.transactionId} already has a dispute`, state: "disputed" }))
        : Effect.all(
            [
              t.disputes.set(d.id, d),
              t.disputeByTx.set(d.transactionId, d.id),
              t.disputesByAgent.insertSorted(d.buyerAgentId, d.id, olderBy(d, (id) => t.disputes.get(id))),
              d.sellerAgentId !== d.buyerAgentId ? t.disputesByAgent.insertSorted(d.sellerAgentId, d.id, olderBy(d, (id) => t.disputes.get(id))) : Effect.void,
              addCounterDeltas(t, disputeDeltas(d, null, d.status))
            ],
            { discard: true }
          ),
    get: (id) => Effect.sync(() => t.disputes.get(id)),
    lock: (id) => Effect.sync(() => t.disputes.get(id)),
    update: (d) =>
      Effect.suspend(() => {
        const before = t.disputes.get(d.id)
        return Effect.andThen(t.disputes.set(d.id, d), before === undefined ? Effect.void : addCounterDeltas(t, disputeDeltas(d, before.status, d.status)))
      }),
    listDue: (now, limit) =>
      Effect.sync(() =>
        [...t.disputes.values()]
          .filter((d) => (d.status === "open" && d.respondBy <= now) || (d.status === "under_review" && d.reviewDueAt !== null && d.reviewDueAt <= now))
          .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))
          .slice(0, limit)
          .map((d) => d.id)
      ),
    listForAgent: (agentId, limit, before) => Effect.sync(() => newestFirst(t.disputesByAgent.get(agentId), (id) => t.disputes.get(id)!, () => true, limit, before))
  }))
)

const allTxs = (t: Tables) => (t.txOrder.get("all") ?? []).map((id) => t.txs.get(id)!)

const byCountThenVolume = (a: ServiceCountRow, b: ServiceCountRow) => b.count - a.count || b.volumeCents - a.volumeCents || (a.serviceId < b.serviceId ? -1 : 1)

/** Service rows of counter cells, the zero ones left out, ranked as the SQL store's. */
const ranked = (cells: Iterable<[string, ServiceCount]>, limit: number): Array<ServiceCountRow> =>
  [...cells]
    .filter(([, c]) => c.count > 0)
    .map(([serviceId, c]) => ({ serviceId, serviceName: c.label, count: c.count, volumeCents: c.volumeCents }))
    .sort(byCountThenVolume)
    .slice(0, limit)

const inputsOf = (agentId: string, c: AgentCounters): ReputationInputs => ({
  agentId,
  reviewsReceived: c.reviewsReceived,
  ratingSum: c.ratingSum,
  completedDeals: c.deals,
  volumeCents: c.volumeCents,
  disputesLost: c.disputesLost
})

/**
 * Recomputes every counter from the transactions, reviews and disputes, by their definitions
 * (not by the writers' delta rules), for the drift check.
 */
const recomputeCounters = (t: Tables) => {
  const agents = new Map<string, Record<keyof AgentCounters, number>>()
  const of = (agentId: string) => {
    let c = agents.get(agentId)
    if (c === undefined) agents.set(agentId, (c = { ...zeroCounters }))
    return c
  }
  const services = new Map<string, number>()
  const bump = (k: string, n: number) => services.set(k, (services.get(k) ?? 0) + n)
  for (const tx of allTxs(t)) {
    const b = of(tx.buyerAgentId)
    const s = of(tx.sellerAgentId)
    const completed = tx.status === "completed"
    const deal = tx.status !== "failed"
    const self = tx.buyerAgentId === tx.sellerAgentId
    if (completed) {
      b.purchases++
      b.spentCents += tx.priceCents
      s.sales++
      s.earnedCents += tx.sellerCents
      s.feesGeneratedCents += tx.feeCents
      b.volumeCents += tx.priceCents
      if (!self) s.volumeCents += tx.priceCents
      for (const role of ["buyer", "seller"] as const) {
        const agentId = role === "buyer" ? tx.buyerAgentId : tx.sellerAgentId
        bump(`${agentId}|${role}:${tx.serviceId}:count`, 1)
        bump(`${agentId}|${role}:${tx.serviceId}:volumeCents`, tx.priceCents)
      }
      bump(`${tx.buyerAgentId}|category:${tx.category}`, 1)
    }
    if (tx.status === "refunded") b.refundsReceivedCents += tx.priceCents
    if (deal) {
      b.deals++
      if (!self) s.deals++
      const r = t.reviews.get(tx.id)
      if (r) {
        s.reviewsReceived++
        s.ratingSum += r.rating
      }
    }
  }
  for (const d of t.disputes.values()) {
    if (d.status === "resolved_refunded") of(d.sellerAgentId).disputesLost++
    if (d.status === "resolved_rejected") of(d.buyerAgentId).disputesLost++
  }
  return { agents, services }
}

export const MemoryAnalyticsStore = Layer.effect(
  AnalyticsStore,
  Effect.map(tables, (t) => ({
    // Per-agent figures read the agent's counters (kept by the writes), never its history.
    reputationInputs: (agentIds) =>
      Effect.sync(() => {
        const ids =
          agentIds === "all"
            ? new Set([...t.counters.rows.keys(), ...[...t.services.values()].filter((s) => s.status === "active").map((s) => s.sellerAgentId)])
            : new Set(agentIds)
        return [...ids].map((agentId) => inputsOf(agentId, t.counters.get(agentId) ?? zeroCounters))
      }),
    agentTotals: (agentId) =>
      Effect.sync(() => {
        const c = t.counters.get(agentId) ?? zeroCounters
        return {
          purchases: c.purchases,
          spentCents: c.spentCents,
          sales: c.sales,
          earnedCents: c.earnedCents,
          feesGeneratedCents: c.feesGeneratedCents,
          refundsReceivedCents: c.refundsReceivedCents
        }
      }),
    // Per agent: its services' cells; platform-wide: every seller's cells (O(services), cached by Reputation).
    topServices: (by, limit) =>
      Effect.sync(() => {
        if (by.buyer !== undefined) return ranked(Object.entries(t.serviceCounts.get(`${by.buyer}|buyer`) ?? {}), limit)
        if (by.seller !== undefined) return ranked(Object.entries(t.serviceCounts.get(`${by.seller}|seller`) ?? {}), limit)
        const all = new Map<string, ServiceCount>()
        for (const [k, cells] of t.serviceCounts.rows) {
          if (!k.endsWith("|seller")) continue
          for (const [serviceId, c] of Object.entries(cells)) {
            const a = all.get(serviceId) ?? { count: 0, volumeCents: 0, label: c.label }
            all.set(serviceId, { count: a.count + c.count, volumeCents: a.volumeCents + c.volumeCents, label: a.label > c.label ? a.label : c.label })
          }
        }
        return ranked(all, limit)
      }),
    // From every agent's counters: O(agents), not O(transactions).
    platformTotals: Effect.sync(() => {
      let transactions = 0
      let volumeCents = 0
      let feesCents = 0
      let buyers = 0
      let sellers = 0
      for (const c of t.counters.rows.values()) {
        transactions += c.sales
        volumeCents += c.spentCents
        feesCents += c.feesGeneratedCents
        if (c.purchases > 0) buyers++
        if (c.sales > 0) sellers++
      }
      return { transactions, volumeCents, feesCents, activeServices: [...t.services.values()].filter((s) => s.status === "active").length, buyers, sellers }
    }),
    // From the running totals: one lookup per day of the range (at most 90), then its services.
    usage: (agentId, from, to) =>
      Effect.map(dayBoundary(from), (fromDay) => {
        const toDay = utcDay(new Date(Date.parse(to) - 1).toISOString())
        const services = new Map<string, { calls: number; spentCents: number; label: string }>()
        const byDay: Array<UsageRow> = []
        for (let day = fromDay, n = 0; day <= toDay && n < 400; day = nextDay(day), n++) {
          const cells = t.usageDays.get(`${agentId}|${day}`)
          if (!cells) continue
          let calls = 0
          let spentCents = 0
          for (const [serviceId, cell] of Object.entries(cells)) {
            calls += cell.calls
            spentCents += cell.spentCents
            const s = services.get(serviceId) ?? { calls: 0, spentCents: 0, label: cell.label }
            services.set(serviceId, { calls: s.calls + cell.calls, spentCents: s.spentCents + cell.spentCents, label: s.label > cell.label ? s.label : cell.label })
          }
          if (calls > 0) byDay.push({ key: day, label: day, calls, spentCents })
        }
        const byService = [...services]
          .filter(([, s]) => s.calls > 0)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, s]) => ({ key, label: s.label, calls: s.calls, spentCents: s.spentCents }))
        return { byService, byDay }
      }),
    categoryHistory: (agentId) =>
      Effect.sync(() =>
        Object.entries(t.categoryCounts.get(agentId) ?? {})
          .filter(([, count]) => count > 0)
          .map(([category, count]) => ({ category, count }))
      ),
    counterDrift: Effect.sync(() => {
      const { agents, services } = recomputeCounters(t)
      const kept = new Map<string, number>()
      for (const [agentId, c] of t.counters.rows) for (const k of COUNTER_NAMES) kept.set(`${agentId}|${k}`, c[k])
      for (const [key, cells] of t.serviceCounts.rows) {
        const [agentId, role] = key.split("|")
        for (const [serviceId, c] of Object.entries(cells)) {
          kept.set(`${agentId}|${role}:${serviceId}:count`, c.count)
          kept.set(`${agentId}|${role}:${serviceId}:volumeCents`, c.volumeCents)
        }
      }
      for (const [agentId, cells] of t.categoryCounts.rows) for (const [category, n] of Object.entries(cells)) kept.set(`${agentId}|category:${category}`, n)
      const recomputed = new Map(services)
      for (const [agentId, c] of agents) for (const k of COUNTER_NAMES) recomputed.set(`${agentId}|${k}`, c[k])
      return [...new Set([...kept.keys(), ...recomputed.keys()])]
        .filter((k) => (kept.get(k) ?? 0) !== (recomputed.get(k) ?? 0))
        .sort()
        .map((k) => {
          const bar = k.indexOf("|")
          return { agentId: k.slice(0, bar), counter: k.slice(bar + 1), kept: kept.get(k) ?? 0, recomputed: recomputed.get(k) ?? 0 }
        })
    })
  }))
)

export const MemoryCommerceStoresLive = Layer.mergeAll(MemoryCatalogStore, MemoryWalletStore, MemoryCommerceStore, MemoryDisputeStore, MemoryAnalyticsStore)
