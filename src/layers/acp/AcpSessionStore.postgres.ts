// Postgres store for ACP checkout sessions: one row per session, the record as a JSON document
// beside the columns it is found by (row-locked while a completion runs).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { AcpSessionRecord } from "../../schema/acp/sessions.js"
import { AcpSessionStore } from "../../services/acp/AcpSessionStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst } from "../storage/postgres/rows.js"

const SessionRow = Schema.Struct({ doc: AcpSessionRecord })

export const PgAcpSessionStore = Layer.effect(
  AcpSessionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = decodeFirst(SessionRow)
    const doc = (rows: ReadonlyArray<unknown>) => Effect.map(first(rows), (row) => row?.doc)
    return AcpSessionStore.of({
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO acp_checkout_sessions (id, agent_id, status, doc, created_at, updated_at)
          VALUES (${r.id}, ${r.agentId}, ${r.status}, ${JSON.stringify(r)}::jsonb, ${r.createdAt}, ${r.updatedAt})`).pipe(
          Effect.asVoid
        ),
      get: (id) => orUnavailable(sql`SELECT doc FROM acp_checkout_sessions WHERE id = ${id}`).pipe(Effect.flatMap(doc)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT doc FROM acp_checkout_sessions WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(doc)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE acp_checkout_sessions SET status = ${r.status}, doc = ${JSON.stringify(r)}::jsonb,
            updated_at = ${r.updatedAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid)
    })
  })
)
