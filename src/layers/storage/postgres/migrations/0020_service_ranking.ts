// The recommendations' kept ranking: listed services ordered by the Bayesian mean of
// their stars, (rating_sum + 3·2) / (rating_count + 2), highest first, then id — overall and per
// category. A review's rating update moves the row in the index; `GET /recommend` walks it to its
// candidates instead of taking the first 100 listed services by id (docs/commerce.md).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX commerce_services_rank_idx ON commerce_services (((rating_sum + 6)::float8 / (rating_count + 2)) DESC, id) WHERE status = 'active'`
  yield* sql`CREATE INDEX commerce_services_category_rank_idx ON commerce_services (category, ((rating_sum + 6)::float8 / (rating_count + 2)) DESC, id) WHERE status = 'active'`
})
