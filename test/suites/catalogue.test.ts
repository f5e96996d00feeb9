// The catalogue's pages on every storage give exactly what the filters define, in id order, across
// pages: category, seller, pricing model, price bands (some tier within), rating, `q` — also after
// a service moves category, changes its tiers or is unlisted (the memory store's ordered indexes
// and the SQL stores' tier-price columns and trigram index must follow every write).
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { searchText, type ServiceFilter, type ServiceRecord } from "../../src/schema/commerce.js"
import { CatalogStore } from "../../src/services/Catalog.js"
import { forEachStorage } from "../fixtures/suite.js"

const tier = (id: string, priceCents: number) => ({ id, name: id, priceCents, unit: "call", includedUnits: null, sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" } })

const service = (i: number): ServiceRecord =>
  ({
    id: `svcq${String(i).padStart(4, "0")}`,
    sellerAgentId: `agtq${i % 4}`,
    name: `Catalogue ${i}`,
    description: i % 5 === 0 ? "weather forecast feed" : i % 7 === 0 ? "Translation 100% off_peak" : "plain data",
    category: `qcat${i % 3}`,
    pricingModel: i % 2 === 0 ? "per_call" : "monthly",
    tags: i % 6 === 0 ? ["Forecast"] : [],
    tiers: [tier("a", 10 * (i % 9) + 1), ...(i % 4 === 0 ? [tier("b", 500 + i)] : [])],
    negotiation: { floorPct: 80, counterStepPct: 20 },
    status: "active",
    ratingSum: (i % 5) * 3,
    ratingCount: i % 5 === 0 ? 0 : 3,
    createdAt: "2026-11-25T00:00:00.000Z",
    updatedAt: "2026-11-25T00:00:00.000Z"
  }) as unknown as ServiceRecord

/** What a filter means (docs/commerce.md), over every row, in id order. */
const reference = (rows: ReadonlyArray<ServiceRecord>, f: Omit<ServiceFilter, "limit" | "afterId">) =>
  rows
    .filter((s) => s.status === "active")
    .filter((s) => f.category === undefined || s.category === f.category)
    .filter((s) => f.pricingModel === undefined || s.pricingModel === f.pricingModel)
    .filter((s) => f.sellerId === undefined || s.sellerAgentId === f.sellerId)
    .filter((s) => f.minPriceCents === undefined || s.tiers.some((x) => x.priceCents >= f.minPriceCents!))
    .filter((s) => f.maxPriceCents === undefined || s.tiers.some((x) => x.priceCents <= f.maxPriceCents!))
    .filter((s) => f.minRating === undefined || (s.ratingCount > 0 && s.ratingSum / s.ratingCount >= f.minRating))
    .filter((s) => f.q === undefined || searchText(s).includes(f.q.toLowerCase()))
    .map((s) => s.id)
    .sort()

forEachStorage(
  "catalogue pages",
  (storage) => Layer.mergeAll(storage),
  (it) => {
    it.effect("every filter, paged 7 at a time, equals its definition; after category, tier and status changes too", () =>
      Effect.gen(function* () {
        const store = yield* CatalogStore
        const rows = new Map<string, ServiceRecord>()
        // Inserted out of id order, so the ordered indexes are exercised.
        for (const i of [...Array(60).keys()].map((k) => (k * 37) % 60)) {
          const s = service(i)
          rows.set(s.id, s)
          yield* store.insert(s)
        }
        const pagesOf = (f: Omit<ServiceFilter, "limit" | "afterId">) =>
          Effect.gen(function* () {
            const out: Array<string> = []
            let afterId: string | undefined
            for (;;) {
              const page = yield* store.list({ ...f, afterId, limit: 7 })
              out.push(...page.map((s) => s.id).filter((id) => id.startsWith("svcq")))
              if (page.length < 7) return out
              afterId = page[page.length - 1].id
            }
          })
        const filters: ReadonlyArray<Omit<ServiceFilter, "limit" | "afterId">> = [
          {},
          { category: "qcat1" },
          { sellerId: "agtq2" },
          { sellerId: "agtq1", category: "qcat0" },
          { pricingModel: "monthly" },
          { minPriceCents: 50 },
          { maxPriceCents: 30 },
          { minPriceCents: 40, maxPriceCents: 45 },
          { minPriceCents: 520, maxPriceCents: 10 },
          { minRating: 2.5 },
          { q: "forecast" },
          { q: "100%" },
          { q: "off_peak" },
          { q: "FORECAST", category: "qcat2", maxPriceCents: 60 }
        ]
        const check = Effect.forEach(filters, (f) =>
          Effect.map(pagesOf(f), (got) => expect(got, JSON.stringify(f)).toEqual(reference([...rows.values()], f)))
        )
        yield* check
        // Writes move rows between indexes: a new category and tiers, a renamed description, an unlisted one.
        const moved = { ...rows.get("svcq0004")!, category: "qcat2", tiers: [tier("z", 9_999)], description: "now a forecast" } as unknown as ServiceRecord
        const unlisted: ServiceRecord = { ...rows.get("svcq0005")!, status: "inactive" }
        for (const s of [moved, unlisted]) {
          rows.set(s.id, s)
          yield* store.update(s)
        }
        yield* check
        expect(yield* pagesOf({ category: "qcat1" })).not.toContain("svcq0004")
        expect(yield* pagesOf({ minPriceCents: 9_000 })).toEqual(["svcq0004"])
      })
    )
  }
)
