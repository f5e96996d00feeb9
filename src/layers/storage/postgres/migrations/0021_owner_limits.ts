// What an owner's limits count and what an approval may become:
// - running sagas per buyer, so the escrow they hold is summed without reading the buyer's history;
// - investments and project charges are wallet spend too: the running totals of earlier ones are
//   added to agent_spend_days, so the daily and monthly limits and the books check see them;
// - an approval whose price, tier or seller changed while it waited is void, never charged.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX sagas_running_buyer_idx ON sagas (buyer_agent_id) WHERE status = 'running'`
  yield* sql`
    INSERT INTO agent_spend_days (agent_id, day, spent_cents)
    SELECT agent_id, day, SUM(cents) FROM (
      SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, amount_cents AS cents FROM investments
      UNION ALL
      SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date, cost_cents FROM projects WHERE status <> 'failed' AND cost_cents > 0
    ) d GROUP BY 1, 2
    ON CONFLICT (agent_id, day) DO UPDATE SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents`
  yield* sql`ALTER TABLE commerce_approvals DROP CONSTRAINT IF EXISTS commerce_approvals_status_check`
  yield* sql`ALTER TABLE commerce_approvals ADD CONSTRAINT commerce_approvals_status_check CHECK (status IN ('pending', 'approved', 'declined', 'expired', 'void'))`
})
