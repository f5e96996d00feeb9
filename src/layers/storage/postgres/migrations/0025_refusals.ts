// Refused debits kept for the owner: one row per refusal, under the agent's account, read newest
// first by account or by agent (the owner's list) and one per agent (the overview's last refusal).
// Stored wallet policies gain the freeze switch, off.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE refusals (
    id text PRIMARY KEY,
    account_id text,
    agent_id text NOT NULL,
    service_id text,
    service_name text,
    tier_id text,
    price_cents bigint NOT NULL,
    reason text NOT NULL CHECK (reason IN ('frozen', 'per_purchase_limit', 'daily_limit', 'monthly_limit',
      'category', 'seller_allowlist', 'insufficient_balance')),
    message text NOT NULL,
    path text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX refusals_account_idx ON refusals (account_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX refusals_agent_idx ON refusals (agent_id, created_at DESC, id DESC)`
  yield* sql`UPDATE commerce_wallets SET policy = policy || '{"frozen": false}'::jsonb WHERE policy->'frozen' IS NULL`
})
