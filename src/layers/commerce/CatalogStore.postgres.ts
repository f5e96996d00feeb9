// Postgres CatalogStore: the services (with their search text and tier-price columns kept by every
// write), the catalogue's pages and the recommendations' ranking over their indexes, ratings, and
// per-tier delivery stats. A single service is decoded with ServiceRow; pages are mapped by hand (hot).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Queue, Schema } from "effect"
import { PricingModel } from "../../schema/commerce/common.js"
import type { RankedFilter, ServiceFilter } from "../../schema/commerce/filters.js"
import {
  NegotiationBounds,
  searchText,
  type ServiceRecord,
  ServiceStatus,
  ServiceTier,
  StoredFulfilment
} from "../../schema/commerce/services.js"
import { CatalogStore } from "../../services/commerce/CatalogStore.js"
import { iso, orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

/** The fulfilment's three columns come back as one object (StoredFulfilment), as the record holds them. */
export const SERVICE_COLUMNS =
  "id, seller_agent_id, name, description, category, pricing_model, tags, tiers, negotiation, status, rating_sum, " +
  "rating_count, created_at, updated_at, " +
  "json_build_object('mode', fulfilment_mode, 'url', fulfilment_url, 'secret', fulfilment_secret) AS fulfilment"

/** A commerce_services row (SERVICE_COLUMNS) as the ServiceRecord it stores. */
export const ServiceRow = Schema.Struct({
  id: Schema.String,
  sellerAgentId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tags: Schema.Array(Schema.String),
  tiers: Schema.Array(ServiceTier),
  negotiation: NegotiationBounds,
  fulfilment: StoredFulfilment,
  status: ServiceStatus,
  ratingSum: Schema.Number,
  ratingCount: Schema.Number,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})
const SERVICE_KEYS = Object.keys(ServiceRow.fields)

/**
 * A catalogue page's rows mapped by hand rather than decoded: it is a hot read (docs/performance.md)
 * and the row Schema, which checks every tier, cost tens of microseconds a row.
 * test/suites/row-mapping-commerce.test.ts pins this mapping to ServiceRow's decode of the same rows.
 */
export const mapServiceRow = (raw: unknown): typeof ServiceRow.Type => {
  const row = raw as Readonly<Record<string, unknown>>
  const out: Record<string, unknown> = {}
  for (const key of SERVICE_KEYS) out[key] = row[key]
  out.createdAt = iso(row.createdAt as Date | string)
  out.updatedAt = iso(row.updatedAt as Date | string)
  return out as typeof ServiceRow.Type
}
const services = (rows: ReadonlyArray<unknown>) => Effect.succeed(rows.map(mapServiceRow))
const service = decodeFirst(ServiceRow)

const TierStatsRow = Schema.Struct({
  tierId: Schema.String,
  deliveries: Schema.Number,
  successes: Schema.Number,
  p95LatencyMs: Schema.NullOr(Schema.Number),
  withinPromise: Schema.Number,
  expectedSuccesses: Schema.Number
})

const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const minTier = (r: ServiceRecord) => (r.tiers.length === 0 ? null : Math.min(...r.tiers.map((t) => t.priceCents)))
const maxTier = (r: ServiceRecord) => (r.tiers.length === 0 ? null : Math.max(...r.tiers.map((t) => t.priceCents)))

/** The filters of a catalogue page but `q` (a search adds it in its two passes: searchWindow, searchBeyond). */
const pageClauses = (sql: SqlClient.SqlClient, f: ServiceFilter) => {
  const clauses = [sql`status = 'active'`]
  if (f.afterId !== undefined) clauses.push(sql`id > ${f.afterId}`)
  if (f.category !== undefined) clauses.push(sql`category = ${f.category}`)
  if (f.pricingModel !== undefined) clauses.push(sql`pricing_model = ${f.pricingModel}`)
  if (f.sellerId !== undefined) clauses.push(sql`seller_agent_id = ${f.sellerId}`)
  // Some tier ≥ min ⟺ the dearest is; some tier ≤ max ⟺ the cheapest is (columns kept by every write).
  if (f.minPriceCents !== undefined) clauses.push(sql`max_tier_cents >= ${f.minPriceCents}`)
  if (f.maxPriceCents !== undefined) clauses.push(sql`min_tier_cents <= ${f.maxPriceCents}`)
  if (f.minRating !== undefined) {
    clauses.push(sql`rating_count > 0 AND rating_sum::float8 / rating_count >= ${f.minRating}`)
  }
  return clauses
}

/**
 * A page of listed services in id order, filtered (but not searched: with a `q`, servicesList runs searchWindow and searchBeyond):
 * walks the primary key, or (category, id) / (seller, id) for the listed ones, or a price band's
 * index, as the planner prefers (migration 0018; test/suites/pages.test.ts EXPLAINs it on a large
 * catalogue).
 */
export const servicesPage = (sql: SqlClient.SqlClient, f: ServiceFilter & { readonly q?: undefined }) =>
  sql`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE ${sql.and(pageClauses(sql, f))}
    ORDER BY id LIMIT ${f.limit}`

/**
 * How many of the page's rows (in id order, the other filters applied) a `q` search's first pass
 * reads for each row the page wants, before it asks the trigram index instead: a word in a fifth of
 * the services fills its page here. 5 × 20 = 100 rows cost a rare word ~0.3 ms on Postgres (1,000
 * cost 2.2 ms and made a rare word's search 2–4× slower than the bench's first page; docs/performance.md,
 * "Catalogue reads while the catalogue grows").
 */
export const SEARCH_WINDOW_PER_ROW = 5

/**
 * What a match costs the trigram pass (searchBeyond: the match's heap row fetched, rechecked and
 * sorted) in rows of an id-order walk (searchWindow: a row fetched and matched): ~2.7 µs against
 * ~0.55 µs on Postgres 15, measured in psql on 20,000 services (docs/performance.md); halved, so
 * that a close call goes to the trigram pass, which reads exactly the word's matches.
 */
export const SEARCH_MATCH_IN_WALKED_ROWS = 2.5

/** The longest walk a search takes instead of the trigram pass, in rows per row of the page. */
export const SEARCH_WALK_MAX_PER_ROW = 100

/**
 * The catalogue's size as the planner reckons it: the rows the last ANALYZE (or VACUUM) counted,
 * scaled to the table's pages now; 0 for a table never analyzed. A catalog lookup and a file size,
 * asked only when the window's matches could size a walk (2 or more, fewer than the page).
 */
export const catalogueRows = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ rows: number }>`SELECT greatest(reltuples, 0)::float8 / greatest(relpages, 1)
        * (pg_relation_size(oid) / current_setting('block_size')::float8) AS rows
      FROM pg_class WHERE oid = 'commerce_services'::regclass`,
    (rows) => Number(rows[0]?.rows ?? 0)
  )

