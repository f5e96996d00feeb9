// A paid call (HTTP 402) on a real seller places an order too: the order names the challenge that
// paid it, so the settled transaction and its events say a paid call, not a buy, and name it.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN challenge_id text`
})
