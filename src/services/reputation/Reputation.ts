// Reputation (0–1000 from reviews, disputes, volume and tenure), the leaderboard, commerce
// analytics (stats, usage) and recommendations — all read-side, from one analytics port
// (AnalyticsStore.ts); the formula is policy.ts.
import { AppConfig } from "../platform/AppConfig.js"
import { Clock, Context, Effect, Layer } from "effect"
import { cents } from "../../schema/platform/common.js"
import type { Leaderboard, Reputation as ReputationView, ReputationInputs } from "../../schema/reputation/reputation.js"
import type { Stats, Usage } from "../../schema/commerce/analytics.js"
import type { Recommendations } from "../../schema/commerce/services.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { Catalog } from "../commerce/Catalog.js"
import { traced } from "../platform/Tracing.js"
import type { Agent } from "../../schema/keys/keys.js"
import { Keys } from "../keys/Keys.js"
import { Wallet } from "../wallet/Wallet.js"
import { utcDayStart } from "../../schema/wallet/policy.js"
import { AnalyticsStore } from "./AnalyticsStore.js"
import {
  BANDS,
  bandOf,
  emptyInputs,
  RECOMMEND_FORMULA,
  recommendCandidates,
  REPUTATION_FORMULA,
  REPUTATION_MAX,
  reputationScore
} from "./policy.js"

export interface ReputationService {
  /** An agent's reputation (an agent with no history scores from empty inputs). */
  readonly reputationOf: (agentId: string) => Effect.Effect<ReputationView, StorageUnavailable>
  /** The `limit` best reputations of every agent that sold, bought or lists a service. */
  readonly leaderboard: (limit: number) => Effect.Effect<typeof Leaderboard.Type, StorageUnavailable>
  /** The agent's purchases and sales beside the platform's totals. */
  readonly stats: (agentId: string) => Effect.Effect<typeof Stats.Type, StorageUnavailable>
  /** Calls and spend per service and per UTC day over the last `days` days, with the limits left. */
  readonly usage: (agentId: string, days: number) => Effect.Effect<typeof Usage.Type, StorageUnavailable>
  /** Listed services ranked for a buyer, with each score's factors and reasons. */
  readonly recommend: (
    agentId: string,
    q: { readonly category?: string; readonly limit?: number }
  ) => Effect.Effect<typeof Recommendations.Type, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* AnalyticsStore
  const keys = yield* Keys
  const catalog = yield* Catalog
  const wallet = yield* Wallet
  const config = yield* AppConfig

