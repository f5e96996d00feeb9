// Postgres store of A2A tasks paid with x402: the record as a JSON document beside the columns it is
// found and compared by; the unpaid ones by a partial index on when they were made (the purge).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { X402TaskRecord } from "../../schema/a2a/x402Task.js"
import { X402TaskStore } from "../../services/a2a/X402TaskStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"

const Rows = Schema.Array(Schema.Struct({ doc: X402TaskRecord }))

export const PgX402TaskStore = Layer.effect(
  X402TaskStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const docs = (rows: ReadonlyArray<unknown>) =>
      Effect.map(Effect.orDie(Schema.decodeUnknownEffect(Rows)(rows)), (rs) => rs.map((r) => r.doc))
    const json = (r: X402TaskRecord) => JSON.stringify(r)
    return X402TaskStore.of({
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO a2a_x402_tasks (id, state, payer, nonce, created_at, doc)
          VALUES (${r.id}, ${r.state}, ${r.payer}, ${r.nonce}, ${r.createdAt}::timestamptz, ${json(r)}::jsonb)`).pipe(
          Effect.asVoid
        ),
      get: (id) =>
        orUnavailable(sql`SELECT doc FROM a2a_x402_tasks WHERE id = ${id}`).pipe(
          Effect.flatMap(docs),
          Effect.map((rs) => rs[0])
        ),
      replace: (expected, next) =>
        orUnavailable(sql`
          UPDATE a2a_x402_tasks SET state = ${next.state}, payer = ${next.payer}, nonce = ${next.nonce},
            doc = ${json(next)}::jsonb
          WHERE id = ${expected.id} AND state = ${expected.state}
            AND payer IS NOT DISTINCT FROM ${expected.payer} AND nonce IS NOT DISTINCT FROM ${expected.nonce}
          RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
      setPayment: (id, paymentId, at) =>
        orUnavailable(sql`
          UPDATE a2a_x402_tasks
          SET doc = jsonb_set(jsonb_set(doc, '{paymentId}', to_jsonb(${paymentId}::text)), '{updatedAt}', to_jsonb(${at}::text))
          WHERE id = ${id}`).pipe(Effect.asVoid),
      purgeUnpaid: (before, limit) =>
        orUnavailable(sql`
          DELETE FROM a2a_x402_tasks WHERE id IN (
            SELECT id FROM a2a_x402_tasks WHERE payer IS NULL AND created_at < ${before}::timestamptz
            ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING id`).pipe(Effect.map((rows) => rows.length))
    })
  })
)
