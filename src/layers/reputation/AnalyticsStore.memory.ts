// In-memory AnalyticsStore: reputation inputs, totals, top services, usage and categories, read
// from the running counters and totals the commerce writes keep (commerce/counters.memory.ts owns
// them), never from an agent's history; and the counters' drift check.
import { Effect, Layer } from "effect"
import type { ReputationInputs } from "../../schema/reputation/reputation.js"
import type { UsageRow } from "../../schema/commerce/analytics.js"
import { dayBoundary, utcDay } from "../../schema/wallet/policy.js"
import { AnalyticsStore, type ServiceCountRow } from "../../services/reputation/AnalyticsStore.js"
import { type AgentCounters, COUNTER_NAMES, zeroCounters } from "../../schema/reputation/counters.js"
import { recomputeCounters } from "../storage/memory/counters.js"
import { commerceTables, nextDay, type ServiceCount } from "../storage/memory/commerceTables.js"

const byCountThenVolume = (a: ServiceCountRow, b: ServiceCountRow) =>
  b.count - a.count || b.volumeCents - a.volumeCents || (a.serviceId < b.serviceId ? -1 : 1)

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

export const MemoryAnalyticsStore = Layer.effect(
  AnalyticsStore,
  Effect.map(commerceTables, (t) => ({
    // Per-agent figures read the agent's counters (kept by the writes), never its history.
    reputationInputs: (agentIds) =>
      Effect.sync(() => {
        const ids =
          agentIds === "all"
            ? new Set([
                ...t.counters.rows.keys(),
                ...[...t.services.values()].filter((s) => s.status === "active").map((s) => s.sellerAgentId)
              ])
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
        if (by.seller !== undefined)
          return ranked(Object.entries(t.serviceCounts.get(`${by.seller}|seller`) ?? {}), limit)
        const all = new Map<string, ServiceCount>()
        for (const [k, cells] of t.serviceCounts.rows) {
          if (!k.endsWith("|seller")) continue
          for (const [serviceId, c] of Object.entries(cells)) {
            const a = all.get(serviceId) ?? { count: 0, volumeCents: 0, label: c.label }
            all.set(serviceId, {
              count: a.count + c.count,
              volumeCents: a.volumeCents + c.volumeCents,
              label: a.label > c.label ? a.label : c.label
            })
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
      return {
        transactions,
        volumeCents,
        feesCents,
        activeServices: [...t.services.values()].filter((s) => s.status === "active").length,
        buyers,
        sellers
      }
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
            services.set(serviceId, {
              calls: s.calls + cell.calls,
              spentCents: s.spentCents + cell.spentCents,
              label: s.label > cell.label ? s.label : cell.label
            })
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
      for (const [agentId, cells] of t.categoryCounts.rows)
        for (const [category, n] of Object.entries(cells)) kept.set(`${agentId}|category:${category}`, n)
      for (const [key, cents] of t.earningDays.rows) {
        const bar = key.indexOf("|")
        kept.set(`${key.slice(0, bar)}|earned:${key.slice(bar + 1)}`, cents)
      }
      const recomputed = new Map(services)
      for (const [agentId, c] of agents) for (const k of COUNTER_NAMES) recomputed.set(`${agentId}|${k}`, c[k])
      return [...new Set([...kept.keys(), ...recomputed.keys()])]
        .filter((k) => (kept.get(k) ?? 0) !== (recomputed.get(k) ?? 0))
        .sort()
        .map((k) => {
          const bar = k.indexOf("|")
          return {
            agentId: k.slice(0, bar),
            counter: k.slice(bar + 1),
            kept: kept.get(k) ?? 0,
            recomputed: recomputed.get(k) ?? 0
          }
        })
    })
  }))
)
