// Payments: checkouts, processed processor event ids, knowledge access grants, acquisitions, and
// the fake processor's sessions and signed deliveries.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE checkouts (
      session_id text PRIMARY KEY,
      purpose text NOT NULL CHECK (purpose IN ('plan', 'knowledge', 'acquisition', 'recharge')),
      mode text NOT NULL CHECK (mode IN ('payment', 'subscription')),
      status text NOT NULL CHECK (status IN ('pending', 'paid', 'expired', 'failed')),
      amount_cents bigint NOT NULL CHECK (amount_cents >= 0),
      currency text NOT NULL,
      description text NOT NULL,
      checkout_url text NOT NULL,
      account_id text,
      agent_id text,
      plan_id text,
      product_id integer,
      acquisition_id text,
      credits bigint NOT NULL CHECK (credits >= 0),
      customer_email text,
      customer_name text,
      subscription_id text,
      failure_reason text,
      created_at timestamptz NOT NULL,
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX checkouts_subscription_idx ON checkouts (subscription_id) WHERE subscription_id IS NOT NULL`
  yield* sql`
    CREATE TABLE processor_events (
      id text PRIMARY KEY,
      type text NOT NULL,
      received_at timestamptz NOT NULL,
      outcome text
    )`
  yield* sql`
    CREATE TABLE knowledge_access (
      id text PRIMARY KEY,
      product_id integer NOT NULL,
      customer_email text NOT NULL,
      customer_name text NOT NULL,
      checkout_session_id text NOT NULL UNIQUE REFERENCES checkouts(session_id),
      granted_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX knowledge_access_email_idx ON knowledge_access (customer_email)`
  yield* sql`
    CREATE TABLE acquisitions (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      account_id text NOT NULL,
      project_id text NOT NULL,
      title text NOT NULL,
      price_cents bigint NOT NULL CHECK (price_cents >= 0),
      currency text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'paid', 'expired', 'failed')),
      checkout_session_id text NOT NULL REFERENCES checkouts(session_id),
      checkout_url text NOT NULL,
      created_at timestamptz NOT NULL,
      paid_at timestamptz
    )`
  yield* sql`CREATE INDEX acquisitions_agent_idx ON acquisitions (agent_id, seq DESC)`
  yield* sql`
    CREATE TABLE fake_checkout_sessions (
      id text PRIMARY KEY,
      mode text NOT NULL,
      amount_cents bigint NOT NULL,
      currency text NOT NULL,
      description text NOT NULL,
      success_url text NOT NULL,
      cancel_url text NOT NULL,
      metadata jsonb NOT NULL,
      customer_email text,
      idempotency_key text NOT NULL UNIQUE,
      status text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
      payment_status text NOT NULL CHECK (payment_status IN ('paid', 'unpaid')),
      failure_code text,
      subscription_id text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      completed_at timestamptz
    )`
  yield* sql`
    CREATE TABLE fake_processor_deliveries (
      seq bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      session_id text NOT NULL REFERENCES fake_checkout_sessions(id),
      type text NOT NULL,
      payload text NOT NULL,
      signature_header text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX fake_processor_deliveries_session_idx ON fake_processor_deliveries (session_id, seq)`
})