/**
 * A search's walk: the next `rows` rows of the page in id order (`limit` × SEARCH_WINDOW_PER_ROW
 * for the first pass, the window), matched against `q` as they are read (the outer LIMIT stops the
 * walk at the page's last match). A common word fills its page in the window, reading a few rows
 * per match; searchWalkRows sizes a second, longer walk from the window's matches.
 */
export const searchWindow = (
  sql: SqlClient.SqlClient,
  f: ServiceFilter & { readonly q: string },
  rows = f.limit * SEARCH_WINDOW_PER_ROW
) =>
  sql`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM (
      SELECT * FROM commerce_services WHERE ${sql.and(pageClauses(sql, f))}
      ORDER BY id LIMIT ${rows}
    ) commerce_services WHERE search LIKE ${likePattern(f.q)} ORDER BY id LIMIT ${f.limit}`

/**
 * When the window found `found` of the page's `limit` matches (fewer than `limit`) in a catalogue of
 * about `catalogueRows`: how many rows a second walk should read to fill the page, when that walk is
 * cheaper than the trigram pass; undefined when it is not, or when the window saw too few matches
 * to tell (0 or 1: a rare word, the trigram pass's case). The walk is sized by a cautious density,
 * (found − √found) in the window's rows (a Poisson count's one-sigma low), so that it mostly fills
 * the page, and capped at SEARCH_WALK_MAX_PER_ROW × `limit` rows; the trigram pass reads the word's
 * every match, about found ÷ window × catalogueRows of them, each worth SEARCH_MATCH_IN_WALKED_ROWS
 * rows of the walk. Both bounds are the page's and the word's, not the catalogue's: at a page of 20
 * in 20,000 services, a word in 1 % goes to the trigram index (1 or 2 in the window: its 200 matches
 * against a walk of 2,000 rows), a word in 10 % to the walk (~10 in the window: ~290 rows against
 * its 2,000 matches).
 */
