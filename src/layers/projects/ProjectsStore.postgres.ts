// Postgres store for catalog listings, filtered and keyset-paginated in SQL.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { TemplateCategory } from "../../schema/marketplace/marketplace.js"
import type { CatalogListing, CatalogSort } from "../../schema/projects/catalog.js"
import { ProjectsStore } from "../../services/projects/ProjectsStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

const ListingRow = Schema.Struct({
  id: Schema.String,
  templateId: Schema.String,
  category: TemplateCategory,
  name: Schema.String,
  description: Schema.String,
  creatorName: Schema.String,
  askingPriceCents: Schema.Number,
  rating: Schema.Number,
  mrrCents: Schema.Number,
  monthlyGrowthPct: Schema.Number,
  activeUsers: Schema.Number,
  churnPct: Schema.Number,
  ageMonths: Schema.Number,
  techStack: Schema.Array(Schema.String),
  createdAt: IsoTimestamp
})

/** The lower-cased text `q` searches (the memory store matches the same fields). */
const searchText = (l: CatalogListing) =>
  `${l.name}\n${l.description}\n${l.creatorName}\n${l.category}\n${l.templateId}`.toLowerCase()

const sortColumn: Record<CatalogSort, string> = {
  price: "asking_price_cents",
  rating: "rating",
  mrr: "mrr_cents",
  growth: "monthly_growth_pct",
  newest: "created_at"
}

const LISTING_COLUMNS = `id, template_id, category, name, description, creator_name, asking_price_cents, rating,
  mrr_cents, monthly_growth_pct, active_users, churn_pct, age_months, tech_stack, created_at`

export const PgProjectsStore = Layer.effect(
  ProjectsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return ProjectsStore.of({
      upsertListings: (rows) =>
        orUnavailable(
          Effect.forEach(
            rows,
            (l) => sql`
              INSERT INTO catalog_projects (id, template_id, category, name, description, creator_name,
                asking_price_cents, rating, mrr_cents, monthly_growth_pct, active_users, churn_pct, age_months,
                tech_stack, created_at, search)
              VALUES (${l.id}, ${l.templateId}, ${l.category}, ${l.name}, ${l.description}, ${l.creatorName},
                ${l.askingPriceCents}, ${l.rating}, ${l.mrrCents}, ${l.monthlyGrowthPct}, ${l.activeUsers},
                ${l.churnPct}, ${l.ageMonths}, ${JSON.stringify(l.techStack)}::jsonb, ${l.createdAt}, ${searchText(l)})
              ON CONFLICT (id) DO UPDATE SET template_id = EXCLUDED.template_id, category = EXCLUDED.category,
                name = EXCLUDED.name, description = EXCLUDED.description, creator_name = EXCLUDED.creator_name,
                asking_price_cents = EXCLUDED.asking_price_cents, rating = EXCLUDED.rating,
                mrr_cents = EXCLUDED.mrr_cents, monthly_growth_pct = EXCLUDED.monthly_growth_pct,
                active_users = EXCLUDED.active_users, churn_pct = EXCLUDED.churn_pct, age_months = EXCLUDED.age_months,
                tech_stack = EXCLUDED.tech_stack, created_at = EXCLUDED.created_at, search = EXCLUDED.search`,
            { discard: true }
          )
        ),
      getListing: (id) =>
        orUnavailable(sql`SELECT ${sql.literal(LISTING_COLUMNS)} FROM catalog_projects WHERE id = ${id}`).pipe(
          Effect.flatMap(decodeFirst(ListingRow))
        ),
      listListings: Effect.fnUntraced(function* (q) {
        const col = sql.literal(sortColumn[q.sort])
        const dir = sql.literal(q.order === "asc" ? "ASC" : "DESC")
        const conds = [sql`TRUE`]
        if (q.category !== undefined) conds.push(sql`category = ${q.category}`)
        if (q.minPriceCents !== undefined) conds.push(sql`asking_price_cents >= ${q.minPriceCents}`)
        if (q.maxPriceCents !== undefined) conds.push(sql`asking_price_cents <= ${q.maxPriceCents}`)
        if (q.minRating !== undefined) conds.push(sql`rating >= ${q.minRating}`)
        if (q.q !== undefined) conds.push(sql`position(${q.q.toLowerCase()} in search) > 0`)
        if (q.after !== undefined) {
          const value = q.sort === "newest" ? sql`${String(q.after.value)}::timestamptz` : sql`${q.after.value}`
          const op = sql.literal(q.order === "asc" ? ">" : "<")
          conds.push(sql`(${col}, id COLLATE "C") ${op} (${value}, ${q.after.id} COLLATE "C")`)
        }
        const rows = yield* sql`
            SELECT ${sql.literal(LISTING_COLUMNS)} FROM catalog_projects
            WHERE ${sql.and(conds)}
            ORDER BY ${col} ${dir}, id COLLATE "C" ${dir}
            LIMIT ${q.limit}`
        return yield* decodeRows(ListingRow)(rows)
      }, orUnavailable)
    })
  })
)
