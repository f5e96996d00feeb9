// Postgres write receipts (table from migration 0026): inserted in the write's own transaction, so
// a rolled-back write leaves none and a committed one is found by the retry.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { WriteReceiptStore } from "../../services/idempotency/WriteReceiptStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, IsoTimestamp } from "../storage/postgres/rows.js"

const Row = Schema.Struct({
  scope: Schema.String,
  key: Schema.String,
  kind: Schema.String,
  fingerprint: Schema.String,
  resultId: Schema.String,
  createdAt: IsoTimestamp
})
const first = decodeFirst(Row)

export const PgWriteReceiptStore = Layer.effect(
  WriteReceiptStore,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    get: (scope, key) =>
      orUnavailable(
        sql`SELECT scope, key, kind, fingerprint, result_id, created_at FROM write_receipts
            WHERE scope = ${scope} AND key = ${key}`
      ).pipe(Effect.flatMap(first)),
    // A concurrent attempt's uncommitted receipt makes this wait for its outcome: committed → no row back.
    insert: (r) =>
      orUnavailable(
        sql`INSERT INTO write_receipts (scope, key, kind, fingerprint, result_id, created_at)
            VALUES (${r.scope}, ${r.key}, ${r.kind}, ${r.fingerprint}, ${r.resultId}, ${r.createdAt})
            ON CONFLICT (scope, key) DO NOTHING RETURNING key`
      ).pipe(Effect.map((rows) => rows.length > 0))
  }))
)
