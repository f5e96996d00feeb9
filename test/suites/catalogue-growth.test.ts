// Catalogue reads keep their plan while the catalogue grows faster than its statistics (issue 51;
// embedded and Postgres). A seller burst takes the catalogue from a dozen services to 20,000 in
// well under the minute after which Postgres' autovacuum would analyze it, and the embedded store
// has no autovacuum at all: a buyer's page is planned with statistics from a catalogue a
// thousandth of the size, or with none. EXPLAIN ANALYZE of the very statements the store runs
// (servicesPage, a search's two passes, rankedPage) must still read about a page's worth of rows, not the catalogue.
// Autovacuum is switched off for the table here, so "no ANALYZE since" holds for the whole test.
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql/Statement"
import {
  catalogueRows,
  GROWTH_ANALYZE,
  rankedPage,
  SEARCH_WALK_MAX_PER_ROW,
  SEARCH_WINDOW_PER_ROW,
  searchBeyond,
  searchWalkRows,
  searchWindow,
  servicesList,
  servicesPage
} from "../../src/layers/commerce/CatalogStore.postgres.js"
import type { ServiceRecord } from "../../src/schema/commerce/services.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { embeddedCase, postgresCase } from "../fixtures/db.js"

const LIMIT = 21
const GROWN = 10_000
const CATEGORIES = [
  "translation",
  "transcription",
  "image-generation",
  "moderation",
  "data-extraction",
  "embeddings",
  "code-review",
  "summarization"
]

/** Services `from` … `to` as a seller burst leaves them: 1 in 100 a forecast, 1 in 10 an outlook, prices 1–5,000 cents, 20 sellers. */
const insertServices = (sql: SqlClient.SqlClient, from: number, to: number) =>
  sql.unsafe(`
    INSERT INTO commerce_services (id, seller_agent_id, name, description, category, pricing_model, tags, tiers, negotiation,
      status, search, min_tier_cents, max_tier_cents, created_at, updated_at, fulfilment_mode)
    SELECT 'svc_' || md5(i::text), 'agt_seller' || (i % 20), 'Service ' || i, d.text,
      (ARRAY['${CATEGORIES.join("','")}'])[1 + i % ${CATEGORIES.length}], 'per_call', '[]'::jsonb,
      jsonb_build_array(jsonb_build_object('id', 'unit', 'name', 'unit', 'priceCents', p.cents, 'unit', 'call',
        'includedUnits', null, 'sla', jsonb_build_object('uptimePct', 99, 'p95LatencyMs', 1000, 'supportWindow', '24/7'))),
      '{"floorPct": 80, "counterStepPct": 20}'::jsonb, 'active',
      lower('Service ' || i || ' ' || d.text || ' ' || (ARRAY['${CATEGORIES.join("','")}'])[1 + i % ${CATEGORIES.length}]),
      p.cents, p.cents, now(), now(), 'pull'
    FROM generate_series(${from}, ${to}) i,
      LATERAL (SELECT CASE WHEN i % 100 = 7 THEN 'weekly demand forecast ' WHEN i % 10 = 3 THEN 'market outlook '
        ELSE 'reports and analyses ' END || (i % 997) AS text) d,
      LATERAL (SELECT 1 + (i * 7919) % 5000 AS cents) p`)

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly "Rows Removed by Filter"?: number
  readonly "Shared Hit Blocks"?: number
  readonly "Shared Read Blocks"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodes = (n: PlanNode): Array<PlanNode> => [n, ...(n.Plans ?? []).flatMap(nodes)]

/** EXPLAIN (ANALYZE, BUFFERS) of the statement: every plan node, the root first. */
const explain = (sql: SqlClient.SqlClient, statement: Statement<unknown>) =>
  Effect.gen(function* () {
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params)
    const raw = Object.values(rows[0])[0]
    const doc = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
    return nodes(doc[0].Plan)
  })

/** A read, and at most how many rows its plan may take from indexes and sort. */
interface Read {
  readonly what: string
  readonly statement: (sql: SqlClient.SqlClient) => Statement<unknown>
  readonly rows: number
}

