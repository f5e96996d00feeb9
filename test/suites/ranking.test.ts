// The recommendations' kept ranking (issue 23, docs/commerce.md "Recommendations") on every
// storage: CatalogStore.ranked gives exactly the listed services its definition orders — the
// Bayesian mean of their stars, (Σ + 3·2)/(n + 2), highest first, then id — with a wallet policy
// applied, and follows every write that moves a service in it (a review, a new category, unlisting,
// a unit of work that fails). On the SQL stores, EXPLAIN at 100k services shows the candidates are
// read from the rank indexes (migration 0020) without a sort of the catalogue.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { rankedPage } from "../../src/layers/commerce/CatalogStore.postgres.js"
import type { RankedFilter } from "../../src/schema/commerce/filters.js"
import type { ServiceRecord } from "../../src/schema/commerce/services.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { atomically } from "../fixtures/atomically.js"
import { recommendCandidates } from "../../src/services/reputation/policy.js"
import { explain } from "../fixtures/explain.js"
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
    id: `svcr${String(i).padStart(4, "0")}`,
    sellerAgentId: `agtr${i % 5}`,
    name: `Ranked ${i}`,
    description: "ranked",
    category: `rcat${i % 3}`,
    pricingModel: "per_call",
    tags: [],
    tiers: [tier("a", 5 + (i % 11) * 10), ...(i % 4 === 0 ? [tier("b", 2 + i)] : [])],
    negotiation: { floorPct: 80, counterStepPct: 20 },
    status: "active",
    // Ratings chosen so that many services tie (same sum and count) and ties fall back to id.
    ratingSum: (i % 6) * (i % 4),
    ratingCount: i % 4,
    fulfilment: { mode: "pull", url: null, secret: null },
    createdAt: "2026-11-25T00:00:00.000Z",
    updatedAt: "2026-11-25T00:00:00.000Z"
  }) as unknown as ServiceRecord

/** The ranking key as docs/commerce.md states it: the Bayesian mean of the stars, b = (Σ stars + 3·2)/(n + 2). */
const bayesianMean = (s: ServiceRecord) => (s.ratingSum + 3 * 2) / (s.ratingCount + 2)

