// Catalog listings, builder projects with their durable build state, and agent sessions.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE catalog_projects (
      id text PRIMARY KEY,
      template_id text NOT NULL,
      category text NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      creator_name text NOT NULL,
      asking_price_cents bigint NOT NULL CHECK (asking_price_cents >= 0),
      rating numeric(3,1) NOT NULL,
      mrr_cents bigint NOT NULL CHECK (mrr_cents >= 0),
      monthly_growth_pct numeric(8,2) NOT NULL,
      active_users integer NOT NULL,
      churn_pct numeric(6,2) NOT NULL,
      age_months integer NOT NULL,
      tech_stack jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      search text NOT NULL
    )`
  yield* sql`CREATE INDEX catalog_projects_category_idx ON catalog_projects (category)`
  yield* sql`
    CREATE TABLE projects (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      agent_id text NOT NULL,
      name text NOT NULL,
      description text,
      template_id text,
      inputs jsonb NOT NULL,
      cost_cents bigint NOT NULL CHECK (cost_cents >= 0),
      status text NOT NULL CHECK (status IN ('queued','analyzing','generating','building','deploying','live','failed')),
      progress_percent integer NOT NULL CHECK (progress_percent BETWEEN 0 AND 100),
      steps jsonb NOT NULL,
      fail_at text,
      failure_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      next_run_at timestamptz,
      CHECK ((status IN ('live','failed')) = (next_run_at IS NULL))
    )`
  yield* sql`CREATE INDEX projects_account_idx ON projects (account_id) WHERE status <> 'failed'`
  yield* sql`CREATE INDEX projects_due_idx ON projects (next_run_at) WHERE next_run_at IS NOT NULL`
  yield* sql`
    CREATE TABLE agent_sessions (
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      goal text NOT NULL,
      state text NOT NULL,
      context jsonb NOT NULL,
      steps jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX agent_sessions_agent_idx ON agent_sessions (agent_id)`
})