const any = { sellers: null, categories: null, maxTierCents: null } as const
const READS: ReadonlyArray<Read> = [
  { what: "the first page", statement: (sql) => servicesPage(sql, { limit: LIMIT }), rows: LIMIT },
  {
    what: "a later page",
    statement: (sql) => servicesPage(sql, { limit: LIMIT, afterId: "svc_8" }),
    rows: LIMIT
  },
  // A category is 1 service in 8: its (category, id) index hands over the page, or the id order's
  // walk reads ~8 rows a match (176 for 21) — a bound of the category, never the table.
  {
    what: "a category",
    statement: (sql) => servicesPage(sql, { limit: LIMIT, category: "translation" }),
    rows: 10 * LIMIT
  },
  // A seller is 1 in 20: (seller, id) hands over the page, or the id order's walk ~20 rows a match (398 for 21).
  {
    what: "a seller",
    statement: (sql) => servicesPage(sql, { limit: LIMIT, sellerId: "agt_seller7" }),
    rows: 30 * LIMIT
  },
  // A word in 1 % of the services: the first pass walks the id order's window (its one match or so does
  // not fill the page), the second the trigram index's ~100 candidates (or a few thousand rows) —
  // bounded by the window and the word, never the table.
  {
    what: "`q` in 1 %, first pass",
    statement: (sql) => searchWindow(sql, { limit: LIMIT, q: "forecast" }),
    rows: LIMIT * SEARCH_WINDOW_PER_ROW
  },
  {
    what: "`q` in 1 %, second pass",
    statement: (sql) => searchBeyond(sql, { limit: LIMIT, q: "forecast" }),
    rows: 2_200
  },
  {
    what: "`q` in none, first pass",
    statement: (sql) => searchWindow(sql, { limit: LIMIT, q: "zyxwv" }),
    rows: LIMIT * SEARCH_WINDOW_PER_ROW
  },
  { what: "`q` in none, second pass", statement: (sql) => searchBeyond(sql, { limit: LIMIT, q: "zyxwv" }), rows: 0 },
  {
    what: "a narrow price band",
    statement: (sql) => servicesPage(sql, { limit: LIMIT, minPriceCents: 1, maxPriceCents: 10 }),
    rows: 100
  },
  { what: "recommendations", statement: (sql) => rankedPage(sql, { ...any, limit: 5 }), rows: 5 },
  {
    what: "recommendations in a category",
    statement: (sql) => rankedPage(sql, { ...any, category: "embeddings", excludeSeller: "agt_seller1", limit: 5 }),
    // The ranking's walk reads ~8 services a match in the category (44 for 5), or its category's own index.
    rows: 10 * 8
  }
]

/** No sequential scan; rows taken from indexes (those a filter then dropped included) and sorted at most the read's bound; a word in no service reads a few index pages. */
const expectBounded = (plan: ReadonlyArray<PlanNode>, read: Pick<Read, "what" | "rows">) => {
  const label = `${read.what}: ${plan.map((n) => `${n["Node Type"]}${n["Index Name"] ? ` ${n["Index Name"]}` : ""} (${n["Actual Rows"]})`).join(" → ")}`
  expect(
    plan.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"]),
    `${label}: sequential scans`
  ).toEqual([])
  const fromIndexes = plan
    .filter((n) => n["Node Type"].includes("Index"))
    .reduce((s, n) => s + (n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0)) * n["Actual Loops"], 0)
  expect(fromIndexes, `${label}: rows from indexes`).toBeLessThanOrEqual(read.rows)
  for (const s of plan.filter((n) => n["Node Type"].includes("Sort")))
    expect(s["Actual Rows"], `${label}: rows sorted`).toBeLessThanOrEqual(Math.max(read.rows, LIMIT))
  if (read.rows === 0) {
    const pages = plan
      .filter((n) => n["Node Type"] === "Bitmap Index Scan")
      .reduce((s, n) => s + (n["Shared Hit Blocks"] ?? 0) + (n["Shared Read Blocks"] ?? 0), 0)
    // The trigram index's root and entry pages and its pending list (at most 32 pages, migration 0037).
    expect(pages, `${label}: index pages read`).toBeLessThanOrEqual(48)
  }
}

const analyzed = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ n: number; modified: number }>`
      SELECT (analyze_count + autoanalyze_count)::int AS n, n_mod_since_analyze::int AS modified
      FROM pg_stat_user_tables WHERE relname = 'commerce_services'`,
    (rows) => rows[0]!
  )

const flushStats = (sql: SqlClient.SqlClient) => Effect.ignore(sql`SELECT pg_stat_force_next_flush()`)

/** Real time (the tests' clock is the TestClock): for a background ANALYZE that should not happen to show. */
const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const settle = pause(300)

/** Re-reads `read` every 50 ms of real time, up to 10 s, until `done` holds; the last value. */
const waitFor = <A, E>(read: Effect.Effect<A, E>, done: (a: A) => boolean) =>
  Effect.gen(function* () {
    const until = Date.now() + 10_000
    for (;;) {
      const a = yield* read
      if (done(a) || Date.now() > until) return a
      yield* pause(50)
    }
  })

