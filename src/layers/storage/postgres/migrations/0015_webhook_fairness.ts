// Fair webhook delivery (docs/webhooks.md): each endpoint's health (consecutive failures, the next
// probe while failing, the last error), its place in the claim round-robin, and indexes that let a
// claim and GET /webhook look at one endpoint's open deliveries without scanning anyone else's.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_endpoints
    ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    ADD COLUMN retry_at timestamptz,
    ADD COLUMN last_error text,
    ADD COLUMN last_error_at timestamptz,
    ADD COLUMN last_claimed_at timestamptz`
  // Least recently served first: the claim walks this index and stops after its limit.
  yield* sql`CREATE INDEX webhook_endpoints_round_robin_idx ON webhook_endpoints (last_claimed_at NULLS FIRST, id)`
  // The outbox order of deliveries (fan-out inserts in event order): "oldest first" within an endpoint.
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN seq bigserial`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint_seq_idx ON webhook_deliveries (endpoint_id, seq) WHERE status IN ('pending','delivering')`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, due_at) WHERE status IN ('pending','delivering')`
  // Claims now start from the endpoints, never from the global due order.
  yield* sql`DROP INDEX webhook_deliveries_due_idx`
})