/** What RankedFilter means, over every row. */
const reference = (rows: Iterable<ServiceRecord>, f: RankedFilter) =>
  [...rows]
    .filter((s) => s.status === "active")
    .filter((s) => f.category === undefined || s.category === f.category)
    .filter((s) => s.sellerAgentId !== f.excludeSeller)
    .filter((s) => f.sellers === null || f.sellers.includes(s.sellerAgentId))
    .filter((s) => f.categories === null || f.categories.includes(s.category))
    .filter((s) => f.maxTierCents === null || s.tiers.some((t) => t.priceCents <= f.maxTierCents!))
    .sort((a, b) => bayesianMean(b) - bayesianMean(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, f.limit)
    .map((s) => s.id)

const any: RankedFilter = { sellers: null, categories: null, maxTierCents: null, limit: 20 }

forEachStorage(
  "recommendations' kept ranking",
  (storage) => Layer.mergeAll(storage),
  (it) => {
    it.effect(
      "a worked example: ten 4-star reviews outrank one 5-star review, no review counts as 3 stars, ties go by id",
      () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          // [id, Σ stars, reviews] → b = (Σ + 6)/(n + 2), worked by hand.
          const rated: ReadonlyArray<readonly [string, number, number]> = [
            ["svrk_a", 0, 0], //  6/2  = 3
            ["svrk_b", 5, 1], // 11/3  ≈ 3.67
            ["svrk_c", 10, 2], // 16/4 = 4
            ["svrk_d", 40, 10], // 46/12 ≈ 3.83
            ["svrk_e", 1, 1], //  7/3  ≈ 2.33
            ["svrk_f", 6, 2] // 12/4  = 3, tied with svrk_a
          ]
          for (const [id, ratingSum, ratingCount] of rated)
            yield* store.insert({ ...service(0), id, sellerAgentId: "agtrk", ratingSum, ratingCount } as ServiceRecord)
          const got = yield* store.ranked({ ...any, sellers: ["agtrk"], limit: 10 })
          expect(got.map((s) => s.id)).toEqual(["svrk_c", "svrk_d", "svrk_b", "svrk_a", "svrk_f", "svrk_e"])
        })
    )

    it.effect(
      "ranked equals its definition for every policy shape, and follows reviews, moves, unlisting and a failed unit of work",
      () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          const rows = new Map<string, ServiceRecord>()
          // Inserted out of id order, so the ordered indexes are exercised.
          for (const i of [...Array(90).keys()].map((k) => (k * 37) % 90)) {
            const s = service(i)
            rows.set(s.id, s)
            yield* store.insert(s)
          }
          const ours = (ids: ReadonlyArray<string>) => ids.filter((id) => id.startsWith("svcr"))
          const filters: ReadonlyArray<RankedFilter> = [
            any,
            { ...any, limit: 200 },
            { ...any, category: "rcat1" },
            { ...any, excludeSeller: "agtr2" },
            { ...any, sellers: ["agtr1", "agtr3", "agtr1"] },
            { ...any, sellers: ["agtr4"], category: "rcat0", limit: 3 },
            { ...any, sellers: [] },
            { ...any, categories: ["rcat0", "rcat2"] },
            { ...any, categories: [] },
            { ...any, maxTierCents: 20 },
            { ...any, maxTierCents: 4 },
            {
              category: "rcat2",
              excludeSeller: "agtr0",
              sellers: ["agtr0", "agtr1", "agtr2"],
              categories: ["rcat2"],
              maxTierCents: 60,
              limit: 5
            }
          ]
          const check = Effect.forEach(filters, (f) =>
            Effect.map(store.ranked({ ...f, limit: f.limit + 50 }), (got) =>
              // Other suites' services may share the store: compare ours, in order.
              expect(ours(got.map((s) => s.id)).slice(0, f.limit), JSON.stringify(f)).toEqual(
                reference(rows.values(), f)
              )
            )
          )
          yield* check
          // A review lifts a service from the bottom of its ties to the top of the ranking.
          const last = reference(rows.values(), { ...any, limit: 200 }).at(-1)!
          for (const stars of Array<number>(30).fill(5)) {
            yield* store.addRating(last, stars)
            const r = rows.get(last)!
            rows.set(last, { ...r, ratingSum: r.ratingSum + stars, ratingCount: r.ratingCount + 1 })
          }
          yield* check
          expect(ours((yield* store.ranked({ ...any, limit: 200 })).map((s) => s.id))[0]).toBe(last)
          // A new category (the rating kept by update), and an unlisted one.
          const moved = { ...rows.get("svcr0004")!, category: "rcat2" } as ServiceRecord
          const unlisted = { ...rows.get(last)!, status: "inactive" } as ServiceRecord
          for (const s of [moved, unlisted]) {
            yield* store.update(s)
            rows.set(s.id, { ...s, ratingSum: rows.get(s.id)!.ratingSum, ratingCount: rows.get(s.id)!.ratingCount })
          }
          yield* check
          expect(ours((yield* store.ranked({ ...any, limit: 200 })).map((s) => s.id))).not.toContain(last)
          // A review inside a unit of work that fails leaves the ranking as it was.
          const top = reference(rows.values(), any)[0]
          const bottom = reference(rows.values(), { ...any, limit: 200 }).at(-1)!
          yield* Effect.exit(
            atomically(
              Effect.andThen(
                Effect.forEach([5, 5, 5, 5, 5, 5], (s) => store.addRating(bottom, s)),
                Effect.fail("rolled back")
              )
            )
          )
          yield* check
          expect(ours((yield* store.ranked(any)).map((s) => s.id))[0]).toBe(top)
        })
    )
  }
)

