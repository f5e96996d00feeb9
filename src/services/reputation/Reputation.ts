// Reputation (0–1000 from reviews, disputes, volume and tenure), the leaderboard, commerce
// analytics (stats, usage) and recommendations — all read-side, from one analytics port.
import { AppConfig } from "../platform/AppConfig.js"
import { Clock, Context, Effect, Layer } from "effect"
import { cents } from "../../schema/platform/common.js"
import type {
  Reputation as ReputationView,
  ReputationBand,
  ReputationInputs
} from "../../schema/reputation/reputation.js"
import type { UsageRow } from "../../schema/commerce/analytics.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { Catalog } from "../commerce/Catalog.js"
import { traced } from "../platform/Tracing.js"
import type { Agent } from "../../schema/keys/keys.js"
import { Keys } from "../keys/Keys.js"
import { Wallet } from "../wallet/Wallet.js"
import { utcDayStart } from "../../schema/wallet/policy.js"

export interface ServiceCountRow { readonly serviceId: string; readonly serviceName: string; readonly count: number; readonly volumeCents: number }

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
  /** A field of AgentTotals/ReputationInputs (`deals` is completedDeals), `buyer:<serviceId>:count` / `…:volumeCents` (and seller), or `category:<name>`. */
  readonly counter: string
  readonly kept: number
  readonly recomputed: number
}

/**
 * Read-side aggregates over transactions, reviews and disputes. Counts are of completed purchases
 * unless said. Per-agent figures come from running counters kept by the writes themselves
 * (migration 0018), so a read costs the same whatever the agent's history.
 */
export class AnalyticsStore extends Context.Service<
  AnalyticsStore,
  {
    /** Reputation inputs of the given agents, or of every agent that sold, bought or lists a service. */
    readonly reputationInputs: (agentIds: ReadonlyArray<string> | "all") => Effect.Effect<ReadonlyArray<ReputationInputs>, StorageUnavailable>
    readonly agentTotals: (agentId: string) => Effect.Effect<AgentTotals, StorageUnavailable>
    readonly topServices: (by: { readonly buyer?: string; readonly seller?: string }, limit: number) => Effect.Effect<ReadonlyArray<ServiceCountRow>, StorageUnavailable>
    readonly platformTotals: Effect.Effect<PlatformTotals, StorageUnavailable>
    /** The buyer's completed purchases in [from, to), grouped by service and by UTC day (yyyy-mm-dd). */
    readonly usage: (agentId: string, fromIso: string, toIso: string) => Effect.Effect<{ readonly byService: ReadonlyArray<UsageRow>; readonly byDay: ReadonlyArray<UsageRow> }, StorageUnavailable>
    /** The buyer's completed purchases per category. */
    readonly categoryHistory: (agentId: string) => Effect.Effect<ReadonlyArray<{ readonly category: string; readonly count: number }>, StorageUnavailable>
    /** Counters (above) that differ from a recomputation over every transaction, review and dispute: empty when all agree. An operator check, not a request path. */
    readonly counterDrift: Effect.Effect<ReadonlyArray<CounterDrift>, StorageUnavailable>
  }
>()("agent-commerce/AnalyticsStore") {}

// ---------------------------------------------------------------------------------------------
// The formula (docs/reputation.md has the same numbers; test/suites/commerce.test.ts pins them)

export const REPUTATION_MAX = { reviews: 400, disputes: 200, volume: 250, tenure: 150 } as const
/** Lower bound of each band. */
export const BANDS: ReadonlyArray<{ readonly band: ReputationBand; readonly from: number }> = [
  { band: "Bronze", from: 0 },
  { band: "Silver", from: 350 },
  { band: "Gold", from: 550 },
  { band: "Platinum", from: 750 },
  { band: "Diamond", from: 900 }
]
export const REPUTATION_FORMULA =
  "reviews 400·(b−1)/4 with b=(Σstars+3·2)/(n+2); disputes 200·max(0,1−5·lost/deals) (100 with no deals); volume 250·min(1,log10(1+usd)/5); tenure 150·min(1,days/365); bands Bronze 0, Silver 350, Gold 550, Platinum 750, Diamond 900"