/** A catalogue grown to `size` services by SQL (past the store's growth analyze), analyzed at `analyzedAt` services or never. */
const grown = (sql: SqlClient.SqlClient, analyzedAt: number | undefined, size = GROWN) =>
  Effect.gen(function* () {
    yield* sql`ALTER TABLE commerce_services SET (autovacuum_enabled = false)`
    if (analyzedAt !== undefined) {
      yield* insertServices(sql, 1, analyzedAt)
      yield* sql`ANALYZE commerce_services`
    }
    yield* insertServices(sql, (analyzedAt ?? 0) + 1, size)
    yield* flushStats(sql)
    const stats = yield* analyzed(sql)
    expect(stats.n, "analyzed once at most").toBe(analyzedAt === undefined ? 0 : 1)
    expect(stats.modified, "no ANALYZE since").toBeGreaterThanOrEqual(size - (analyzedAt ?? 0))
    return stats
  })

/** How many of the page's matches of `q` the window finds, and the catalogue's size as the store reckons it. */
const windowOf = (sql: SqlClient.SqlClient, q: string) =>
  Effect.gen(function* () {
    const rows = yield* searchWindow(sql, { limit: LIMIT, q })
    return { found: rows.length, catalogueRows: yield* catalogueRows(sql) }
  })

const pageIds = (rows: ReadonlyArray<unknown>) => rows.map((r) => (r as { id: string }).id)

/**
 * A word in 10 % of the 10,000 services: the window finds ~10 of the page's 21, and the search
 * walks on in id order — a few hundred rows, sized by the page and the word — where the trigram pass
 * would read the word's ~1,000 matches; the page is the trigram pass's, row for row. A word in 1 %
 * (1 or 2 in the window) still goes to the trigram index.
 */
const searchWalks = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    const common = yield* windowOf(sql, "outlook")
    expect(common.catalogueRows, "the catalogue's size as the planner reckons it").toBeGreaterThan(GROWN / 2)
    const walk = searchWalkRows(LIMIT, common.found, common.catalogueRows)
    expect(walk, `a word in 10 %: ${common.found} in the window, a walk`).toBeDefined()
    // Sized by the window's density: ~LIMIT ÷ 10 % × (a cautious margin), far under the word's ~1,000 matches.
    expect(walk!, "the walk's rows").toBeLessThanOrEqual(20 * LIMIT)
    const walked = yield* explain(sql, searchWindow(sql, { limit: LIMIT, q: "outlook" }, walk))
    expectBounded(walked, { what: "`q` in 10 %, the walk", rows: walk! })
    const [matches] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM commerce_services WHERE status = 'active' AND search LIKE '%outlook%'`
    expect(matches!.n, "the matches the trigram pass would read").toBeGreaterThan(4 * walk!)
    for (const afterId of [undefined, "svc_4", "svc_c"]) {
      const f = { limit: LIMIT, q: "outlook", ...(afterId === undefined ? {} : { afterId }) }
      expect(pageIds(yield* servicesList(sql, f)), `the walk's page after ${afterId}`).toEqual(
        pageIds(yield* searchBeyond(sql, f))
      )
    }
    const rare = yield* windowOf(sql, "forecast")
    expect(searchWalkRows(LIMIT, rare.found, rare.catalogueRows), "a word in 1 %: the trigram pass").toBeUndefined()
  })

describe("searchWalkRows", () => {
  it("walks when the window's matches predict a page cheaper than the trigram pass's matches", () => {
    // 10 of 20 in a window of 100, 20,000 services: ~290 rows against ~2,000 matches.
    expect(searchWalkRows(20, 10, 20_000)).toBe(293)
    // The same at 1,000 services: ~100 matches cost less than the walk.
    expect(searchWalkRows(20, 10, 1_000)).toBeUndefined()
    // 0 or 1 in the window: too few to size a walk (a rare word).
    expect(searchWalkRows(20, 0, 1e9)).toBeUndefined()
    expect(searchWalkRows(20, 1, 1e9)).toBeUndefined()
    // 2 in the window: capped at SEARCH_WALK_MAX_PER_ROW rows per row of the page, whatever the catalogue.
    expect(searchWalkRows(20, 2, 1e9)).toBe(SEARCH_WALK_MAX_PER_ROW * 20)
    expect(searchWalkRows(20, 2, 20_000)).toBeUndefined()
    // A full window needs no walk.
    expect(searchWalkRows(20, 20, 1e9)).toBeUndefined()
  })
})

const PAGES = ["the first page", "a later page", "a category", "a seller"]

