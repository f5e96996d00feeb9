// Per-agent running counters (stats, reputation inputs, top services, categories bought): what one
// transaction, review or dispute adds to them, pure, so the memory and SQL stores keep the same
// numbers. Migration 0018 holds them; docs/reputation.md says what each one counts. The counter
// tables are written and recomputed only by src/layers/storage/{memory,postgres}/counters.ts (their
// one owning module per storage), in the same unit of work as the change they count.
import type { DisputeStatus } from "../commerce/disputes.js"
import type { TransactionRecord, TransactionStatus } from "../commerce/transactions.js"
import { utcDay } from "../wallet/policy.js"

/** Rows per agent in `agent_counters` and per (agent, service) on the seller side: a seller's buyers spread over them. */
export const COUNTER_SHARDS = 16

/**
 * The shard a transaction's counters land on: from its (random) id, so concurrent buyers of one
 * seller update different rows (as the ledger's credit shards, migration 0017), and its review and
 * dispute later adjust the same row.
 */
export const counterShard = (transactionId: string) => {
  let h = 0
  for (let i = 0; i < transactionId.length; i++) h = (h * 31 + transactionId.charCodeAt(i)) | 0
  return Math.abs(h) % COUNTER_SHARDS
}

/** One agent's counters (a delta, or a sum over its shard rows). */
export interface AgentCounters {
  /** Completed purchases as buyer, and their price. */
  readonly purchases: number
  readonly spentCents: number
  /** Price of the agent's purchases that were refunded. */
  readonly refundsReceivedCents: number
  /** Completed sales as seller: count, the seller's share, the platform's fee. */
  readonly sales: number
  readonly earnedCents: number
  readonly feesGeneratedCents: number
  /** Transactions not failed, as buyer or seller (once when both). */
  readonly deals: number
  /** Price of completed transactions, as buyer or seller (once when both). */
  readonly volumeCents: number
  /** Reviews of the agent's sales that did not fail, and their stars. */
  readonly reviewsReceived: number
  readonly ratingSum: number
  /** Disputes refunded against the agent as seller, or rejected as buyer. */
  readonly disputesLost: number
}

export const COUNTER_NAMES = [
  "purchases",
  "spentCents",
  "refundsReceivedCents",
  "sales",
  "earnedCents",
  "feesGeneratedCents",
  "deals",
  "volumeCents",
  "reviewsReceived",
  "ratingSum",
  "disputesLost"
] as const satisfies ReadonlyArray<keyof AgentCounters>

/** The column of each counter in `agent_counters`. */
export const COUNTER_COLUMNS: Readonly<Record<keyof AgentCounters, string>> = {
  purchases: "purchases",
  spentCents: "spent_cents",
  refundsReceivedCents: "refunds_received_cents",
  sales: "sales",
  earnedCents: "earned_cents",
  feesGeneratedCents: "fees_generated_cents",
  deals: "deals",
  volumeCents: "volume_cents",
  reviewsReceived: "reviews_received",
  ratingSum: "rating_sum",
  disputesLost: "disputes_lost"
}

export const zeroCounters: AgentCounters = {
  purchases: 0,
  spentCents: 0,
  refundsReceivedCents: 0,
  sales: 0,
  earnedCents: 0,
  feesGeneratedCents: 0,
  deals: 0,
  volumeCents: 0,
  reviewsReceived: 0,
  ratingSum: 0,
  disputesLost: 0
}

export const addCounters = (a: AgentCounters, b: AgentCounters, sign = 1): AgentCounters => {
  const out = { ...a } as Record<keyof AgentCounters, number>
  for (const k of COUNTER_NAMES) out[k] = a[k] + sign * b[k]
  return out
}

export const isZero = (c: AgentCounters) => COUNTER_NAMES.every((k) => c[k] === 0)

/** What a transaction in `status` (with a review of `rating`, or none) counts for each of its agents. */
const contribution = (
  tx: TransactionRecord,
  status: TransactionStatus,
  rating: number | null
): Map<string, AgentCounters> => {
  const completed = status === "completed"
  // A pending transaction (an order waiting for its seller) is no deal yet.
  const deal = status !== "failed" && status !== "pending"
  const buyer: AgentCounters = {
    ...zeroCounters,
    purchases: completed ? 1 : 0,
    spentCents: completed ? tx.priceCents : 0,
    refundsReceivedCents: status === "refunded" ? tx.priceCents : 0,
    deals: deal ? 1 : 0,
    volumeCents: completed ? tx.priceCents : 0
  }
  const self = tx.sellerAgentId === tx.buyerAgentId
  const seller: AgentCounters = {
    ...zeroCounters,
    sales: completed ? 1 : 0,
    earnedCents: completed ? tx.sellerCents : 0,
    feesGeneratedCents: completed ? tx.feeCents : 0,
    // A purchase from oneself is one deal of the agent's, counted on the buyer side.
    deals: deal && !self ? 1 : 0,
    volumeCents: completed && !self ? tx.priceCents : 0,
    // A review counts while its purchase stands: a refunded one's no longer moves the seller's record.
    reviewsReceived: completed && rating !== null ? 1 : 0,
    ratingSum: completed && rating !== null ? rating : 0
  }
  return self
    ? new Map([[tx.buyerAgentId, addCounters(buyer, seller)]])
    : new Map([
        [tx.buyerAgentId, buyer],
        [tx.sellerAgentId, seller]
      ])
}

