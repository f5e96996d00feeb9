// The memory engine's per-agent counters (the memory counterpart of postgres/counters.ts), the one
// module that writes and recomputes the agent_counters, agent_service_counts and
// agent_category_counts tables: a transaction's, review's or dispute's deltas
// (src/schema/reputation/counters.ts) added by the commerce stores, and the recomputation the
// reputation domain's drift check compares them with. Like the tables, it is storage the adapters
// of both domains build on.
import { Effect } from "effect"
import type { TransactionRecord } from "../../../schema/commerce/transactions.js"
import {
  addCounters,
  type AgentCounters,
  categoryDelta,
  type CounterDelta,
  earningDayDelta,
  serviceDeltas,
  type ServiceCountDelta,
  transactionDeltas,
  zeroCounters
} from "../../../schema/reputation/counters.js"
import { utcDay } from "../../../schema/wallet/policy.js"
import { allTxs, type Tables } from "./commerceTables.js"

export const addCounterDeltas = (t: Tables, deltas: ReadonlyArray<CounterDelta>) =>
  Effect.forEach(
    deltas,
    (d) => t.counters.set(d.agentId, addCounters(t.counters.get(d.agentId) ?? zeroCounters, d.delta)),
    { discard: true }
  )

const addServiceDeltas = (t: Tables, deltas: ReadonlyArray<ServiceCountDelta>) =>
  Effect.forEach(
    deltas,
    (d) => {
      const k = `${d.agentId}|${d.role}`
      const cells = t.serviceCounts.get(k) ?? {}
      const c = cells[d.serviceId] ?? { count: 0, volumeCents: 0, label: d.serviceName }
      const label = c.label > d.serviceName ? c.label : d.serviceName
      return t.serviceCounts.set(k, {
        ...cells,
        [d.serviceId]: { count: c.count + d.count, volumeCents: c.volumeCents + d.volumeCents, label }
      })
    },
    { discard: true }
  )

const addCategory = (t: Tables, buyer: string, category: string, delta: number) => {
  if (delta === 0) return Effect.void
  const cells = t.categoryCounts.get(buyer) ?? {}
  return t.categoryCounts.set(buyer, { ...cells, [category]: (cells[category] ?? 0) + delta })
}

const addEarningDay = (t: Tables, tx: TransactionRecord, before: TransactionRecord | undefined) => {
  const d = earningDayDelta(tx, before?.status ?? null, tx.status)
  if (d === null) return Effect.void
  const k = `${d.agentId}|${d.day}`
  return t.earningDays.set(k, (t.earningDays.get(k) ?? 0) + d.cents)
}

/** Every counter's move for a transaction going from `before` (null: new) to its status. */
export const moveCounters = (t: Tables, tx: TransactionRecord, before: TransactionRecord | undefined) => {
  const rating = t.reviews.get(tx.id)?.rating ?? null
  return Effect.all(
    [
      addCounterDeltas(
        t,
        transactionDeltas(tx, before === undefined ? null : { status: before.status, rating }, {
          status: tx.status,
          rating
        })
      ),
      addServiceDeltas(t, serviceDeltas(tx, before?.status ?? null, tx.status)),
      addCategory(t, tx.buyerAgentId, tx.category, categoryDelta(before?.status ?? null, tx.status)),
      addEarningDay(t, tx, before)
    ],
    { discard: true }
  )
}

/**
 * Recomputes every counter from the transactions, reviews and disputes, by their definitions
 * (not by the writers' delta rules), for the drift check.
 */
export const recomputeCounters = (t: Tables) => {
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
    // A pending transaction (an order waiting for its seller) is no deal yet.
    const deal = tx.status !== "failed" && tx.status !== "pending"
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
      if (tx.sellerCents !== 0) bump(`${tx.sellerAgentId}|earned:${utcDay(tx.createdAt)}`, tx.sellerCents)
    }
    if (tx.status === "refunded") b.refundsReceivedCents += tx.priceCents
    if (deal) {
      b.deals++
      if (!self) s.deals++
    }
    // A review counts while its purchase stands (a refunded one's no longer does).
    const r = tx.status === "completed" ? t.reviews.get(tx.id) : undefined
    if (r) {
      s.reviewsReceived++
      s.ratingSum += r.rating
    }
  }
  for (const d of t.disputes.values()) {
    if (d.status === "resolved_refunded") of(d.sellerAgentId).disputesLost++
    if (d.status === "resolved_rejected") of(d.buyerAgentId).disputesLost++
  }
  return { agents, services }
}