export const bandOf = (score: number): ReputationBand => [...BANDS].reverse().find((b) => score >= b.from)!.band

export const reputationScore = (i: Omit<ReputationInputs, "agentId">, tenureDays: number) => {
  const bayes = (i.ratingSum + 3 * 2) / (i.reviewsReceived + 2)
  const reviews = Math.round((REPUTATION_MAX.reviews * (bayes - 1)) / 4)
  const disputes = i.completedDeals === 0 ? REPUTATION_MAX.disputes / 2 : Math.round(REPUTATION_MAX.disputes * Math.max(0, 1 - (5 * i.disputesLost) / i.completedDeals))
  const volume = Math.round(REPUTATION_MAX.volume * Math.min(1, Math.log10(1 + i.volumeCents / 100) / 5))
  const days = Math.max(0, Math.floor(tenureDays))
  const tenure = Math.round(REPUTATION_MAX.tenure * Math.min(1, days / 365))
  const score = Math.max(0, Math.min(1000, reviews + disputes + volume + tenure))
  return { score, reviews, disputes, volume, tenure, days }
}

/**
 * How many services `recommend` scores for `limit` picks: the first this many of the kept ranking
 * (the services' rating; docs/commerce.md, "Recommendations") that the wallet policy allows.
 */
export const recommendCandidates = (limit: number) => Math.min(100, Math.max(20, 4 * limit))

const emptyInputs = (agentId: string): ReputationInputs => ({ agentId, reviewsReceived: 0, ratingSum: 0, completedDeals: 0, volumeCents: 0, disputesLost: 0 })

