// Keyset pages outside commerce on an index that serves exactly their filter and order:
// the webhook delivery log of one event, an agent's deliveries in outbox order, the portfolio's
// acquisitions, the "already owned?" check of an acquisition, negotiations in byte order, and an
// agent's failed or refunded transactions.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // GET /webhook/deliveries?eventId=…: the event's attempts newest first (the (agent_id, seq DESC)
  // index alone would walk every attempt of the agent to find one event's).
  yield* sql`CREATE INDEX webhook_attempts_agent_event_idx ON webhook_attempts (agent_id, event_id, seq)`
  // seq comes from a sequence, so its UNIQUE index guarded nothing, and the planner walked it
  // backwards for a busy agent's page (filtering by agent): 12k other rows read when that agent's
  // attempts are older than everyone else's (test/suites/pages.test.ts). Pages walk the agent's index.
  yield* sql`ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_seq_key`
  // An agent's deliveries page in outbox order: (agent_id, created_at) sorted each page by id.
  yield* sql`CREATE INDEX webhook_deliveries_agent_seq_idx ON webhook_deliveries (agent_id, seq)`
  yield* sql`DROP INDEX webhook_deliveries_agent_idx`
  // GET /portfolio pages acquisitions on (agent_id, seq DESC); as above, seq's UNIQUE index only
  // offered the planner a backward walk of everyone's rows.
  yield* sql`ALTER TABLE acquisitions DROP CONSTRAINT acquisitions_seq_key`
  // Starting an acquisition asks whether the agent already owns the project: one row, not its history.
  yield* sql`CREATE INDEX acquisitions_paid_idx ON acquisitions (agent_id, project_id) WHERE status = 'paid'`
  // GET /negotiations orders ids in byte order (COLLATE "C", as the memory store does), which an
  // index in the database's collation cannot serve: each side is re-indexed in that order.
  yield* sql`DROP INDEX negotiations_buyer_idx`
  yield* sql`DROP INDEX negotiations_seller_idx`
  yield* sql`CREATE INDEX negotiations_buyer_page_idx ON negotiations (buyer_agent_id, created_at DESC, id COLLATE "C" DESC)`
  yield* sql`CREATE INDEX negotiations_seller_page_idx ON negotiations (seller_agent_id, created_at DESC, id COLLATE "C" DESC)`
  // GET /transactions?status=failed|refunded walked the agent's whole (agent, created_at, id) index
  // when it had few such rows. Partial indexes hold only those rows, so a purchase that completes
  // (nearly all of them) writes no extra index entry; a refund moves its row in.
  yield* sql`CREATE INDEX commerce_transactions_buyer_status_idx ON commerce_transactions (buyer_agent_id, status, created_at DESC, id DESC) WHERE status <> 'completed'`
  yield* sql`CREATE INDEX commerce_transactions_seller_status_idx ON commerce_transactions (seller_agent_id, status, created_at DESC, id DESC) WHERE status <> 'completed'`
})
