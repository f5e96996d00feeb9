// Postgres store for builder projects (one row per project, its build state included); due builds
// are claimed by workers with FOR UPDATE SKIP LOCKED.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { BuildStatus, BuildStep, FailableStep, InputSummary } from "../../schema/projects/builder.js"
import { BuildStore } from "../../services/projects/BuildStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

const ProjectRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  agentId: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  templateId: Schema.NullOr(Schema.String),
  inputs: Schema.Array(InputSummary),
  costCents: Schema.Number,
  status: BuildStatus,
  progressPercent: Schema.Number,
  steps: Schema.Array(BuildStep),
  failAt: Schema.NullOr(FailableStep),
  failureReason: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  finishedAt: IsoTimestampOrNull,
  nextRunAt: IsoTimestampOrNull
})

const CountRow = Schema.Struct({ n: Schema.Number })

const first = decodeFirst(ProjectRow)

export const PgBuildStore = Layer.effect(
  BuildStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return BuildStore.of({
      // A transaction-scoped advisory lock per account: quota check and insert cannot interleave.
      lockAccount: (accountId) =>
        orUnavailable(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`projects:${accountId}`}, 0))`).pipe(
          Effect.asVoid
        ),
      countActive: (accountId) =>
        orUnavailable(
          sql`SELECT count(*) AS n FROM projects WHERE account_id = ${accountId} AND status <> 'failed'`
        ).pipe(
          Effect.flatMap(decodeFirst(CountRow)),
          Effect.map((row) => row?.n ?? 0)
        ),
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO projects (id, account_id, agent_id, name, description, template_id, inputs, cost_cents, status,
            progress_percent, steps, fail_at, failure_reason, created_at, updated_at, finished_at, next_run_at)
          VALUES (${r.id}, ${r.accountId}, ${r.agentId}, ${r.name}, ${r.description}, ${r.templateId},
            ${JSON.stringify(r.inputs)}::jsonb, ${r.costCents}, ${r.status}, ${r.progressPercent},
            ${JSON.stringify(r.steps)}::jsonb, ${r.failAt}, ${r.failureReason}, ${r.createdAt},
            ${r.updatedAt}, ${r.finishedAt}, ${r.nextRunAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql`SELECT * FROM projects WHERE id = ${id}`).pipe(Effect.flatMap(first)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM projects WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(first)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE projects SET status = ${r.status}, progress_percent = ${r.progressPercent},
            steps = ${JSON.stringify(r.steps)}::jsonb, failure_reason = ${r.failureReason}, updated_at = ${r.updatedAt},
            finished_at = ${r.finishedAt}, next_run_at = ${r.nextRunAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      claimDue: (now, limit) =>
        orUnavailable(sql`
          SELECT * FROM projects WHERE next_run_at IS NOT NULL AND next_run_at <= ${now}::timestamptz
          ORDER BY next_run_at, id COLLATE "C" LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`).pipe(Effect.flatMap(decodeRows(ProjectRow)))
    })
  })
)
