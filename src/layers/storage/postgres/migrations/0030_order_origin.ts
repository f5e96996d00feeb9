// A saga's deliver step places an order for the seller too, but the money stays in the saga's
// escrow: the order names its saga (null: a buy's order, holding its own escrow). The buyer's held
// money counts a saga's order once, through the saga; the index serves the wake of a saga by its
// order and the saga's look-up of the order it waits on.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN saga_id text`
  yield* sql`CREATE INDEX orders_saga_idx ON orders (saga_id) WHERE saga_id IS NOT NULL`
})
