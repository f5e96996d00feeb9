// ACP order events (issue 50, docs/acp.md "Order events"): per completed checkout session, which
// order status the agent platform's receiver last acknowledged and when the worker looks next
// (`next_attempt_at` null once done; a partial index walks the open ones).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE acp_order_notices (
      session_id TEXT PRIMARY KEY,
      next_attempt_at TIMESTAMPTZ,
      doc JSONB NOT NULL
    )`
  yield* sql`CREATE INDEX acp_order_notices_due_idx ON acp_order_notices (next_attempt_at) WHERE next_attempt_at IS NOT NULL`
})
