// The outbox of domain events (delivery state is added by the webhooks migration).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE events (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      type text NOT NULL,
      agent_id text NOT NULL,
      occurred_at timestamptz NOT NULL,
      data jsonb NOT NULL
    )`
  yield* sql`CREATE INDEX events_agent_idx ON events (agent_id, seq DESC)`
})
