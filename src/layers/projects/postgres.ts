// Postgres stores for catalog listings (filtered and keyset-paginated in SQL), builder projects
// (claimed by workers with FOR UPDATE SKIP LOCKED) and agent sessions.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import type { TemplateCategory } from "../../schema/marketplace/marketplace.js"
import type {
  BuildStatus,
  BuildStep,
  FailableStep,
  InputSummary,
  ProjectRecord
} from "../../schema/projects/builder.js"
import type { CatalogListing, CatalogSort } from "../../schema/projects/catalog.js"
import type {
  SessionContext,
  SessionGoal,
  SessionRecord,
  SessionState,
  SessionStepLog
} from "../../schema/sessions/sessions.js"
import { BuildStore } from "../../services/projects/Builder.js"
import { ProjectsStore } from "../../services/projects/Projects.js"
import { SessionStore } from "../../services/sessions/Sessions.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"

interface ListingRow {
  id: string
  templateId: string
  category: TemplateCategory
  name: string
  description: string
  creatorName: string
  askingPriceCents: number
  rating: number
  mrrCents: number
  monthlyGrowthPct: number
  activeUsers: number
  churnPct: number
  ageMonths: number
  techStack: ReadonlyArray<string>
  createdAt: Date
}

const toListing = (r: ListingRow): CatalogListing => ({
  id: r.id,
  templateId: r.templateId,
  category: r.category,
  name: r.name,
  description: r.description,
  creatorName: r.creatorName,
  askingPriceCents: r.askingPriceCents,
  rating: r.rating,
  mrrCents: r.mrrCents,
  monthlyGrowthPct: r.monthlyGrowthPct,
  activeUsers: r.activeUsers,
  churnPct: r.churnPct,
  ageMonths: r.ageMonths,
  techStack: r.techStack,
  createdAt: iso(r.createdAt)
})

/** The lower-cased text `q` searches (the memory store matches the same fields). */
const searchText = (l: CatalogListing) => `${l.name}\n${l.description}\n${l.creatorName}\n${l.category}\n${l.templateId}`.toLowerCase()

const sortColumn: Record<CatalogSort, string> = {
  price: "asking_price_cents",
  rating: "rating",
  mrr: "mrr_cents",
  growth: "monthly_growth_pct",
  newest: "created_at"
}

const LISTING_COLUMNS = `id, template_id, category, name, description, creator_name, asking_price_cents, rating, mrr_cents,
  monthly_growth_pct, active_users, churn_pct, age_months, tech_stack, created_at`

export const PgProjectsStore = Layer.effect(
  ProjectsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      upsertListings: (rows) =>
        orUnavailable(
          Effect.forEach(
            rows,
            (l) => sql`
              INSERT INTO catalog_projects (id, template_id, category, name, description, creator_name, asking_price_cents, rating,
                mrr_cents, monthly_growth_pct, active_users, churn_pct, age_months, tech_stack, created_at, search)
              VALUES (${l.id}, ${l.templateId}, ${l.category}, ${l.name}, ${l.description}, ${l.creatorName}, ${l.askingPriceCents},
                ${l.rating}, ${l.mrrCents}, ${l.monthlyGrowthPct}, ${l.activeUsers}, ${l.churnPct}, ${l.ageMonths},
                ${JSON.stringify(l.techStack)}::jsonb, ${l.createdAt}, ${searchText(l)})
              ON CONFLICT (id) DO UPDATE SET template_id = EXCLUDED.template_id, category = EXCLUDED.category, name = EXCLUDED.name,
                description = EXCLUDED.description, creator_name = EXCLUDED.creator_name, asking_price_cents = EXCLUDED.asking_price_cents,
                rating = EXCLUDED.rating, mrr_cents = EXCLUDED.mrr_cents, monthly_growth_pct = EXCLUDED.monthly_growth_pct,
                active_users = EXCLUDED.active_users, churn_pct = EXCLUDED.churn_pct, age_months = EXCLUDED.age_months,
                tech_stack = EXCLUDED.tech_stack, created_at = EXCLUDED.created_at, search = EXCLUDED.search`,
            { discard: true }
          )
        ),
      getListing: (id) =>
        orUnavailable(sql<ListingRow>`SELECT ${sql.literal(LISTING_COLUMNS)} FROM catalog_projects WHERE id = ${id}`).pipe(
          Effect.map((rows) => (rows[0] ? toListing(rows[0]) : undefined))
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
          const rows = yield* sql<ListingRow>`
            SELECT ${sql.literal(LISTING_COLUMNS)} FROM catalog_projects
            WHERE ${sql.and(conds)}
            ORDER BY ${col} ${dir}, id COLLATE "C" ${dir}
            LIMIT ${q.limit}`
          return rows.map(toListing)
        }, orUnavailable)
    }
  })
)

