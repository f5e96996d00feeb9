// The promise a sale was made under, kept with it (docs/fulfilment.md, "Judged by its own promise"):
// the tier's p95 latency and uptime at the moment of purchase on the transaction and on its order,
// so the SLA report and the dispute rule judge each delivery by the promise it was sold under, not by
// the tier as its seller set it since. When the order reached its seller (`offered_at`: a pull
// seller's first listing of it, the start of a push attempt), so its latency is measured from there.
// A delivery record that does not count against its seller (`accountable` false: an order that
// expired before it ever reached its seller). Rows before this: their service's tier as it is now.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE commerce_transactions ADD COLUMN promised_p95_ms integer, ADD COLUMN promised_uptime_pct numeric`
  yield* sql`ALTER TABLE orders ADD COLUMN promised_p95_ms integer, ADD COLUMN promised_uptime_pct numeric,
    ADD COLUMN offered_at timestamptz`
  yield* sql`ALTER TABLE commerce_deliveries ADD COLUMN accountable boolean NOT NULL DEFAULT true`
  const tiers = `(SELECT s.id AS service_id, tr->>'id' AS tier_id, (tr->'sla'->>'p95LatencyMs')::integer AS p95,
      (tr->'sla'->>'uptimePct')::numeric AS uptime
    FROM commerce_services s CROSS JOIN LATERAL jsonb_array_elements(s.tiers) tr)`
  yield* sql.unsafe(`UPDATE commerce_transactions t SET promised_p95_ms = x.p95, promised_uptime_pct = x.uptime
    FROM ${tiers} x WHERE x.service_id = t.service_id AND x.tier_id = t.tier_id`)
  yield* sql.unsafe(`UPDATE orders o SET promised_p95_ms = x.p95, promised_uptime_pct = x.uptime
    FROM ${tiers} x WHERE x.service_id = o.service_id AND x.tier_id = o.tier_id`)
})
