// Negotiations (with the seller's scheduled answer), purchase sagas (durable step state) and
// MPP payment challenges (single-use, bound to the key they were issued to).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE negotiations (
      id text PRIMARY KEY,
      buyer_agent_id text NOT NULL,
      seller_agent_id text NOT NULL,
      service_id text NOT NULL,
      tier_id text NOT NULL,
      list_price_cents bigint NOT NULL CHECK (list_price_cents >= 0),
      terms jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('awaiting_seller','awaiting_buyer','accepted','rejected','used','expired')),
      round integer NOT NULL CHECK (round >= 0),
      current_price_cents bigint NOT NULL CHECK (current_price_cents >= 0),
      seller_ask_cents bigint,
      agreed_price_cents bigint,
      history jsonb NOT NULL,
      seller_due_at timestamptz,
      expires_at timestamptz,
      used_by text,
      used_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK ((status = 'awaiting_seller') = (seller_due_at IS NOT NULL)),
      CHECK ((status IN ('accepted','used')) = (agreed_price_cents IS NOT NULL)),
      CHECK ((status = 'used') = (used_by IS NOT NULL))
    )`
  yield* sql`CREATE INDEX negotiations_due_idx ON negotiations (seller_due_at) WHERE seller_due_at IS NOT NULL`
  yield* sql`CREATE INDEX negotiations_buyer_idx ON negotiations (buyer_agent_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX negotiations_seller_idx ON negotiations (seller_agent_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE sagas (
      id text PRIMARY KEY,
      buyer_agent_id text NOT NULL,
      account_id text NOT NULL,
      seller_agent_id text NOT NULL,
      service_id text NOT NULL,
      tier_id text NOT NULL,
      input jsonb,
      negotiation_id text,
      price_cents bigint CHECK (price_cents >= 0),
      snapshot jsonb,
      transaction_id text,
      status text NOT NULL CHECK (status IN ('running','completed','compensated')),
      steps jsonb NOT NULL,
      failure jsonb,
      output jsonb,
      next_run_at timestamptz,
      deliver_due_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      CHECK ((status = 'running') = (next_run_at IS NOT NULL)),
      CHECK ((status = 'running') = (finished_at IS NULL))
    )`
  yield* sql`CREATE INDEX sagas_due_idx ON sagas (next_run_at) WHERE next_run_at IS NOT NULL`
  yield* sql`CREATE INDEX sagas_buyer_idx ON sagas (buyer_agent_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE mpp_challenges (
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      key_id text NOT NULL,
      service_id text NOT NULL,
      tier_id text NOT NULL,
      seller_agent_id text NOT NULL,
      amount_cents bigint NOT NULL CHECK (amount_cents >= 1),
      request text NOT NULL,
      digest text NOT NULL,
      status text NOT NULL CHECK (status IN ('open','paid')),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      paid_at timestamptz,
      entry_id text,
      transaction_id text,
      CHECK ((status = 'paid') = (paid_at IS NOT NULL AND entry_id IS NOT NULL))
    )`
  yield* sql`CREATE INDEX mpp_challenges_paid_idx ON mpp_challenges (paid_at DESC) WHERE status = 'paid'`
})
