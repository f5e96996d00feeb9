// Commerce: services, wallets (policies), transactions with deliveries and reviews, approvals,
// disputes and recharge requests. Money columns are integer cents (bigint).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE commerce_services (
      id text PRIMARY KEY,
      seller_agent_id text NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      category text NOT NULL,
      pricing_model text NOT NULL CHECK (pricing_model IN ('per_call', 'monthly', 'usage_based', 'tiered')),
      tags jsonb NOT NULL,
      tiers jsonb NOT NULL,
      negotiation jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'inactive')),
      rating_sum bigint NOT NULL DEFAULT 0,
      rating_count bigint NOT NULL DEFAULT 0,
      search text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX commerce_services_seller_idx ON commerce_services (seller_agent_id)`
  yield* sql`CREATE INDEX commerce_services_category_idx ON commerce_services (category)`
  yield* sql`
    CREATE TABLE commerce_wallets (
      agent_id text PRIMARY KEY,
      policy jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE commerce_recharges (
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      amount_cents bigint NOT NULL CHECK (amount_cents > 0),
      reason text NOT NULL,
      status text NOT NULL CHECK (status IN ('granted', 'requested')),
      ledger_entry_id text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX commerce_recharges_status_idx ON commerce_recharges (status, created_at)`
  yield* sql`
    CREATE TABLE commerce_transactions (
      id text PRIMARY KEY,
      buyer_agent_id text NOT NULL,
      seller_agent_id text NOT NULL,
      service_id text NOT NULL,
      service_name text NOT NULL,
      category text NOT NULL,
      pricing_model text NOT NULL,
      tier_id text NOT NULL,
      list_price_cents bigint NOT NULL CHECK (list_price_cents >= 0),
      price_cents bigint NOT NULL CHECK (price_cents >= 0),
      seller_cents bigint NOT NULL CHECK (seller_cents >= 0),
      fee_cents bigint NOT NULL CHECK (fee_cents >= 0),
      negotiation_id text,
      approval_id text,
      idempotency_key text,
      status text NOT NULL CHECK (status IN ('completed', 'failed', 'refunded')),
      ledger_entry_id text,
      created_at timestamptz NOT NULL,
      refunded_at timestamptz,
      CHECK (status = 'failed' OR seller_cents + fee_cents = price_cents)
    )`
  yield* sql`CREATE UNIQUE INDEX commerce_transactions_key_idx ON commerce_transactions (buyer_agent_id, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX commerce_transactions_buyer_idx ON commerce_transactions (buyer_agent_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX commerce_transactions_seller_idx ON commerce_transactions (seller_agent_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX commerce_transactions_service_idx ON commerce_transactions (service_id)`
  yield* sql`
    CREATE TABLE commerce_deliveries (
      transaction_id text PRIMARY KEY REFERENCES commerce_transactions(id),
      service_id text NOT NULL,
      tier_id text NOT NULL,
      success boolean NOT NULL,
      latency_ms integer NOT NULL CHECK (latency_ms >= 0),
      output jsonb,
      error text,
      delivered_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX commerce_deliveries_service_idx ON commerce_deliveries (service_id, delivered_at)`
  yield* sql`
    CREATE TABLE commerce_reviews (
      id text PRIMARY KEY,
      transaction_id text NOT NULL UNIQUE REFERENCES commerce_transactions(id),
      service_id text NOT NULL,
      reviewer_agent_id text NOT NULL,
      seller_agent_id text NOT NULL,
      rating integer NOT NULL CHECK (rating BETWEEN 1 AND 5),
      text text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX commerce_reviews_seller_idx ON commerce_reviews (seller_agent_id)`
  yield* sql`
    CREATE TABLE commerce_approvals (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      agent_id text NOT NULL,
      service_id text NOT NULL,
      tier_id text NOT NULL,
      quoted_price_cents bigint NOT NULL CHECK (quoted_price_cents >= 0),
      negotiation_id text,
      input jsonb,
      reason text NOT NULL CHECK (reason IN ('manual', 'approvalThreshold')),
      status text NOT NULL CHECK (status IN ('pending', 'approved', 'declined', 'expired')),
      idempotency_key text,
      reserved_transaction_id text NOT NULL,
      transaction_id text,
      decided_by text,
      created_at timestamptz NOT NULL,
      decided_at timestamptz,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX commerce_approvals_account_idx ON commerce_approvals (account_id, created_at DESC)`
  yield* sql`CREATE INDEX commerce_approvals_agent_idx ON commerce_approvals (agent_id, status)`
  yield* sql`CREATE UNIQUE INDEX commerce_approvals_key_idx ON commerce_approvals (agent_id, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`
    CREATE TABLE commerce_disputes (
      id text PRIMARY KEY,
      transaction_id text NOT NULL UNIQUE REFERENCES commerce_transactions(id),
      buyer_agent_id text NOT NULL,
      seller_agent_id text NOT NULL,
      reason text NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'under_review', 'resolved_refunded', 'resolved_rejected')),
      seller_response text CHECK (seller_response IN ('accept', 'contest')),
      seller_note text,
      resolution text,
      refund_cents bigint NOT NULL DEFAULT 0,
      refund_entry_id text,
      respond_by timestamptz NOT NULL,
      review_due_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      resolved_at timestamptz
    )`
  yield* sql`CREATE INDEX commerce_disputes_due_idx ON commerce_disputes (status, respond_by, review_due_at)`
  yield* sql`CREATE INDEX commerce_disputes_buyer_idx ON commerce_disputes (buyer_agent_id)`
  yield* sql`CREATE INDEX commerce_disputes_seller_idx ON commerce_disputes (seller_agent_id)`
})