export const searchWalkRows = (limit: number, found: number, catalogueRows: number): number | undefined => {
  const window = limit * SEARCH_WINDOW_PER_ROW
  if (found < 2 || found >= limit) return undefined
  const rows = Math.min(Math.ceil((limit * window) / (found - Math.sqrt(found))), SEARCH_WALK_MAX_PER_ROW * limit)
  const matches = (found / window) * catalogueRows
  return rows < matches * SEARCH_MATCH_IN_WALKED_ROWS ? rows : undefined
}

/**
 * A search's trigram pass, when the walks held fewer matches than the page wants: every match
 * (the trigram index's, or a scan's when the word is common), sorted by id, the first `limit` kept.
 * `OFFSET 0` fences the matching off from the ORDER BY … LIMIT, so the planner cannot take the walk
 * of the id order that counts on matches coming soon: the plan a sample's luck picked for a rare
 * word when it answered in one statement (1 ANALYZE in ~100 put a rare word in the histogram,
 * estimated it at 1 % and walked the whole catalogue; pages.test.ts pins both passes). Sorting the
 * matches' ids alone and fetching the page's rows after (or computing the columns after the LIMIT)
 * saves ~1 µs a match but costs a word in no service ~150 µs more to plan (docs/performance.md).
 */
export const searchBeyond = (sql: SqlClient.SqlClient, f: ServiceFilter & { readonly q: string }) =>
  sql`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM (
      SELECT * FROM commerce_services WHERE ${sql.and([...pageClauses(sql, f), sql`search LIKE ${likePattern(f.q)}`])}
      OFFSET 0
    ) commerce_services ORDER BY id LIMIT ${f.limit}`

/**
 * A page of listed services: servicesPage, or with `q` a search: the window (searchWindow); when
 * that leaves the page short, a longer walk of the id order if searchWalkRows finds one cheaper than
 * the trigram pass (a common word's page, read at a cost that does not grow with the catalogue), and
 * searchBeyond when there is none or it too left the page short. Every pass is bounded: the walks by
 * their rows, the trigram pass by the word's matches. Unprepared, so each statement is planned for
 * its own values: a prepared statement switches to a generic plan after five runs, which cannot know
 * that a price band is narrow (docs/performance.md has the figures).
 */
export const servicesList = (sql: SqlClient.SqlClient, f: ServiceFilter) => {
  const q = f.q
  if (q === undefined) return orUnavailable(servicesPage(sql, { ...f, q }).unprepared)
  const search = { ...f, q }
  const beyond = orUnavailable(searchBeyond(sql, search).unprepared)
  const full = (rows: ReadonlyArray<unknown>) => rows.length >= f.limit
  return orUnavailable(searchWindow(sql, search).unprepared).pipe(
    Effect.flatMap((rows) => {
      if (full(rows)) return Effect.succeed(rows)
      if (rows.length < 2) return beyond
      return orUnavailable(catalogueRows(sql)).pipe(
        Effect.flatMap((size) => {
          const walk = searchWalkRows(f.limit, rows.length, size)
          return walk === undefined
            ? beyond
            : orUnavailable(searchWindow(sql, search, walk).unprepared).pipe(
                Effect.flatMap((walked) => (full(walked) ? Effect.succeed(walked) : beyond))
              )
        })
      )
    })
  )
}

/** The kept ranking's key (rankOf in SQL, the same float8 division): the expression of migration 0020's indexes. */
const RANK = "((rating_sum + 6)::float8 / (rating_count + 2))"

/**
 * The recommendations' candidates: listed services in the kept ranking's order, walking
 * (category,) rank DESC, id (migration 0020) with the policy as filters, or an allowed seller's
 * (seller, id) rows sorted, as the planner prefers (test/suites/ranking.test.ts EXPLAINs it).
 */
