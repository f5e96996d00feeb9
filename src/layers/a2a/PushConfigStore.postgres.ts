// Postgres store of A2A push notification configurations: one row per (task, id), the record as a
// JSON document beside the columns it is found by; open ones (not done) by a partial index on when
// they are due, so a claim pass reads open configurations only.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { PushConfigRecord } from "../../schema/a2a/push.js"
import { PushConfigStore } from "../../services/a2a/PushConfigStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"

const Rows = Schema.Array(Schema.Struct({ doc: PushConfigRecord }))
const CountRow = Schema.Array(Schema.Struct({ n: Schema.Number }))

export const PgPushConfigStore = Layer.effect(
  PushConfigStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const docs = (rows: ReadonlyArray<unknown>) =>
      Effect.map(Effect.orDie(Schema.decodeUnknownEffect(Rows)(rows)), (rs) => rs.map((r) => r.doc))
    const json = (r: PushConfigRecord) => JSON.stringify(r)
    return PushConfigStore.of({
      lockAgent: (agentId) =>
        orUnavailable(sql`SELECT pg_advisory_xact_lock(hashtext(${`a2a_push_configs:${agentId}`}))`).pipe(
          Effect.asVoid
        ),
      put: (r) =>
        orUnavailable(sql`
          INSERT INTO a2a_push_configs (task_id, id, agent_id, next_attempt_at, created_at, doc)
          VALUES (${r.taskId}, ${r.id}, ${r.agentId}, ${r.nextAttemptAt}::timestamptz, ${r.createdAt}::timestamptz, ${json(r)}::jsonb)
          ON CONFLICT (task_id, id) DO UPDATE SET agent_id = EXCLUDED.agent_id,
            next_attempt_at = EXCLUDED.next_attempt_at, created_at = EXCLUDED.created_at, doc = EXCLUDED.doc`).pipe(
          Effect.asVoid
        ),
      get: (taskId, id) =>
        orUnavailable(sql`SELECT doc FROM a2a_push_configs WHERE task_id = ${taskId} AND id = ${id}`).pipe(
          Effect.flatMap(docs),
          Effect.map((rs) => rs[0])
        ),
      listForTask: (taskId) =>
        orUnavailable(sql`SELECT doc FROM a2a_push_configs WHERE task_id = ${taskId} ORDER BY created_at, id`).pipe(
          Effect.flatMap(docs)
        ),
      delete: (taskId, id) =>
        orUnavailable(sql`DELETE FROM a2a_push_configs WHERE task_id = ${taskId} AND id = ${id} RETURNING id`).pipe(
          Effect.map((rows) => rows.length > 0)
        ),
      countOpen: (agentId) =>
        orUnavailable(
          sql`SELECT count(*)::int AS n FROM a2a_push_configs WHERE agent_id = ${agentId} AND next_attempt_at IS NOT NULL`
        ).pipe(
          Effect.flatMap((rows) => Effect.orDie(Schema.decodeUnknownEffect(CountRow)(rows))),
          Effect.map((rows) => rows[0]?.n ?? 0)
        ),
      claimDue: (now, leaseUntil, limit) =>
        orUnavailable(sql`
          WITH due AS (
            SELECT task_id, id FROM a2a_push_configs
            WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ${now}::timestamptz
            ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          UPDATE a2a_push_configs c SET next_attempt_at = ${leaseUntil}::timestamptz,
            doc = jsonb_set(c.doc, '{nextAttemptAt}', to_jsonb(${leaseUntil}::text))
          FROM due WHERE c.task_id = due.task_id AND c.id = due.id
          RETURNING c.doc`).pipe(Effect.flatMap(docs)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE a2a_push_configs SET next_attempt_at = ${r.nextAttemptAt}::timestamptz, doc = ${json(r)}::jsonb
          WHERE task_id = ${r.taskId} AND id = ${r.id} AND doc->>'createdAt' = ${r.createdAt}
          RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))
    })
  })
)
