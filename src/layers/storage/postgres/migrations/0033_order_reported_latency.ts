// The handling time a seller reports with its delivery is kept beside the platform's measure, for the
// seller's records; the SLA report and reputation read only the platform's (latency_ms).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN reported_latency_ms bigint`
})
