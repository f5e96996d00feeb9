// The catalogue's pages on every storage give exactly what the filters define, in id order, across
// pages: category, seller, pricing model, price bands (some tier within), rating, `q` — also after
// a service moves category, changes its tiers or is unlisted, or a unit of work that wrote one
// fails (the memory store's ordered, trigram and price indexes and the SQL stores' tier-price
// columns and trigram index must follow every write).
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { ServiceFilter } from "../../src/schema/commerce/filters.js"
import type { ServiceRecord } from "../../src/schema/commerce/services.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { atomically } from "../fixtures/atomically.js"
import { forEachStorage } from "../fixtures/suite.js"

const tier = (id: string, priceCents: number) => ({
  id,
  name: id,
  priceCents,
  unit: "call",
  includedUnits: null,
  sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
})

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
    fulfilment: { mode: "pull", url: null, secret: null },
    createdAt: "2026-11-25T00:00:00.000Z",
    updatedAt: "2026-11-25T00:00:00.000Z"
  }) as unknown as ServiceRecord

/** `q` as docs/commerce.md states it: a case-insensitive substring of the name, the description, the category or a tag. */
const matchesText = (s: ServiceRecord, q: string) =>
  [s.name, s.description, s.category, ...s.tags].some((field) => field.toLowerCase().includes(q.toLowerCase()))

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
    .filter((s) => f.q === undefined || matchesText(s, f.q))
    .map((s) => s.id)
    .sort()