export const rankedPage = (sql: SqlClient.SqlClient, f: RankedFilter) => {
  const clauses = [sql`status = 'active'`]
  if (f.category !== undefined) clauses.push(sql`category = ${f.category}`)
  if (f.excludeSeller !== undefined) clauses.push(sql`seller_agent_id <> ${f.excludeSeller}`)
  if (f.sellers !== null) clauses.push(sql`seller_agent_id IN ${sql.in([...f.sellers])}`)
  if (f.categories !== null) clauses.push(sql`category IN ${sql.in([...f.categories])}`)
  if (f.maxTierCents !== null) clauses.push(sql`min_tier_cents <= ${f.maxTierCents}`)
  return sql`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE ${sql.and(clauses)}
    ORDER BY ${sql.literal(RANK)} DESC, id LIMIT ${f.limit}`
}

/**
 * When the services written through this store since the last ANALYZE pass 50 + 20 % of the rows
 * that ANALYZE counted (autovacuum's rule with twice its fraction, checked per write instead of
 * once a minute), commerce_services is analyzed — the columns the catalogue's reads filter on —
 * by a background fiber, outside the writer's transaction. A burst of publishing (1,000 → 20,000
 * services in ~40 s) is analyzed ~15 times as it grows, so the planner never works from a
 * catalogue much smaller than the one it reads (docs/performance.md, "Catalogue reads while the catalogue grows").
 */
export const GROWTH_ANALYZE = { rows: 50, fraction: 0.2 } as const

/** The columns the catalogue's pages and recommendations filter and order on (the rest waits for autovacuum / the embedded vacuum pass). */
const ANALYZED_COLUMNS = "id, status, category, seller_agent_id, pricing_model, min_tier_cents, max_tier_cents, search"

const growthAnalyzer = Effect.fnUntraced(function* (sql: SqlClient.SqlClient) {
  let written = 0
  let counted = 0
  const due = () => written > GROWTH_ANALYZE.rows + GROWTH_ANALYZE.fraction * counted
  const wake = yield* Queue.sliding<void>(1)
  const analyze = Effect.gen(function* () {
    written = 0
    yield* sql.unsafe(`ANALYZE commerce_services (${ANALYZED_COLUMNS})`)
    const [row] = yield* sql<{ rows: number }>`
        SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = 'commerce_services'::regclass`
    counted = row?.rows ?? counted
  })
  // A wake that waited while the last ANALYZE ran is stale unless the writes since are due again.
  yield* Effect.forkScoped(
    Effect.forever(
      Queue.take(wake).pipe(
        Effect.andThen(Effect.suspend(() => (due() ? analyze : Effect.void))),
        Effect.catchCause((cause) => Effect.logWarning("catalogue growth analyze failed", cause))
      )
    )
  )
  return (n: number) =>
    Effect.sync(() => {
      written += n
      if (due()) Queue.offerUnsafe(wake, undefined)
    })
})

