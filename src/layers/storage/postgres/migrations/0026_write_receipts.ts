// Write receipts: the domain dedupe of keyed writes that have no key column of their own (a saga,
// an investment, a project build, a negotiation's moves, the owner's writes). One row per (caller
// scope, Idempotency-Key), written in the same transaction as the write it names, so a retry after
// a lost COMMIT reply finds what committed (docs/idempotency.md "Domain dedupe").
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE write_receipts (
    scope text NOT NULL,
    key text NOT NULL,
    kind text NOT NULL,
    fingerprint text NOT NULL,
    result_id text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
  )`
})
