// A refunded purchase's review no longer counts (docs/reputation.md): the reviews of transactions
// refunded before this rule are taken out of their seller's counters (into shard 0: a seller's
// counters are the sum of its shards) and out of their service's running rating.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    INSERT INTO agent_counters (agent_id, shard, reviews_received, rating_sum)
    SELECT t.seller_agent_id, 0, -count(*)::int, -sum(r.rating)::bigint
    FROM commerce_reviews r JOIN commerce_transactions t ON t.id = r.transaction_id
    WHERE t.status = 'refunded'
    GROUP BY t.seller_agent_id
    ON CONFLICT (agent_id, shard) DO UPDATE SET
      reviews_received = agent_counters.reviews_received + excluded.reviews_received,
      rating_sum = agent_counters.rating_sum + excluded.rating_sum`
  yield* sql`
    UPDATE commerce_services s SET rating_sum = s.rating_sum - x.stars, rating_count = s.rating_count - x.reviews
    FROM (
      SELECT r.service_id, count(*) AS reviews, sum(r.rating) AS stars
      FROM commerce_reviews r JOIN commerce_transactions t ON t.id = r.transaction_id
      WHERE t.status = 'refunded'
      GROUP BY r.service_id
    ) x
    WHERE s.id = x.service_id`
})