describe("recommendation candidates", () => {
  it("score 4 candidates per pick, at least 20, at most 100", () => {
    expect([1, 5, 6, 25, 100].map(recommendCandidates)).toEqual([20, 20, 24, 100, 100])
  })
})

forEachStorage(
  "the kept ranking walks its index",
  (storage) => storage,
  (it) => {
    it.effect(
      "at 100k services: the candidates of every policy shape without a seq scan or a sort of the catalogue",
      () =>
        Effect.gen(function* () {
          const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
          // 100k listed services (and 5k unlisted): 50 categories, 2,000 sellers, prices 1–5,000
          // cents; ratings spread so the ranking is not the id order.
          yield* sql.unsafe(`
          INSERT INTO commerce_services (id, seller_agent_id, name, description, category, pricing_model, tags, tiers, negotiation, status, search,
            min_tier_cents, max_tier_cents, rating_sum, rating_count, created_at, updated_at)
          SELECT 'svc_' || lpad(i::text, 6, '0'), 'agt_seller' || (i % 2000), 'Service ' || i, 'ranked', 'cat' || (i % 50), 'per_call', '[]'::jsonb,
            jsonb_build_array(jsonb_build_object('id', 'unit', 'priceCents', 1 + i % 5000)), '{}'::jsonb,
            CASE WHEN i > 100000 THEN 'inactive' ELSE 'active' END, 'service ' || i,
            1 + i % 5000, 1 + i % 5000, (i * 7919) % 50, (i * 7919) % 11, now(), now()
          FROM generate_series(1, 105000) i`)
          yield* sql.unsafe("ANALYZE commerce_services")
          const n = 20
          const cases: ReadonlyArray<readonly [string, RankedFilter]> = [
            ["the whole catalogue", { ...any, limit: n }],
            ["one category", { ...any, category: "cat7", limit: n }],
            [
              "the buyer's own left out, a per-transaction limit",
              { ...any, excludeSeller: "agt_seller3", maxTierCents: 2_500, limit: n }
            ],
            ["allowed categories", { ...any, categories: ["cat1", "cat2"], limit: n }],
            ["two allowed sellers", { ...any, sellers: ["agt_seller1", "agt_seller2"], limit: n }]
          ]
          for (const [what, f] of cases) {
            const plan = yield* explain(sql, rankedPage(sql, f))
            expect(
              plan.filter((p) => p["Node Type"] === "Seq Scan").map((p) => p["Relation Name"]),
              `${what}: sequential scans`
            ).toEqual([])
            for (const s of plan.filter((p) => p["Node Type"].includes("Sort")))
              expect(s["Actual Rows"], `${what}: sorts ${s["Actual Rows"]} rows`).toBeLessThanOrEqual(200)
            const read = plan
              .filter((p) => p["Node Type"].includes("Index"))
              .reduce((s, p) => s + p["Actual Rows"] * p["Actual Loops"], 0)
            expect(read, `${what}: rows read from indexes`).toBeLessThanOrEqual(200)
            const got = yield* rankedPage(sql, f)
            expect(got.length, what).toBe(n)
          }
          const whole = yield* explain(sql, rankedPage(sql, { ...any, limit: n }))
          expect(
            whole.map((p) => p["Index Name"]),
            "the whole catalogue walks the rank index"
          ).toContain("commerce_services_rank_idx")
          const one = yield* explain(sql, rankedPage(sql, { ...any, category: "cat7", limit: n }))
          expect(
            one.map((p) => p["Index Name"]),
            "a category walks its rank index"
          ).toContain("commerce_services_category_rank_idx")
        }),
      // 105k rows inserted and analysed: a budget for a loaded machine, not a claim about speed.
      180_000
    )
  },
  undefined,
  { only: ["embedded", "postgres"] }
)