export interface CounterDelta {
  readonly agentId: string
  readonly delta: AgentCounters
}

/**
 * What moving a transaction from `before` (null: it did not exist) to `after` adds to each of its
 * agents, ordered by agent id (the SQL stores lock the rows in that order). An inserted
 * transaction yields a row per agent even when all zero (a failed one), so every agent that ever
 * dealt has counters (the leaderboard's "every agent" is read from them).
 */
export const transactionDeltas = (
  tx: TransactionRecord,
  before: { readonly status: TransactionStatus; readonly rating: number | null } | null,
  after: { readonly status: TransactionStatus; readonly rating: number | null }
): ReadonlyArray<CounterDelta> => {
  const next = contribution(tx, after.status, after.rating)
  const prev = before === null ? new Map<string, AgentCounters>() : contribution(tx, before.status, before.rating)
  return [...next]
    .map(([agentId, c]) => ({ agentId, delta: addCounters(c, prev.get(agentId) ?? zeroCounters, -1) }))
    .filter((d) => before === null || !isZero(d.delta))
    .sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0))
}

/** Lost disputes: a refund counts against the seller, a rejection against the buyer. */
export const disputeDeltas = (
  d: { readonly buyerAgentId: string; readonly sellerAgentId: string },
  before: DisputeStatus | null,
  after: DisputeStatus
): ReadonlyArray<CounterDelta> => {
  const lost = (s: DisputeStatus | null) => ({
    seller: s === "resolved_refunded" ? 1 : 0,
    buyer: s === "resolved_rejected" ? 1 : 0
  })
  const [n, p] = [lost(after), lost(before)]
  const by = new Map<string, number>()
  by.set(d.sellerAgentId, (by.get(d.sellerAgentId) ?? 0) + n.seller - p.seller)
  by.set(d.buyerAgentId, (by.get(d.buyerAgentId) ?? 0) + n.buyer - p.buyer)
  return [...by]
    .filter(([, v]) => v !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([agentId, v]) => ({ agentId, delta: { ...zeroCounters, disputesLost: v } }))
}

/** Per (agent, side, service): completed transactions and their price (top services bought and sold). */
export interface ServiceCountDelta {
  readonly agentId: string
  readonly role: "buyer" | "seller"
  readonly serviceId: string
  readonly serviceName: string
  readonly count: number
  readonly volumeCents: number
}

export const serviceDeltas = (
  tx: TransactionRecord,
  before: TransactionStatus | null,
  after: TransactionStatus
): ReadonlyArray<ServiceCountDelta> => {
  const sign = (after === "completed" ? 1 : 0) - (before === "completed" ? 1 : 0)
  if (sign === 0) return []
  const row = (agentId: string, role: "buyer" | "seller"): ServiceCountDelta => ({
    agentId,
    role,
    serviceId: tx.serviceId,
    serviceName: tx.serviceName,
    count: sign,
    volumeCents: sign * tx.priceCents
  })
  return [row(tx.buyerAgentId, "buyer"), row(tx.sellerAgentId, "seller")]
}

/** Completed purchases per (buyer, category): the recommendations' fit. 0 when nothing moves. */
export const categoryDelta = (before: TransactionStatus | null, after: TransactionStatus) =>
  (after === "completed" ? 1 : 0) - (before === "completed" ? 1 : 0)

/** A seller's earnings of one UTC day (the day the sale was placed): what the owner's page sums for today and the month. */
export interface EarningDayDelta {
  readonly agentId: string
  readonly day: string
  readonly cents: number
}

/**
 * What moving a transaction from `before` to `after` adds to its seller's earnings of the sale's UTC
 * day: its share while completed (a refund takes it back). Null when nothing moves.
 */
export const earningDayDelta = (
  tx: TransactionRecord,
  before: TransactionStatus | null,
  after: TransactionStatus
): EarningDayDelta | null => {
  const sign = (after === "completed" ? 1 : 0) - (before === "completed" ? 1 : 0)
  if (sign === 0 || tx.sellerCents === 0) return null
  return { agentId: tx.sellerAgentId, day: utcDay(tx.createdAt), cents: sign * tx.sellerCents }
}
