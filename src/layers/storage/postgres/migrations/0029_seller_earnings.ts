// The owner's view of a seller's earnings today and this month sums the seller's share of its
// completed sales placed since the month's start. A partial index holding only completed sales,
// with the share in it, answers that from the index alone, reading the month's rows and never older
// history (the all-time figure is the running counter of migration 0018).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX commerce_transactions_seller_earned_idx ON commerce_transactions (seller_agent_id, created_at)
    INCLUDE (seller_cents) WHERE status = 'completed'`
})
