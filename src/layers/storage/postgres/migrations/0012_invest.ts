// Offerings (the 49 % stake per target, locked per investment), investments, holdings,
// governance proposals and their votes.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE invest_offerings (
      target text PRIMARY KEY,
      total_supply bigint NOT NULL CHECK (total_supply > 0),
      offered_tokens bigint NOT NULL,
      sold_tokens bigint NOT NULL,
      price_cents bigint NOT NULL CHECK (price_cents > 0),
      created_at timestamptz NOT NULL,
      CONSTRAINT invest_offering_cap CHECK (sold_tokens >= 0 AND sold_tokens <= offered_tokens AND offered_tokens * 100 <= total_supply * 49)
    )`
  yield* sql`
    CREATE TABLE investments (
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      target text NOT NULL REFERENCES invest_offerings(target),
      tokens bigint NOT NULL CHECK (tokens > 0),
      price_cents bigint NOT NULL,
      amount_cents bigint NOT NULL,
      journal_entry_id text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX investments_agent_idx ON investments (agent_id)`
  yield* sql`
    CREATE TABLE holdings (
      agent_id text NOT NULL,
      target text NOT NULL REFERENCES invest_offerings(target),
      tokens bigint NOT NULL CHECK (tokens >= 0),
      invested_cents bigint NOT NULL,
      first_invested_at timestamptz NOT NULL,
      last_invested_at timestamptz NOT NULL,
      PRIMARY KEY (agent_id, target)
    )`
  yield* sql`CREATE INDEX holdings_rank_idx ON holdings (target, tokens DESC, first_invested_at, agent_id)`
  yield* sql`
    CREATE TABLE proposals (
      id text PRIMARY KEY,
      title text NOT NULL,
      description text NOT NULL,
      created_by_agent_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('open','passed','rejected','vetoed','executed')),
      created_at timestamptz NOT NULL,
      voting_ends_at timestamptz NOT NULL,
      closed_at timestamptz,
      veto_window_ends_at timestamptz,
      executed_at timestamptz,
      vetoed_at timestamptz,
      veto_reason text,
      vetoed_by text,
      snapshot jsonb NOT NULL,
      total_weight bigint NOT NULL,
      quorum_weight bigint NOT NULL,
      yes_weight bigint NOT NULL,
      no_weight bigint NOT NULL,
      abstain_weight bigint NOT NULL,
      votes_cast integer NOT NULL
    )`
  yield* sql`CREATE INDEX proposals_created_idx ON proposals (created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE proposal_votes (
      proposal_id text NOT NULL REFERENCES proposals(id),
      agent_id text NOT NULL,
      choice text NOT NULL CHECK (choice IN ('yes','no','abstain')),
      weight bigint NOT NULL,
      cast_at timestamptz NOT NULL,
      PRIMARY KEY (proposal_id, agent_id)
    )`
})