  /**
   * Platform-wide figures (the platform half of /stats, its top services, the leaderboard) read
   * every transaction of the system, whoever asks: they are reused in process for
   * PLATFORM_STATS_TTL_SECONDS (default 10 s, wall clock), so an agent's request does not cost a scan of
   * everyone's history each time (docs/commerce.md "Analytics"). Per-agent figures are never
   * reused. Only successes are kept.
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
    const averageRating =
      inputs.reviewsReceived === 0 ? null : Math.round((inputs.ratingSum / inputs.reviewsReceived) * 100) / 100
    return {
      agentId: inputs.agentId,
      score: r.score,
      band,
      nextBand: next ? { band: next.band, atScore: next.from } : null,
      factors: {
        reviews: { points: r.reviews, max: REPUTATION_MAX.reviews, count: inputs.reviewsReceived, averageRating },
        disputes: {
          points: r.disputes,
          max: REPUTATION_MAX.disputes,
          lost: inputs.disputesLost,
          completedDeals: inputs.completedDeals
        },
        volume: { points: r.volume, max: REPUTATION_MAX.volume, volumeCents: inputs.volumeCents },
        tenure: { points: r.tenure, max: REPUTATION_MAX.tenure, days: r.days }
      },
      formula: REPUTATION_FORMULA
    }
  }

  const compute = (inputs: ReputationInputs, now: number) =>
    Effect.map(Effect.option(keys.getAgent(inputs.agentId)), (a) =>
      view(inputs, a._tag === "Some" ? a.value : undefined, now)
    )

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
      byService: u.byService.map((r) => ({
        serviceId: r.key,
        serviceName: r.label,
        calls: r.calls,
        spentCents: r.spentCents
      })),
      byDay: u.byDay.map((r) => ({ day: r.key, calls: r.calls, spentCents: r.spentCents })),
      totals: {
        calls: u.byService.reduce((s, r) => s + r.calls, 0),
        spentCents: u.byService.reduce((s, r) => s + r.spentCents, 0)
      },
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
  const recommend = Effect.fnUntraced(function* (
    agentId: string,
    q: { readonly category?: string; readonly limit?: number }
  ) {
    const now = yield* Clock.currentTimeMillis
    const policy = yield* wallet.policyOf(agentId)
    const history = yield* store.categoryHistory(agentId)
    const bought = history.reduce((s, h) => s + h.count, 0)
    const limit = q.limit ?? 5
    const maxCents = policy.perTransactionLimitCents
    const listed = yield* catalog.ranked({
      category: q.category,
      excludeSeller: agentId,
      sellers: policy.allowedSellers,
      categories: policy.allowedCategories,
      maxTierCents: maxCents,
      limit: recommendCandidates(limit)
    })
    const candidates = listed.flatMap((service) => {
      const tiers = service.tiers.filter((t) => maxCents === null || t.priceCents <= maxCents)
      if (tiers.length === 0) return []
      const tier = tiers.reduce((a, b) => (b.priceCents < a.priceCents ? b : a))
      return [{ service, tier }]
    })
    const sellers = [...new Set(candidates.map((c) => c.service.sellerAgentId))]
    const inputs = new Map((yield* store.reputationInputs(sellers)).map((i) => [i.agentId, i]))
    const { views } = yield* computeMany(
      sellers.map((s) => inputs.get(s) ?? emptyInputs(s)),
      now
    )
    const reps = new Map(views.map((r) => [r.agentId, r] as const))
    const cheapest = new Map<string, number>()
    for (const c of candidates) {
      cheapest.set(c.service.category, Math.min(cheapest.get(c.service.category) ?? Infinity, c.tier.priceCents))
    }
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
      const offer = `${tier.name} at ${tier.priceCents} cents per ${tier.unit}`
      const reasons = [
        share === null
          ? "no purchase history yet: neutral fit"
          : `${Math.round(share * 100)}% of your ${bought} purchases were ${service.category}`,
        service.rating === null ? "not rated yet" : `rated ${service.rating} from ${service.reviewCount} reviews`,
        `seller ${service.sellerAgentId} is ${rep.band} (${rep.score}/1000)`,
        tier.priceCents === low
          ? `${offer} is the cheapest ${service.category} offer you may buy`
          : `${offer} (cheapest ${service.category} offer: ${low})`,
        maxCents === null
          ? "no per-transaction limit on your wallet"
          : `within your per-transaction limit of ${maxCents} cents`
      ]
      const factors = {
        fit: round2(fit),
        rating: round2(rating),
        sellerReputation: round2(sellerReputation),
        price: round2(price)
      }
      const score = round2(fit + rating + sellerReputation + price)
      return { score, service, tierId: tier.id, priceCents: cents(tier.priceCents), factors, reasons }
    })
    scored.sort((a, b) => b.score - a.score || a.service.id.localeCompare(b.service.id))
    return { formula: RECOMMEND_FORMULA, data: scored.slice(0, limit).map((s, i) => ({ rank: i + 1, ...s })) }
  }, traced("Reputation.recommend"))

  return Reputation.of({ reputationOf, leaderboard, stats, usage, recommend })
})

export class Reputation extends Context.Service<Reputation, ReputationService>()("agent-commerce/Reputation") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Reputation, make).pipe(Layer.provide([Catalog.layer, Keys.layer, Wallet.layer]))
}
