// In-memory CatalogStore: the services, their pages over the catalogue's indexes
// (catalogIndex.memory.ts), ratings, the ranking the recommendations read, and delivery stats.
import { Effect, Layer } from "effect"
import { type DeliveryRecord } from "../../schema/commerce/transactions.js"
import { rankOf } from "../../schema/commerce/filters.js"
import { searchText, type ServiceRecord } from "../../schema/commerce/services.js"
import { keepRecord } from "../../schema/commerce/serviceView.js"
import { CatalogStore, type TierDeliveryStats } from "../../services/commerce/CatalogStore.js"
import {
  byRankThenId,
  CATALOGUE_CANDIDATES,
  firstAfter,
  indexService,
  p95,
  priceCandidates,
  rankService,
  walkedIds
} from "./catalogIndex.memory.js"
import { commerceTables } from "../storage/memory/commerceTables.js"

export const MemoryCatalogStore = Layer.effect(
  CatalogStore,
  Effect.map(commerceTables, (t) => ({
    upsertSeed: (rows) =>
      Effect.forEach(
        rows,
        (r) => {
          const existing = t.services.get(r.id)
          const next = existing
            ? { ...r, ratingSum: existing.ratingSum, ratingCount: existing.ratingCount, createdAt: existing.createdAt }
            : r
          return Effect.andThen(t.services.set(r.id, keepRecord(next)), indexService(t, existing, next))
        },
        { discard: true }
      ),
    insert: (r) =>
      Effect.suspend(() => {
        const before = t.services.get(r.id)
        return Effect.andThen(t.services.set(r.id, keepRecord(r)), indexService(t, before, r))
      }),
    update: (r) =>
      Effect.suspend(() => {
        const current = t.services.get(r.id)
        const next = current ? { ...r, ratingSum: current.ratingSum, ratingCount: current.ratingCount } : r
        return Effect.andThen(t.services.set(r.id, keepRecord(next)), indexService(t, current, next))
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
        const ids = walkedIds(
          t,
          t.serviceOrder.get(
            f.sellerId !== undefined
              ? `seller|${f.sellerId}`
              : f.category !== undefined
                ? `category|${f.category}`
                : "all"
          ) ?? [],
          q
        )
        const start = firstAfter(ids, f.afterId)
        let candidates: ReadonlyArray<string> | undefined
        const budget = Math.min(CATALOGUE_CANDIDATES, ids.length - start)
        if (f.minPriceCents !== undefined || f.maxPriceCents !== undefined) {
          const priced = priceCandidates(
            t,
            f.minPriceCents ?? Number.NEGATIVE_INFINITY,
            f.maxPriceCents ?? Number.POSITIVE_INFINITY,
            budget
          )
          if (priced !== undefined && (candidates === undefined || priced.length < candidates.length))
            candidates = priced
        }
        if (candidates !== undefined) {
          // The candidates' ids in order (the default sort compares strings as `<` does), then the
          // services read until the page is full: the page's rows, not every candidate's.
          const ordered = (
            f.afterId === undefined ? [...candidates] : candidates.filter((id) => id > f.afterId!)
          ).sort()
          const out: Array<ServiceRecord> = []
          for (let i = 0; i < ordered.length && out.length < f.limit; i++) {
            const s = t.services.get(ordered[i])!
            if (matches(s)) out.push(s)
          }
          return out
        }
        const out: Array<ServiceRecord> = []
        for (let i = start; i < ids.length && out.length < f.limit; i++) {
          const s = t.services.get(ids[i])!
          if (matches(s)) out.push(s)
        }
        return out
      }),
    addRating: (id, rating, reviews = 1) =>
      Effect.suspend(() => {
        const s = t.services.get(id)
        if (s === undefined) return Effect.void
        const next = { ...s, ratingSum: s.ratingSum + reviews * rating, ratingCount: s.ratingCount + reviews }
        return Effect.andThen(t.services.set(id, keepRecord(next)), rankService(t, s, next))
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
          const rows = [...new Set(f.sellers)]
            .flatMap((seller) => (t.serviceOrder.get(`seller|${seller}`) ?? []).map((id) => t.services.get(id)!))
            .filter(keep)
          return rows
            .map((s) => ({ s, e: { rank: rankOf(s), id: s.id } }))
            .sort((a, b) => byRankThenId(a.e, b.e))
            .slice(0, f.limit)
            .map((x) => x.s)
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
        // Each delivery with the promise its purchase was sold under (its tier's as it is now when the
        // purchase kept none); only the deliveries that count against the seller.
        const byTier = new Map<string, Array<{ d: DeliveryRecord; p95: number; uptime: number }>>()
        const service = t.services.get(serviceId)
        for (const id of t.deliveriesByService.get(serviceId) ?? []) {
          const d = t.deliveries.get(id)!
          if (d.deliveredAt < since || d.accountable === false) continue
          const tx = t.txs.get(id)
          const now = service?.tiers.find((x) => x.id === d.tierId)?.sla
          const p95 = tx?.promisedP95LatencyMs ?? now?.p95LatencyMs ?? Number.POSITIVE_INFINITY
          const uptime = tx?.promisedUptimePct ?? now?.uptimePct ?? 0
          byTier.set(d.tierId, [...(byTier.get(d.tierId) ?? []), { d, p95, uptime }])
        }
        return [...byTier].map(([tierId, ds]): TierDeliveryStats => ({
          tierId,
          deliveries: ds.length,
          successes: ds.filter((x) => x.d.success).length,
          p95LatencyMs: p95(ds.map((x) => x.d.latencyMs)),
          withinPromise: ds.filter((x) => x.d.latencyMs <= x.p95).length,
          expectedSuccesses: ds.reduce((sum, x) => sum + x.uptime, 0) / 100
        }))
      })
  }))
)
