// An x402 refund is recorded before it is first sent (issue 49: exactly once on the chain): the
// signed transaction, its hash and the refund wallet's nonce it spends, kept while `refunding`.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE x402_payments ADD COLUMN IF NOT EXISTS refund_attempt jsonb`
})