export const PgCatalogStore = Layer.effect(
  CatalogStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const wrote = yield* growthAnalyzer(sql)
    const insert = (r: ServiceRecord, onConflict: "error" | "refresh") =>
      sql`INSERT INTO commerce_services (id, seller_agent_id, name, description, category, pricing_model, tags,
            tiers, negotiation, status, rating_sum, rating_count, search, min_tier_cents, max_tier_cents, created_at,
            updated_at, fulfilment_mode, fulfilment_url, fulfilment_secret)
          VALUES (${r.id}, ${r.sellerAgentId}, ${r.name}, ${r.description}, ${r.category}, ${r.pricingModel},
                  ${json(r.tags)}::jsonb, ${json(r.tiers)}::jsonb, ${json(r.negotiation)}::jsonb, ${r.status},
                  ${r.ratingSum}, ${r.ratingCount}, ${searchText(r)}, ${minTier(r)}, ${maxTier(r)}, ${r.createdAt},
                  ${r.updatedAt}, ${r.fulfilment.mode}, ${r.fulfilment.url}, ${r.fulfilment.secret})
          ${
            onConflict === "refresh"
              ? sql`ON CONFLICT (id) DO UPDATE SET seller_agent_id = EXCLUDED.seller_agent_id, name = EXCLUDED.name,
                  description = EXCLUDED.description, category = EXCLUDED.category,
                  pricing_model = EXCLUDED.pricing_model, tags = EXCLUDED.tags, tiers = EXCLUDED.tiers,
                  negotiation = EXCLUDED.negotiation, status = EXCLUDED.status, search = EXCLUDED.search,
                  min_tier_cents = EXCLUDED.min_tier_cents, max_tier_cents = EXCLUDED.max_tier_cents,
                  updated_at = EXCLUDED.updated_at, fulfilment_mode = EXCLUDED.fulfilment_mode,
                  fulfilment_url = EXCLUDED.fulfilment_url, fulfilment_secret = EXCLUDED.fulfilment_secret`
              : sql``
          }`
    return {
      upsertSeed: (rows) =>
        orUnavailable(Effect.forEach(rows, (r) => insert(r, "refresh"), { discard: true })).pipe(
          Effect.tap(() => wrote(rows.length))
        ),
      insert: (r) => orUnavailable(insert(r, "error")).pipe(Effect.andThen(wrote(1))),
      update: (r) =>
        orUnavailable(
          sql`UPDATE commerce_services SET name = ${r.name}, description = ${r.description}, category = ${r.category},
              pricing_model = ${r.pricingModel}, tags = ${json(r.tags)}::jsonb, tiers = ${json(r.tiers)}::jsonb,
              negotiation = ${json(r.negotiation)}::jsonb, status = ${r.status}, search = ${searchText(r)},
              min_tier_cents = ${minTier(r)}, max_tier_cents = ${maxTier(r)}, updated_at = ${r.updatedAt},
              fulfilment_mode = ${r.fulfilment.mode}, fulfilment_url = ${r.fulfilment.url},
              fulfilment_secret = ${r.fulfilment.secret}
              WHERE id = ${r.id}`
        ).pipe(Effect.andThen(wrote(1))),
      get: (id) =>
        orUnavailable(sql`SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE id = ${id}`).pipe(
          Effect.flatMap(service)
        ),
      list: (f) => servicesList(sql, f).pipe(Effect.flatMap(services)),
      // Unprepared for the same reason as list: an allowed-sellers list is best served by its sellers' rows.
      ranked: (f) =>
        (f.sellers !== null && f.sellers.length === 0) || (f.categories !== null && f.categories.length === 0)
          ? Effect.succeed([])
          : orUnavailable(rankedPage(sql, f).unprepared).pipe(Effect.flatMap(services)),
      addRating: (id, rating, reviews = 1) =>
        orUnavailable(
          sql`UPDATE commerce_services SET rating_sum = rating_sum + ${reviews * rating},
                rating_count = rating_count + ${reviews}
              WHERE id = ${id}`
        ).pipe(Effect.asVoid),
      deliveryStats: (serviceId, since) =>
        orUnavailable(
          // Each delivery with the promise its purchase was sold under (its tier's as it is now when the
          // purchase kept none); only the deliveries that count against the seller.
          sql`WITH judged AS (
                SELECT d.tier_id, d.success, d.latency_ms,
                  COALESCE(t.promised_p95_ms, (tr.sla->>'p95LatencyMs')::integer) AS promised_p95,
                  COALESCE(t.promised_uptime_pct, (tr.sla->>'uptimePct')::numeric) AS promised_uptime
                FROM commerce_deliveries d
                JOIN commerce_transactions t ON t.id = d.transaction_id
                LEFT JOIN LATERAL (
                  SELECT x->'sla' AS sla FROM commerce_services s, jsonb_array_elements(s.tiers) x
                  WHERE s.id = d.service_id AND x->>'id' = d.tier_id LIMIT 1
                ) tr ON t.promised_p95_ms IS NULL
                WHERE d.service_id = ${serviceId} AND d.delivered_at >= ${since} AND d.accountable)
              SELECT tier_id, count(*)::int AS deliveries, (count(*) FILTER (WHERE success))::int AS successes,
                percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95_latency_ms,
                (count(*) FILTER (WHERE latency_ms <= promised_p95))::int AS within_promise,
                COALESCE(sum(promised_uptime) / 100, 0)::float8 AS expected_successes
              FROM judged GROUP BY tier_id`
        ).pipe(Effect.flatMap(decodeRows(TierStatsRow)))
    }
  })
)