forEachStorage(
  "catalogue pages",
  (storage) => Layer.mergeAll(storage),
  (it) => {
    it.effect(
      "every filter, paged 7 at a time, equals its definition; after category, tier and status changes too",
      () =>
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
            { q: "FORECAST", category: "qcat2", maxPriceCents: 60 },
            // The memory store's trigram and price indexes: rare words, no match, shorter than a
            // trigram, narrow bands (single-tier and two-tier spans), bands open on one side, combined.
            { q: "weather" },
            { q: "zeppelin" },
            { q: "fo" },
            { q: "a feed" },
            { q: "n 10% o" },
            { minPriceCents: 11, maxPriceCents: 11 },
            { minPriceCents: 505, maxPriceCents: 520 },
            { minPriceCents: 300, maxPriceCents: 400 },
            { minPriceCents: 540 },
            { maxPriceCents: 1 },
            { q: "forecast", minPriceCents: 40, maxPriceCents: 60 },
            { q: "plain", sellerId: "agtq3", minPriceCents: 20, maxPriceCents: 22 }
          ]
          const check = Effect.forEach(filters, (f) =>
            Effect.map(pagesOf(f), (got) => expect(got, JSON.stringify(f)).toEqual(reference([...rows.values()], f)))
          )
          yield* check
          // Writes move rows between indexes: a new category and tiers, a renamed description, an unlisted one.
          const moved = {
            ...rows.get("svcq0004")!,
            category: "qcat2",
            tiers: [tier("z", 9_999)],
            description: "now a forecast"
          } as unknown as ServiceRecord
          const unlisted: ServiceRecord = { ...rows.get("svcq0005")!, status: "inactive" }
          for (const s of [moved, unlisted]) {
            rows.set(s.id, s)
            yield* store.update(s)
          }
          yield* check
          expect(yield* pagesOf({ category: "qcat1" })).not.toContain("svcq0004")
          expect(yield* pagesOf({ minPriceCents: 9_000 })).toEqual(["svcq0004"])
          // Listed again with new words and a new price; a unit of work that fails leaves no trace in any index.
          const relisted = {
            ...unlisted,
            status: "active",
            description: "zeppelin rides",
            tiers: [tier("y", 7_777)]
          } as unknown as ServiceRecord
          rows.set(relisted.id, relisted)
          yield* store.update(relisted)
          const failed = {
            ...service(99),
            id: "svcq9999",
            description: "zeppelin cargo",
            tiers: [tier("x", 7_778)]
          } as unknown as ServiceRecord
          yield* Effect.exit(atomically(Effect.andThen(store.insert(failed), Effect.fail("rolled back"))))
          yield* check
          expect(yield* pagesOf({ q: "zeppelin" })).toEqual(["svcq0005"])
          expect(yield* pagesOf({ minPriceCents: 7_000, maxPriceCents: 8_000 })).toEqual(["svcq0005"])
        })
    )

    it.effect(
      "a word in more services than an index keeps ids for, then in fewer (unlisted): pages still equal their definition",
      () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          const rows: Array<ServiceRecord> = []
          // 2,100 services share "wordy"; one in 300 also says "quixotic"; prices 1–2,100 (one tier each).
          for (let i = 0; i < 2_100; i++) {
            const s = {
              ...service(i),
              id: `svcw${String(i).padStart(5, "0")}`,
              sellerAgentId: "agtw",
              category: "wcat",
              description: i % 300 === 7 ? "wordy quixotic" : "wordy text",
              tiers: [tier("a", 1 + i)]
            } as unknown as ServiceRecord
            rows.push(s)
            yield* store.insert(s)
          }
          const pagesOf = (f: Omit<ServiceFilter, "limit" | "afterId">) =>
            Effect.gen(function* () {
              const out: Array<string> = []
              let afterId: string | undefined
              for (;;) {
                const page = yield* store.list({ ...f, category: "wcat", afterId, limit: 50 })
                out.push(...page.map((x) => x.id))
                if (page.length < 50) return out
                afterId = page[page.length - 1].id
              }
            })
          const filters: ReadonlyArray<Omit<ServiceFilter, "limit" | "afterId">> = [
            { q: "wordy" },
            { q: "quixotic" },
            { q: "wordy quix" },
            { minPriceCents: 1_000, maxPriceCents: 1_010 },
            { minPriceCents: 2 },
            { q: "wordy", maxPriceCents: 30 }
          ]
          const check = Effect.forEach(filters, (f) =>
            Effect.map(pagesOf(f), (got) =>
              expect(got, JSON.stringify(f)).toEqual(reference(rows, { ...f, category: "wcat" }))
            )
          )
          yield* check
          // Unlist 200: "wordy" is in fewer services (each trigram list loses them).
          for (let i = 0; i < 200; i++) {
            rows[i] = { ...rows[i], status: "inactive" } as ServiceRecord
            yield* store.update(rows[i])
          }
          yield* check
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "a common word spread through the catalogue: cursor pages are exactly its id-ordered matches, after its text changes, unlisting and relisting too",
      () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          const rows = new Map<string, ServiceRecord>()
          // 2,500 services inserted out of id order; 1 in 25 is a "daily forecast digest". Every trigram
          // of "forecast" is also in the others' "forest recast", so its rarest list is the catalogue.
          for (const i of [...Array(2_500).keys()].map((k) => (k * 7_919) % 2_500)) {
            const s = {
              ...service(i),
              id: `svcc${String(i).padStart(5, "0")}`,
              sellerAgentId: `agtc${i % 7}`,
              category: `ccat${i % 4}`,
              description: i % 25 === 3 ? "daily forecast digest" : `plain forest recast text ${i % 97}`,
              tags: []
            } as unknown as ServiceRecord
            rows.set(s.id, s)
            yield* store.insert(s)
          }
          const pagesOf = (f: Omit<ServiceFilter, "limit" | "afterId">, limit: number) =>
            Effect.gen(function* () {
              const out: Array<string> = []
              let afterId: string | undefined
              for (;;) {
                const page = yield* store.list({ ...f, afterId, limit })
                expect(page.length).toBeLessThanOrEqual(limit)
                out.push(...page.map((x) => x.id).filter((id) => id.startsWith("svcc")))
                if (page.length < limit) return out
                afterId = page[page.length - 1].id
              }
            })
          const filters: ReadonlyArray<Omit<ServiceFilter, "limit" | "afterId">> = [
            { q: "forecast" },
            { q: "Forecast", pricingModel: "monthly" },
            { q: "forecast", minRating: 2 },
            { q: "forecast", category: "ccat3" },
            { q: "forecast", sellerId: "agtc2" },
            { q: "forecast", minPriceCents: 30, maxPriceCents: 60 },
            { q: "cast dig" },
            { q: "recast text 4" },
            { q: "relisted" },
            { q: "zyxwv" }
          ]
          const check = Effect.gen(function* () {
            for (const f of filters)
              expect(yield* pagesOf(f, 20), JSON.stringify(f)).toEqual(reference([...rows.values()], f))
            expect(yield* pagesOf({ q: "forecast" }, 1), "pages of one").toEqual(
              reference([...rows.values()], { q: "forecast" })
            )
          })
          yield* check
          expect((yield* pagesOf({ q: "forecast" }, 20)).length).toBe(100)
          const write = (s: ServiceRecord) => {
            rows.set(s.id, s)
            return store.update(s)
          }
          // Text changed both ways, unlisted (with and without the word), relisted with a new word.
          for (let i = 3; i < 2_500; i += 25 * 4)
            yield* write({ ...rows.get(`svcc${String(i).padStart(5, "0")}`)!, description: "no longer a fore cast" })
          for (let i = 10; i < 2_500; i += 250)
            yield* write({ ...rows.get(`svcc${String(i).padStart(5, "0")}`)!, description: "a new forecast service" })
          for (let i = 28; i < 2_500; i += 50)
            yield* write({ ...rows.get(`svcc${String(i).padStart(5, "0")}`)!, status: "inactive" })
          for (let i = 28; i < 2_500; i += 200)
            yield* write({
              ...rows.get(`svcc${String(i).padStart(5, "0")}`)!,
              status: "active",
              description: "relisted forecast feed"
            })
          // A write rolled back leaves the memory store's lists as they were.
          const kept = rows.get("svcc00053")!
          yield* Effect.exit(
            atomically(
              Effect.andThen(
                store.update({ ...kept, description: "relisted forecast (rolled back)" }),
                Effect.fail("rolled back")
              )
            )
          )
          yield* check
          expect(yield* pagesOf({ q: "relisted" }, 20)).toEqual([
            "svcc00028",
            "svcc00228",
            "svcc00428",
            "svcc00628",
            "svcc00828",
            "svcc01028",
            "svcc01228",
            "svcc01428",
            "svcc01628",
            "svcc01828",
            "svcc02028",
            "svcc02228",
            "svcc02428"
          ])
        }),
      { timeout: 120_000 }
    )
  }
)
