// Idempotency records name the attempt that holds them: an attempt whose lease lapsed (its process
// died, or lost the database) and was taken over cannot release or complete the new attempt's record.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN owner text NOT NULL DEFAULT ''`
})
