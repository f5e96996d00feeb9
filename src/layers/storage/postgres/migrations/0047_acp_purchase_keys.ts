// ACP purchase keys that no client can send (src/schema/acp/sessions.ts purchaseKeyOf): a checkout
// session's purchase, its order while the seller works and its approval are found by the key
// `acp <session id>` (a space: an Idempotency-Key a client sends is visible ASCII only), no longer
// `acp:<session id>`, which a REST buy could send too. The purchases made before are renamed. A
// client's own purchase keyed `acp:cs_…` before this change cannot be told apart from a session's
// and is renamed with them: it is read as the session's, as it was before.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const table of ["commerce_transactions", "commerce_approvals", "orders"]) {
    yield* sql.unsafe(
      `UPDATE ${table} SET idempotency_key = 'acp ' || substr(idempotency_key, 5) WHERE idempotency_key LIKE 'acp:cs\\_%'`
    )
  }
})
