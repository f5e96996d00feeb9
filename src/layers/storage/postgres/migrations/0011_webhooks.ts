// Outgoing webhooks: a fan-out marker on the outbox, endpoints (one per agent), delivery rows
// (the durable per-endpoint queue, claimed with leases) and the attempt log.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // NULL = not yet fanned out. Events written before webhooks existed have no endpoint to go to.
  yield* sql`ALTER TABLE events ADD COLUMN dispatched_at timestamptz`
  yield* sql`UPDATE events SET dispatched_at = occurred_at`
  yield* sql`CREATE INDEX events_undispatched_idx ON events (seq) WHERE dispatched_at IS NULL`
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      agent_id text NOT NULL UNIQUE,
      url text NOT NULL,
      events jsonb NOT NULL,
      enabled boolean NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      disabled_at timestamptz,
      disabled_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      agent_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      body text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending','delivering','succeeded','failed','cancelled')),
      attempts integer NOT NULL CHECK (attempts >= 0),
      due_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (endpoint_id, event_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (due_at) WHERE status IN ('pending','delivering')`
  yield* sql`CREATE INDEX webhook_deliveries_agent_idx ON webhook_deliveries (agent_id, created_at)`
  yield* sql`
    CREATE TABLE webhook_attempts (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      agent_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      attempt integer NOT NULL CHECK (attempt >= 1),
      status text NOT NULL CHECK (status IN ('succeeded','failed')),
      response_status integer,
      duration_ms integer NOT NULL CHECK (duration_ms >= 0),
      error text,
      attempted_at timestamptz NOT NULL,
      next_retry_at timestamptz
    )`
  yield* sql`CREATE INDEX webhook_attempts_agent_idx ON webhook_attempts (agent_id, seq DESC)`
  yield* sql`CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id)`
})
