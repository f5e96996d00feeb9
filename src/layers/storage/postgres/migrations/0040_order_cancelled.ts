// A buyer may cancel its order before the seller answers (issue 50, A2A CancelTask): the order's
// status gains `cancelled` (docs/fulfilment.md "States").
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_status_check`
  yield* sql`ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('pending', 'delivered', 'failed', 'expired', 'cancelled'))`
})
