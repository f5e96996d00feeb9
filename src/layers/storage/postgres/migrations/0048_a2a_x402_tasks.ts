// A2A tasks paid with x402 (issue 49, docs/a2a.md "Paying with x402"): the task a payment-required
// answer opens, and the authorization submitted for it. Never-paid tasks are purged by age through a
// partial index on them alone.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE a2a_x402_tasks (
      id TEXT PRIMARY KEY,
      state TEXT NOT NULL,
      payer TEXT,
      nonce TEXT,
      created_at TIMESTAMPTZ NOT NULL,
      doc JSONB NOT NULL
    )`
  yield* sql`CREATE INDEX a2a_x402_tasks_unpaid_idx ON a2a_x402_tasks (created_at) WHERE payer IS NULL`
})
