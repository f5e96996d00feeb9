// A pending transaction (an order waiting for its seller) has settled nothing yet: like a failed
// one, its seller and fee shares are 0, not the price.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE commerce_transactions DROP CONSTRAINT commerce_transactions_check`
  yield* sql`ALTER TABLE commerce_transactions ADD CONSTRAINT commerce_transactions_check
    CHECK (status IN ('failed', 'pending') OR seller_cents + fee_cents = price_cents)`
})
