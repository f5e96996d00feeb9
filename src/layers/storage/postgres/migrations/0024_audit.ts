// The audit trail: one row per decision about an agent's money (an approval decided, a policy
// change, a freeze), written in the unit of work of the change. `seq` orders an agent's entries as
// written (several may share a millisecond); pages walk (agent_id, seq) backwards.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE audit_entries (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    agent_id text NOT NULL,
    action text NOT NULL,
    actor_kind text NOT NULL,
    actor_id text,
    subject_id text,
    before jsonb,
    after jsonb,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX audit_entries_agent_seq_idx ON audit_entries (agent_id, seq)`
})
