// A seller's earnings per UTC day (the day each sale was placed), kept by the transaction writes
// themselves (insert and status change, in the same statement, on the transaction's counter shard so
// that one seller's many buyers spread over 16 rows), backfilled from the completed sales. The owner's
// page reads today's and the month's earnings from at most 31 days × 16 shards, however many sales
// the month had; the partial index of migration 0029 that it read before is dropped. `npm run check`
// recomputes the rows (counter "earned:<day>").
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE seller_earning_days (
    agent_id text NOT NULL,
    day date NOT NULL,
    shard smallint NOT NULL,
    earned_cents bigint NOT NULL,
    PRIMARY KEY (agent_id, day, shard)
  )`
  yield* sql`INSERT INTO seller_earning_days (agent_id, day, shard, earned_cents)
    SELECT seller_agent_id, (created_at AT TIME ZONE 'UTC')::date, 0, SUM(seller_cents)
    FROM commerce_transactions WHERE status = 'completed' AND seller_cents <> 0
    GROUP BY 1, 2`
  yield* sql`DROP INDEX IF EXISTS commerce_transactions_seller_earned_idx`
})
