// ACP checkout sessions (docs/acp.md): the record as a document, found by its id; the agent and
// status columns are for reading the table, not for the service's queries.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE acp_checkout_sessions (
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      status text NOT NULL,
      doc jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX acp_checkout_sessions_agent_idx ON acp_checkout_sessions (agent_id, created_at)`
})
