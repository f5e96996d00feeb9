// An agent reads its own approvals newest first (A2A ListTasks lists the purchases waiting on its
// owner beside its transactions, docs/a2a.md): a keyset page by (agent_id, created_at, id), as the
// account's page has.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX IF NOT EXISTS commerce_approvals_agent_page_idx
    ON commerce_approvals (agent_id, created_at DESC, id DESC)`
})
