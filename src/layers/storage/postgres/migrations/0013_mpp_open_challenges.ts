// Open MPP challenges found per agent, newest first: the store keeps at most a bounded number of
// them per agent and drops expired ones when it issues a new one (services/Mpp.ts).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX mpp_challenges_open_idx ON mpp_challenges (agent_id, created_at DESC, id DESC) WHERE status = 'open'`
})