export class Reputation extends Context.Service<Reputation>()("agent-commerce/Reputation", {
  make: Effect.gen(function* () {
    const store = yield* AnalyticsStore
    const keys = yield* Keys
    const catalog = yield* Catalog
    const wallet = yield* Wallet
    const config = yield* AppConfig

    /**
     * Platform-wide figures (the platform half of /stats, its top services, the leaderboard) read
     * every transaction of the system, whoever asks: they are reused in process for
     * PLATFORM_STATS_TTL_SECONDS (default 10 s, wall clock), so an agent's request no longer costs
     * a scan of everyone's history each time (docs/commerce.md "Analytics"). Per-agent figures are
     * never reused. Only successes are kept.
     */
    const ttlMs = config.platformStatsTtlSeconds * 1000
    const platformWide = <A, E, R>(read: Effect.Effect<A, E, R>) => {
      let held: { readonly until: number; readonly value: A } | undefined
      return Effect.suspend(() =>
        ttlMs > 0 && held !== undefined && held.until > Date.now()
          ? Effect.succeed(held.value)
          : Effect.tap(read, (value) => Effect.sync(() => void (held = { until: Date.now() + ttlMs, value })))
      )
    }
    const platformTotals = platformWide(store.platformTotals)
    const platformTopServices = platformWide(store.topServices({}, 5))
    const everyonesInputs = platformWide(store.reputationInputs("all"))

    /** An agent's reputation from its inputs and its agent row (tenure; none: 0 days). */
    const view = (inputs: ReputationInputs, agent: Agent | undefined, now: number): ReputationView => {
      const days = agent === undefined ? 0 : (now - Date.parse(agent.createdAt)) / 86_400_000
      const r = reputationScore(inputs, days)
      const band = bandOf(r.score)
      const next = BANDS.find((b) => b.from > r.score)
      return {
        agentId: inputs.agentId,
        score: r.score,
        band,
        nextBand: next ? { band: next.band, atScore: next.from } : null,
        factors: {
          reviews: { points: r.reviews, max: REPUTATION_MAX.reviews, count: inputs.reviewsReceived, averageRating: inputs.reviewsReceived === 0 ? null : Math.round((inputs.ratingSum / inputs.reviewsReceived) * 100) / 100 },
          disputes: { points: r.disputes, max: REPUTATION_MAX.disputes, lost: inputs.disputesLost, completedDeals: inputs.completedDeals },
          volume: { points: r.volume, max: REPUTATION_MAX.volume, volumeCents: inputs.volumeCents },
          tenure: { points: r.tenure, max: REPUTATION_MAX.tenure, days: r.days }
        },
        formula: REPUTATION_FORMULA
      }
    }

    const compute = (inputs: ReputationInputs, now: number) =>
      Effect.map(Effect.option(keys.getAgent(inputs.agentId)), (a) => view(inputs, a._tag === "Some" ? a.value : undefined, now))

    /** Many agents' reputations with one read of their agent rows (the leaderboard, recommendations' sellers). */
    const computeMany = (all: ReadonlyArray<ReputationInputs>, now: number) =>
      Effect.map(keys.agentsById(all.map((i) => i.agentId)), (agents) => ({
        agents,
        views: all.map((i) => view(i, agents.get(i.agentId), now))
      }))

    const reputationOf = Effect.fnUntraced(function* (agentId: string) {
      const now = yield* Clock.currentTimeMillis
      const [inputs] = yield* store.reputationInputs([agentId])
      return yield* compute(inputs ?? emptyInputs(agentId), now)
    }, traced("Reputation.of"))

    const leaderboard = Effect.fnUntraced(function* (limit: number) {
      const now = yield* Clock.currentTimeMillis
      const all = yield* everyonesInputs
      const { agents, views } = yield* computeMany(all, now)
      const scored = views.map((r, index) => ({ r, i: all[index] }))
      scored.sort((a, b) => b.r.score - a.r.score || a.r.agentId.localeCompare(b.r.agentId))
      const data = scored.slice(0, limit).map(({ r, i }, index) => {
        const agent = agents.get(r.agentId)
        return {
          rank: index + 1,
          agentId: r.agentId,
          name: agent !== undefined ? agent.name : r.agentId,
          organization: agent !== undefined ? agent.organization : null,
          score: r.score,
          band: r.band,
          completedDeals: i.completedDeals,
          reviewsReceived: i.reviewsReceived
        }
      })
      return { data, generatedAt: new Date(now).toISOString() }
    }, traced("Reputation.leaderboard"))

    const stats = Effect.fnUntraced(function* (agentId: string) {
      const now = yield* Clock.currentTimeMillis
      const [mine, bought, sold, platform, top] = yield* Effect.all([
        store.agentTotals(agentId),
        store.topServices({ buyer: agentId }, 5),
        store.topServices({ seller: agentId }, 5),
        platformTotals,
        platformTopServices
      ])
      return {
        agent: { ...mine, topServicesBought: bought, topServicesSold: sold },
        platform: { ...platform, topServices: top },
        generatedAt: new Date(now).toISOString()
      }
    }, traced("Reputation.stats"))

    /** Calls and spend per service and per UTC day over the last `days` days, with the limits left. */
    const usage = Effect.fnUntraced(function* (agentId: string, days: number) {
      const now = yield* Clock.currentTimeMillis
      const from = new Date(utcDayStart(now) - (days - 1) * 86_400_000).toISOString()
      const to = new Date(now + 1).toISOString()
      const u = yield* store.usage(agentId, from, to)
      const w = yield* wallet.view(agentId)
      return {
        agentId,
        from,
        to: new Date(now).toISOString(),
        byService: u.byService.map((r) => ({ serviceId: r.key, serviceName: r.label, calls: r.calls, spentCents: r.spentCents })),
        byDay: u.byDay.map((r) => ({ day: r.key, calls: r.calls, spentCents: r.spentCents })),
        totals: { calls: u.byService.reduce((s, r) => s + r.calls, 0), spentCents: u.byService.reduce((s, r) => s + r.spentCents, 0) },
        limits: {
          perTransactionLimitCents: w.policies.perTransactionLimitCents,
          dailyLimitCents: w.policies.dailyLimitCents,
          remainingTodayCents: w.remainingTodayCents,
          monthlyLimitCents: w.policies.monthlyLimitCents,
          remainingThisMonthCents: w.remainingThisMonthCents
        }
      }
    }, traced("Reputation.usage"))

    /**
     * Ranks listed services for a buyer (docs/commerce.md, "Recommendations"): services the wallet
     * policy forbids are left out; each remaining one is scored on its cheapest tier within the
     * per-transaction limit: fit 30 + rating 25 + seller reputation 25 + price 20 = 100.
     */
    const recommend = Effect.fnUntraced(function* (agentId: string, q: { readonly category?: string; readonly limit?: number }) {
      const now = yield* Clock.currentTimeMillis
      const policy = yield* wallet.policyOf(agentId)
      const history = yield* store.categoryHistory(agentId)
      const bought = history.reduce((s, h) => s + h.count, 0)
      const limit = q.limit ?? 5
      const listed = yield* catalog.ranked({
        category: q.category,
        excludeSeller: agentId,
        sellers: policy.allowedSellers,
        categories: policy.allowedCategories,
        maxTierCents: policy.perTransactionLimitCents,
        limit: recommendCandidates(limit)
      })
      const candidates = listed.flatMap((service) => {
        const tiers = service.tiers.filter((t) => policy.perTransactionLimitCents === null || t.priceCents <= policy.perTransactionLimitCents)
        if (tiers.length === 0) return []
        const tier = tiers.reduce((a, b) => (b.priceCents < a.priceCents ? b : a))
        return [{ service, tier }]
      })
      const sellers = [...new Set(candidates.map((c) => c.service.sellerAgentId))]
      const inputs = new Map((yield* store.reputationInputs(sellers)).map((i) => [i.agentId, i]))
      const { views } = yield* computeMany(sellers.map((s) => inputs.get(s) ?? emptyInputs(s)), now)
      const reps = new Map(views.map((r) => [r.agentId, r] as const))
      const cheapest = new Map<string, number>()
      for (const c of candidates) cheapest.set(c.service.category, Math.min(cheapest.get(c.service.category) ?? Infinity, c.tier.priceCents))
      const round2 = (n: number) => Math.round(n * 100) / 100
      const scored = candidates.map(({ service, tier }) => {
        const share = bought === 0 ? null : (history.find((h) => h.category === service.category)?.count ?? 0) / bought
        const fit = share === null ? 15 : 30 * share
        const bayes = ((service.rating ?? 0) * service.reviewCount + 3 * 2) / (service.reviewCount + 2)
        const rating = (25 * (bayes - 1)) / 4
        const rep = reps.get(service.sellerAgentId)!
        const sellerReputation = (25 * rep.score) / 1000
        const low = cheapest.get(service.category)!
        const price = tier.priceCents === 0 ? 20 : (20 * low) / tier.priceCents
        const reasons = [
          share === null ? "no purchase history yet: neutral fit" : `${Math.round(share * 100)}% of your ${bought} purchases were ${service.category}`,
          service.rating === null ? "not rated yet" : `rated ${service.rating} from ${service.reviewCount} reviews`,
          `seller ${service.sellerAgentId} is ${rep.band} (${rep.score}/1000)`,
          tier.priceCents === low ? `${tier.name} at ${tier.priceCents} cents per ${tier.unit} is the cheapest ${service.category} offer you may buy` : `${tier.name} at ${tier.priceCents} cents per ${tier.unit} (cheapest ${service.category} offer: ${low})`,
          policy.perTransactionLimitCents === null ? "no per-transaction limit on your wallet" : `within your per-transaction limit of ${policy.perTransactionLimitCents} cents`
        ]
        const factors = { fit: round2(fit), rating: round2(rating), sellerReputation: round2(sellerReputation), price: round2(price) }
        return { score: round2(fit + rating + sellerReputation + price), service, tierId: tier.id, priceCents: cents(tier.priceCents), factors, reasons }
      })
      scored.sort((a, b) => b.score - a.score || a.service.id.localeCompare(b.service.id))
      return {
        formula: "score = fit 30·(share of your purchases in the category; 15 without history) + rating 25·(b−1)/4 + seller reputation 25·score/1000 + price 20·cheapest/price",
        data: scored.slice(0, limit).map((s, i) => ({ rank: i + 1, ...s }))
      }
    }, traced("Reputation.recommend"))

    return { reputationOf, leaderboard, stats, usage, recommend } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Reputation, Reputation.make).pipe(Layer.provide([Catalog.layer, Keys.layer, Wallet.layer]))
}
