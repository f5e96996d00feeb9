// Postgres store for agent sessions (row-locked per step).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { SessionContext, SessionGoal, SessionState, SessionStepLog } from "../../schema/sessions/sessions.js"
import { SessionStore } from "../../services/sessions/SessionStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, IsoTimestamp } from "../storage/postgres/rows.js"

const SessionRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  goal: SessionGoal,
  state: SessionState,
  context: SessionContext,
  steps: Schema.Array(SessionStepLog),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  expiresAt: IsoTimestamp
})

export const PgSessionStore = Layer.effect(
  SessionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = decodeFirst(SessionRow)
    return SessionStore.of({
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO agent_sessions (id, agent_id, goal, state, context, steps, created_at, updated_at, expires_at)
          VALUES (${r.id}, ${r.agentId}, ${r.goal}, ${r.state}, ${JSON.stringify(r.context)}::jsonb,
            ${JSON.stringify(r.steps)}::jsonb, ${r.createdAt}, ${r.updatedAt}, ${r.expiresAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql`SELECT * FROM agent_sessions WHERE id = ${id}`).pipe(Effect.flatMap(first)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM agent_sessions WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(first)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE agent_sessions SET state = ${r.state}, context = ${JSON.stringify(r.context)}::jsonb,
            steps = ${JSON.stringify(r.steps)}::jsonb, updated_at = ${r.updatedAt}, expires_at = ${r.expiresAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid)
    })
  })
)
