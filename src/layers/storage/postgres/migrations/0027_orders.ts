// Orders: purchases of pull and push services waiting for their seller (docs/fulfilment.md). Read
// by seller in (created_at, id) pages, by deadline for the expiry sweep, by next attempt for the
// push dispatcher, and by buyer for the escrow its pending orders hold. A transaction may now be
// pending while its order waits.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE orders (
    id text PRIMARY KEY,
    service_id text NOT NULL,
    service_name text NOT NULL,
    category text NOT NULL,
    pricing_model text NOT NULL,
    tier_id text NOT NULL,
    list_price_cents bigint NOT NULL,
    seller_agent_id text NOT NULL,
    buyer_agent_id text NOT NULL,
    input jsonb,
    price_cents bigint NOT NULL CHECK (price_cents >= 0),
    mode text NOT NULL CHECK (mode IN ('pull', 'push')),
    status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'expired')),
    created_at timestamptz NOT NULL,
    deadline_at timestamptz NOT NULL,
    answered_at timestamptz,
    output jsonb,
    error text,
    latency_ms bigint,
    negotiation_id text,
    approval_id text,
    idempotency_key text,
    push_attempts integer,
    push_next_attempt_at timestamptz,
    push_accepted_at timestamptz,
    push_last_error text
  )`
  yield* sql`CREATE INDEX orders_seller_idx ON orders (seller_agent_id, status, created_at, id)`
  yield* sql`CREATE INDEX orders_seller_all_idx ON orders (seller_agent_id, created_at, id)`
  yield* sql`CREATE INDEX orders_deadline_idx ON orders (status, deadline_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX orders_push_due_idx ON orders (status, push_next_attempt_at)
    WHERE status = 'pending' AND push_next_attempt_at IS NOT NULL AND push_accepted_at IS NULL`
  yield* sql`CREATE UNIQUE INDEX orders_buyer_key_idx ON orders (buyer_agent_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX orders_buyer_pending_idx ON orders (buyer_agent_id) WHERE status = 'pending'`
  yield* sql`ALTER TABLE commerce_transactions DROP CONSTRAINT commerce_transactions_status_check`
  yield* sql`ALTER TABLE commerce_transactions ADD CONSTRAINT commerce_transactions_status_check
    CHECK (status IN ('pending', 'completed', 'failed', 'refunded'))`
})