interface ProjectRow {
  id: string
  accountId: string
  agentId: string
  name: string
  description: string | null
  templateId: string | null
  inputs: ReadonlyArray<InputSummary>
  costCents: number
  status: BuildStatus
  progressPercent: number
  steps: ReadonlyArray<BuildStep>
  failAt: FailableStep | null
  failureReason: string | null
  createdAt: Date
  updatedAt: Date
  finishedAt: Date | null
  nextRunAt: Date | null
}

const toProjectRecord = (r: ProjectRow): ProjectRecord => ({
  id: r.id,
  accountId: r.accountId,
  agentId: r.agentId,
  name: r.name,
  description: r.description,
  templateId: r.templateId,
  inputs: r.inputs,
  costCents: r.costCents,
  status: r.status,
  progressPercent: r.progressPercent,
  steps: r.steps,
  failAt: r.failAt,
  failureReason: r.failureReason,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
  finishedAt: isoOrNull(r.finishedAt),
  nextRunAt: isoOrNull(r.nextRunAt)
})

export const PgBuildStore = Layer.effect(
  BuildStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<ProjectRow>) => (rows[0] ? toProjectRecord(rows[0]) : undefined)
    return {
      // A transaction-scoped advisory lock per account: quota check and insert cannot interleave.
      lockAccount: (accountId) => orUnavailable(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`projects:${accountId}`}, 0))`).pipe(Effect.asVoid),
      countActive: (accountId) =>
        orUnavailable(sql<{ n: number }>`SELECT count(*) AS n FROM projects WHERE account_id = ${accountId} AND status <> 'failed'`).pipe(
          Effect.map((rows) => rows[0]?.n ?? 0)
        ),
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO projects (id, account_id, agent_id, name, description, template_id, inputs, cost_cents, status, progress_percent,
            steps, fail_at, failure_reason, created_at, updated_at, finished_at, next_run_at)
          VALUES (${r.id}, ${r.accountId}, ${r.agentId}, ${r.name}, ${r.description}, ${r.templateId}, ${JSON.stringify(r.inputs)}::jsonb,
            ${r.costCents}, ${r.status}, ${r.progressPercent}, ${JSON.stringify(r.steps)}::jsonb, ${r.failAt}, ${r.failureReason},
            ${r.createdAt}, ${r.updatedAt}, ${r.finishedAt}, ${r.nextRunAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql<ProjectRow>`SELECT * FROM projects WHERE id = ${id}`).pipe(Effect.map(one)),
      getForUpdate: (id) => orUnavailable(sql<ProjectRow>`SELECT * FROM projects WHERE id = ${id} FOR UPDATE`).pipe(Effect.map(one)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE projects SET status = ${r.status}, progress_percent = ${r.progressPercent}, steps = ${JSON.stringify(r.steps)}::jsonb,
            failure_reason = ${r.failureReason}, updated_at = ${r.updatedAt}, finished_at = ${r.finishedAt}, next_run_at = ${r.nextRunAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      claimDue: (now, limit) =>
        orUnavailable(sql<ProjectRow>`
          SELECT * FROM projects WHERE next_run_at IS NOT NULL AND next_run_at <= ${now}::timestamptz
          ORDER BY next_run_at, id COLLATE "C" LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`).pipe(Effect.map((rows) => rows.map(toProjectRecord)))
    }
  })
)

interface SessionRow {
  id: string
  agentId: string
  goal: SessionGoal
  state: SessionState
  context: SessionContext
  steps: ReadonlyArray<SessionStepLog>
  createdAt: Date
  updatedAt: Date
  expiresAt: Date
}

const toSessionRecord = (r: SessionRow): SessionRecord => ({
  id: r.id,
  agentId: r.agentId,
  goal: r.goal,
  state: r.state,
  context: r.context,
  steps: r.steps,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
  expiresAt: iso(r.expiresAt)
})

export const PgSessionStore = Layer.effect(
  SessionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<SessionRow>) => (rows[0] ? toSessionRecord(rows[0]) : undefined)
    return {
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO agent_sessions (id, agent_id, goal, state, context, steps, created_at, updated_at, expires_at)
          VALUES (${r.id}, ${r.agentId}, ${r.goal}, ${r.state}, ${JSON.stringify(r.context)}::jsonb, ${JSON.stringify(r.steps)}::jsonb,
            ${r.createdAt}, ${r.updatedAt}, ${r.expiresAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql<SessionRow>`SELECT * FROM agent_sessions WHERE id = ${id}`).pipe(Effect.map(one)),
      getForUpdate: (id) => orUnavailable(sql<SessionRow>`SELECT * FROM agent_sessions WHERE id = ${id} FOR UPDATE`).pipe(Effect.map(one)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE agent_sessions SET state = ${r.state}, context = ${JSON.stringify(r.context)}::jsonb, steps = ${JSON.stringify(r.steps)}::jsonb,
            updated_at = ${r.updatedAt}, expires_at = ${r.expiresAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid)
    }
  })
)
