// Postgres idempotency records (table from migration 0001, owner from 0022): claimed with one conditional upsert.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { IdempotencyStore, type StoredResponse } from "../../services/idempotency/IdempotencyStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst } from "../storage/postgres/rows.js"

/** bytea arrives as a Uint8Array from @effect/sql-pg 4 (a Buffer from pg before). */
const utf8 = new TextDecoder()
const utf8Bytes = new TextEncoder()

/** The row a retry meets: the first attempt's request hash, and its stored answer once done. */
const Row = Schema.Struct({
  requestHash: Schema.String,
  state: Schema.Literals(["in_progress", "done"]),
  status: Schema.NullOr(Schema.Number),
  headers: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  body: Schema.NullOr(Schema.Uint8Array)
})
const existing = decodeFirst(Row)

export const PgIdempotencyStore = Layer.effect(
  IdempotencyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      // One statement: insert, or take over an expired row / a lapsed lease. No row back → someone holds it.
      begin: Effect.fnUntraced(function* (i) {
        const now = new Date(i.nowMs)
        const claimed = yield* sql`
            INSERT INTO idempotency_keys (scope, key, request_hash, state, owner, created_at, lease_until, expires_at)
            VALUES (${i.scope}, ${i.key}, ${i.requestHash}, 'in_progress', ${i.owner}, ${now}, ${new Date(i.leaseUntilMs)}, ${new Date(i.expiresAtMs)})
            ON CONFLICT (scope, key) DO UPDATE SET
              request_hash = EXCLUDED.request_hash, state = 'in_progress', owner = EXCLUDED.owner, status = NULL, headers = NULL, body = NULL,
              created_at = EXCLUDED.created_at, lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at
            WHERE idempotency_keys.expires_at <= ${now}
               OR (idempotency_keys.state = 'in_progress' AND idempotency_keys.lease_until <= ${now})
            RETURNING key`
        if (claimed.length > 0) return { _tag: "Started" as const }
        const row = yield* sql`SELECT request_hash, state, status, headers, body FROM idempotency_keys
            WHERE scope = ${i.scope} AND key = ${i.key}`.pipe(Effect.flatMap(existing))
        if (!row) return { _tag: "InProgress" as const, requestHash: i.requestHash }
        if (row.state === "done") {
          const response: StoredResponse = {
            status: row.status ?? 200,
            headers: row.headers ?? {},
            body: row.body ? utf8.decode(row.body) : ""
          }
          return { _tag: "Done" as const, requestHash: row.requestHash, response }
        }
        return { _tag: "InProgress" as const, requestHash: row.requestHash }
      }, orUnavailable),
      renew: (scope, key, owner, leaseUntilMs) =>
        orUnavailable(
          sql`UPDATE idempotency_keys SET lease_until = ${new Date(leaseUntilMs)}
              WHERE scope = ${scope} AND key = ${key} AND owner = ${owner} AND state = 'in_progress'`
        ).pipe(Effect.asVoid),
      complete: (scope, key, owner, response) =>
        orUnavailable(
          sql`UPDATE idempotency_keys SET state = 'done', status = ${response.status}, headers = ${JSON.stringify(response.headers)}::jsonb,
              body = ${utf8Bytes.encode(response.body)} WHERE scope = ${scope} AND key = ${key} AND owner = ${owner} AND state = 'in_progress'`
        ).pipe(Effect.asVoid),
      release: (scope, key, owner) =>
        orUnavailable(
          sql`DELETE FROM idempotency_keys WHERE scope = ${scope} AND key = ${key} AND owner = ${owner} AND state = 'in_progress'`
        ).pipe(Effect.asVoid)
    }
  })
)
