// Postgres ACP order event notices: one row per session, the notice as a JSON document beside when it
// is due (a partial index: done notices are never read again).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { AcpOrderNotice } from "../../schema/acp/sessions.js"
import { AcpOrderNoticeStore } from "../../services/acp/AcpOrderNoticeStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"

const Rows = Schema.Array(Schema.Struct({ doc: AcpOrderNotice }))

export const PgAcpOrderNoticeStore = Layer.effect(
  AcpOrderNoticeStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const docs = (rows: ReadonlyArray<unknown>) =>
      Effect.map(Effect.orDie(Schema.decodeUnknownEffect(Rows)(rows)), (rs) => rs.map((r) => r.doc))
    return AcpOrderNoticeStore.of({
      insert: (n) =>
        orUnavailable(sql`
          INSERT INTO acp_order_notices (session_id, next_attempt_at, doc)
          VALUES (${n.sessionId}, ${n.nextAttemptAt}::timestamptz, ${JSON.stringify(n)}::jsonb)
          ON CONFLICT (session_id) DO NOTHING`).pipe(Effect.asVoid),
      get: (sessionId) =>
        orUnavailable(sql`SELECT doc FROM acp_order_notices WHERE session_id = ${sessionId}`).pipe(
          Effect.flatMap(docs),
          Effect.map((rs) => rs[0])
        ),
      claimDue: (now, leaseUntil, limit) =>
        orUnavailable(sql`
          WITH due AS (
            SELECT session_id FROM acp_order_notices
            WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ${now}::timestamptz
            ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          UPDATE acp_order_notices n SET next_attempt_at = ${leaseUntil}::timestamptz,
            doc = jsonb_set(n.doc, '{nextAttemptAt}', to_jsonb(${leaseUntil}::text))
          FROM due WHERE n.session_id = due.session_id
          RETURNING n.doc`).pipe(Effect.flatMap(docs)),
      update: (n, leasedUntil) =>
        orUnavailable(sql`
          UPDATE acp_order_notices SET next_attempt_at = ${n.nextAttemptAt}::timestamptz, doc = ${JSON.stringify(n)}::jsonb
          WHERE session_id = ${n.sessionId} AND next_attempt_at = ${leasedUntil}::timestamptz
          RETURNING session_id`).pipe(Effect.map((rows) => rows.length > 0)),
      reopen: (sessionId, agentId, now) =>
        orUnavailable(sql`
          UPDATE acp_order_notices SET next_attempt_at = ${now}::timestamptz,
            doc = doc || jsonb_build_object('nextAttemptAt', ${now}::text, 'doneAt', null, 'attempts', 0, 'lastError', null)
          WHERE session_id = ${sessionId} AND doc->>'agentId' = ${agentId}`).pipe(Effect.asVoid)
    })
  })
)
