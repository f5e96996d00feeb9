// Accounts, dashboard sessions, agents, API keys (hash only) and rate-limit counters.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      email text NOT NULL UNIQUE,
      name text NOT NULL,
      password_hash text NOT NULL,
      plan_id text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE sessions (
      token_hash text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE agents (
      id text PRIMARY KEY,
      account_id text REFERENCES accounts(id) ON DELETE CASCADE,
      name text NOT NULL,
      organization text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX agents_account_idx ON agents (account_id)`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      name text NOT NULL,
      prefix text NOT NULL,
      secret_hash text NOT NULL UNIQUE,
      permissions jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_account_idx ON api_keys (account_id)`
  yield* sql`
    CREATE TABLE rate_limit_counters (
      bucket text NOT NULL,
      window_name text NOT NULL,
      window_start bigint NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (bucket, window_name, window_start)
    )`
})