for (const c of [embeddedCase, postgresCase]) {
  describe.skipIf(c.skip !== undefined)(
    `catalogue reads while it grows [${c.name}]${c.skip ? ` — ${c.skip}` : ""}`,
    () => {
      layer(c.layer(), { timeout: "120 seconds" })((it) => {
        it.effect(
          `statistics from 1,000 services, ${GROWN.toLocaleString("en-US")} services later: every read takes about a page's worth`,
          () =>
            Effect.gen(function* () {
              const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
              const stats = yield* grown(sql, 1_000)
              for (const read of READS) expectBounded(yield* explain(sql, read.statement(sql)), read)
              expect((yield* servicesList(sql, { limit: LIMIT, q: "forecast" })).length).toBe(LIMIT)
              yield* searchWalks(sql)
              expect(yield* Effect.andThen(flushStats(sql), analyzed(sql)), "still no ANALYZE").toEqual(stats)
            })
        )
      })

      layer(c.layer(), { timeout: "120 seconds" })((it) => {
        it.effect(
          "statistics from the 12 services of a fresh install, 20,000 later: the pages take a page's worth",
          () =>
            Effect.gen(function* () {
              const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
              // 20,000: at 10,000 the planner still preferred (category, id) here; at 20,000 it sorted
              // a whole category from an index over every row (migration 0037 drops it).
              yield* grown(sql, 12, 20_000)
              for (const read of READS.filter((r) => PAGES.includes(r.what)))
                expectBounded(yield* explain(sql, read.statement(sql)), read)
            })
        )
      })

      layer(c.layer(), { timeout: "120 seconds" })((it) => {
        it.effect(
          `never analyzed, ${GROWN.toLocaleString("en-US")} services: the first page takes a page's worth`,
          () =>
            Effect.gen(function* () {
              const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
              yield* grown(sql, undefined)
              expectBounded(yield* explain(sql, servicesPage(sql, { limit: LIMIT })), READS[0]!)
            })
        )
      })

      layer(c.layer(), { timeout: "120 seconds" })((it) => {
        it.effect(
          `publishing past ${GROWTH_ANALYZE.rows} + ${GROWTH_ANALYZE.fraction * 100} % of the analyzed rows analyzes the catalogue, in the background`,
          () =>
            Effect.gen(function* () {
              const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
              const store = yield* CatalogStore
              yield* sql`ALTER TABLE commerce_services SET (autovacuum_enabled = false)`
              const service = (i: number): ServiceRecord => ({
                id: `svc_g${String(i).padStart(5, "0")}`,
                sellerAgentId: `agt_seller${i % 20}`,
                name: `Service ${i}`,
                description: i % 100 === 7 ? "weekly demand forecast" : "reports and analyses",
                category: CATEGORIES[i % CATEGORIES.length],
                pricingModel: "per_call",
                tags: [],
                tiers: [
                  {
                    id: "unit",
                    name: "unit",
                    priceCents: (1 + ((i * 7919) % 5000)) as ServiceRecord["tiers"][number]["priceCents"],
                    unit: "call",
                    includedUnits: null,
                    sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
                  }
                ],
                negotiation: { floorPct: 80, counterStepPct: 20 },
                fulfilment: { mode: "pull", url: null, secret: null },
                status: "active",
                ratingSum: 0,
                ratingCount: 0,
                createdAt: "2026-11-28T00:00:00.000Z",
                updatedAt: "2026-11-28T00:00:00.000Z"
              })
              const publish = (from: number, to: number) =>
                Effect.forEach(
                  Array.from({ length: to - from }, (_, k) => from + k),
                  (i) => store.insert(service(i)),
                  { discard: true }
                )
              const analyzes = Effect.map(Effect.andThen(flushStats(sql), analyzed(sql)), (s) => s.n)
              // Up to the threshold: nothing is analyzed.
              yield* publish(0, GROWTH_ANALYZE.rows)
              yield* settle
              expect(yield* analyzes, `${GROWTH_ANALYZE.rows} services`).toBe(0)
              // One more: the background fiber analyzes.
              yield* publish(GROWTH_ANALYZE.rows, GROWTH_ANALYZE.rows + 1)
              expect(yield* waitFor(analyzes, (n) => n >= 1), "51 services").toBe(1)
              // The next one is due at 50 + 20 % of the 51 it counted (61 more writes), not before.
              yield* publish(GROWTH_ANALYZE.rows + 1, GROWTH_ANALYZE.rows + 61)
              yield* settle
              expect(yield* analyzes, "60 more").toBe(1)
              yield* publish(GROWTH_ANALYZE.rows + 61, 400)
              expect(yield* waitFor(analyzes, (n) => n >= 2), "400 services").toBeGreaterThanOrEqual(2)
              // Grown to 5,000 (SQL, past the store): the planner works from the 400-ish it analyzed.
              yield* insertServices(sql, 400, 5_000)
              for (const read of READS) expectBounded(yield* explain(sql, read.statement(sql)), read)
            })
        )
      })
    }
  )
}
