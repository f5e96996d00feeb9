// Running totals kept by the transaction writes themselves (insert and status change, in the same
// statement), backfilled from the transactions; `npm run check` recomputes and compares them
// (docs/commerce.md):
// - what each agent spent per UTC day (completed purchases as buyer): the wallet's daily and
//   monthly limits read at most 31 rows instead of summing the agent's history;
// - calls and spend per agent, UTC day and service: GET /usage reads at most days × services rows.
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
  yield* sql`CREATE TABLE agent_usage_days (
    agent_id text NOT NULL,
    day date NOT NULL,
    service_id text NOT NULL,
    service_name text NOT NULL,
    calls integer NOT NULL,
    spent_cents bigint NOT NULL,
    PRIMARY KEY (agent_id, day, service_id)
  )`
  yield* sql`INSERT INTO agent_usage_days (agent_id, day, service_id, service_name, calls, spent_cents)
    SELECT buyer_agent_id, (created_at AT TIME ZONE 'UTC')::date, service_id, max(service_name), count(*), SUM(price_cents)
    FROM commerce_transactions WHERE status = 'completed'
    GROUP BY 1, 2, 3`
})
