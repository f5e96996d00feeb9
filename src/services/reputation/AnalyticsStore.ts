// The read-side analytics port: reputation inputs, per-agent and platform totals, usage, and the
// check of the running counters against a recomputation.
import { Context, type Effect } from "effect"
import type { ReputationInputs } from "../../schema/reputation/reputation.js"
import type { UsageRow } from "../../schema/commerce/analytics.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface ServiceCountRow {
  readonly serviceId: string
  readonly serviceName: string
  readonly count: number
  readonly volumeCents: number
}

export interface AgentTotals {
  readonly purchases: number
  readonly spentCents: number
  readonly sales: number
  readonly earnedCents: number
  readonly feesGeneratedCents: number
  readonly refundsReceivedCents: number
}

export interface PlatformTotals {
  readonly transactions: number
  readonly volumeCents: number
  readonly feesCents: number
  readonly activeServices: number
  readonly buyers: number
  readonly sellers: number
}

/** One running counter whose kept value differs from a recomputation from transactions, reviews and disputes. */
export interface CounterDrift {
  readonly agentId: string
  /**
   * A field of AgentTotals/ReputationInputs (`deals` is completedDeals), `buyer:<serviceId>:count` /
   * `…:volumeCents` (and seller), or `category:<name>`.
   */
  readonly counter: string
  readonly kept: number
  readonly recomputed: number
}

export interface AnalyticsStoreService {
  /** Reputation inputs of the given agents, or of every agent that sold, bought or lists a service. */
  readonly reputationInputs: (
    agentIds: ReadonlyArray<string> | "all"
  ) => Effect.Effect<ReadonlyArray<ReputationInputs>, StorageUnavailable>
  readonly agentTotals: (agentId: string) => Effect.Effect<AgentTotals, StorageUnavailable>
  readonly topServices: (
    by: { readonly buyer?: string; readonly seller?: string },
    limit: number
  ) => Effect.Effect<ReadonlyArray<ServiceCountRow>, StorageUnavailable>
  readonly platformTotals: Effect.Effect<PlatformTotals, StorageUnavailable>
  /** The buyer's completed purchases in [from, to), grouped by service and by UTC day (yyyy-mm-dd). */
  readonly usage: (
    agentId: string,
    fromIso: string,
    toIso: string
  ) => Effect.Effect<
    { readonly byService: ReadonlyArray<UsageRow>; readonly byDay: ReadonlyArray<UsageRow> },
    StorageUnavailable
  >
  /** The buyer's completed purchases per category. */
  readonly categoryHistory: (
    agentId: string
  ) => Effect.Effect<ReadonlyArray<{ readonly category: string; readonly count: number }>, StorageUnavailable>
  /**
   * Counters (above) that differ from a recomputation over every transaction, review and dispute:
   * empty when all agree. An operator check, not a request path.
   */
  readonly counterDrift: Effect.Effect<ReadonlyArray<CounterDrift>, StorageUnavailable>
}

/**
 * Read-side aggregates over transactions, reviews and disputes. Counts are of completed purchases
 * unless said. Per-agent figures come from running counters kept by the writes themselves
 * (migration 0018), so a read costs the same whatever the agent's history.
 */
export class AnalyticsStore extends Context.Service<AnalyticsStore, AnalyticsStoreService>()(
  "agent-commerce/AnalyticsStore"
) {}
