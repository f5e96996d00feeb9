// A live seller lists the negotiations waiting for its answer (GET /negotiations?role=seller&
// status=awaiting_seller). On the seller's whole page index that walk reads every closed negotiation
// to find the few open ones; a partial index holds only the waiting rows, and a row leaves it when
// the seller (or the automatic seller) answers.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX negotiations_seller_waiting_idx ON negotiations (seller_agent_id, created_at DESC, id COLLATE "C" DESC)
    WHERE status = 'awaiting_seller'`
})
