// Running totals of what each agent spent per UTC day (completed purchases as buyer), kept by the
// transaction writes themselves (insert and status change, in the same statement), so the wallet's
// daily and monthly limits read at most 31 rows instead of summing the agent's history. Backfilled
// from the transactions; `npm run check` recomputes and compares them (docs/commerce.md).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE agent_spend_days (
    agent_id text NOT NULL,
    day date NOT NULL,
    spent_cents bigint NOT NULL,
    PRIMARY KEY (agent_id, day)
  )`
  yield* sql`INSERT INTO agent_spend_days (agent_id, day, spent_cents)
    SELECT buyer_agent_id, (created_at AT TIME ZONE 'UTC')::date, SUM(price_cents)
    FROM commerce_transactions WHERE status = 'completed'
    GROUP BY 1, 2`
})
