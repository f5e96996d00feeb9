// A2A push notification configurations (issue 50, docs/a2a.md "Push notifications"): where a buyer
// asked to be told that its task has ended. `next_attempt_at` is null once done; the worker's claim
// walks the open ones by it (a partial index: done configurations are never read again).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE a2a_push_configs (
      task_id TEXT NOT NULL,
      id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      next_attempt_at TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL,
      doc JSONB NOT NULL,
      PRIMARY KEY (task_id, id)
    )`
  yield* sql`CREATE INDEX a2a_push_configs_due_idx ON a2a_push_configs (next_attempt_at) WHERE next_attempt_at IS NOT NULL`
  yield* sql`CREATE INDEX a2a_push_configs_open_agent_idx ON a2a_push_configs (agent_id) WHERE next_attempt_at IS NOT NULL`
})
