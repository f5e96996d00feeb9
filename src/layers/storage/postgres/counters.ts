// Postgres per-agent running counters (migration 0018), the one module that writes and recomputes
// the counter tables: the CTEs that add a transaction's, a review's or a dispute's deltas
// (src/schema/reputation/counters.ts) in the commerce writer's own statement, and the
// recomputation (COUNTER_DRIFT_SQL) that `npm run check`, the reputation domain's drift check and the
// fault tests compare them with.
import type { SqlClient } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import {
  COUNTER_COLUMNS,
  COUNTER_NAMES,
  type CounterDelta,
  type EarningDayDelta,
  type ServiceCountDelta
} from "../../../schema/reputation/counters.js"

const setAdd = COUNTER_NAMES.map(
  (k) => `${COUNTER_COLUMNS[k]} = agent_counters.${COUNTER_COLUMNS[k]} + excluded.${COUNTER_COLUMNS[k]}`
).join(", ")
const columns = COUNTER_NAMES.map((k) => COUNTER_COLUMNS[k]).join(", ")

/**
 * `name AS (INSERT INTO agent_counters …)`: each delta added to the agent's row `shard`, rows in
 * agent order (the deltas come sorted), once per row of `from` (e.g. `FROM t`: only if the
 * transaction was written). Callers pass at least one delta.
 */
export const countersCte = (
  sql: SqlClient.SqlClient,
  name: string,
  deltas: ReadonlyArray<CounterDelta>,
  shard: number,
  from: Fragment
) =>
  sql`${sql.literal(name)} AS (
    INSERT INTO agent_counters (agent_id, shard, ${sql.literal(columns)})
    SELECT v.* FROM ${from} CROSS JOIN (VALUES ${sql.csv(
      deltas.map(
        (d) => sql`(${d.agentId}, ${shard}::smallint, ${sql.csv(COUNTER_NAMES.map((k) => sql`${d.delta[k]}::bigint`))})`
      )
    )}) v
    ON CONFLICT (agent_id, shard) DO UPDATE SET ${sql.literal(setAdd)})`

/**
 * `name AS (INSERT INTO agent_service_counts …)`: the seller side on the transaction's shard (its
 * buyers spread), the buyer side on shard 0 (only the buyer's own purchases write it, and they are
 * serialised by its wallet row anyway). The name kept is the greatest seen, as usage's.
 */
export const serviceCountsCte = (
  sql: SqlClient.SqlClient,
  name: string,
  deltas: ReadonlyArray<ServiceCountDelta>,
  shard: number,
  from: Fragment
) =>
  sql`${sql.literal(name)} AS (
    INSERT INTO agent_service_counts (agent_id, role, service_id, shard, service_name, count, volume_cents)
    SELECT v.* FROM ${from} CROSS JOIN (VALUES ${sql.csv(
      [...deltas]
        .sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : a.role < b.role ? -1 : 1))
        .map(
          (d) =>
            sql`(${d.agentId}, ${d.role}, ${d.serviceId}, ${d.role === "seller" ? shard : 0}::smallint, ${d.serviceName}, ${d.count}::int, ${d.volumeCents}::bigint)`
        )
    )}) v
    ON CONFLICT (agent_id, role, service_id, shard) DO UPDATE SET count = agent_service_counts.count + excluded.count,
      volume_cents = agent_service_counts.volume_cents + excluded.volume_cents,
      service_name = GREATEST(agent_service_counts.service_name, excluded.service_name))`

/**
 * `name AS (INSERT INTO seller_earning_days …)`: the seller's earnings of the sale's UTC day, on the
 * transaction's shard (its buyers spread over the rows, as the counters'), once per row of `from`.
 */
export const earningDaysCte = (
  sql: SqlClient.SqlClient,
  name: string,
  d: EarningDayDelta,
  shard: number,
  from: Fragment
) =>
  sql`${sql.literal(name)} AS (
    INSERT INTO seller_earning_days (agent_id, day, shard, earned_cents)
    SELECT ${d.agentId}, ${d.day}::date, ${shard}::smallint, ${d.cents}::bigint FROM ${from}
    ON CONFLICT (agent_id, day, shard) DO UPDATE SET earned_cents = seller_earning_days.earned_cents + excluded.earned_cents)`

/** `name AS (INSERT INTO agent_category_counts …)`: `delta` completed purchases of the buyer in the category. */
export const categoryCountsCte = (
  sql: SqlClient.SqlClient,
  name: string,
  buyer: string,
  category: string,
  delta: number,
  from: Fragment
) =>
  sql`${sql.literal(name)} AS (
    INSERT INTO agent_category_counts (agent_id, category, purchases)
    SELECT ${buyer}, ${category}, ${delta}::int FROM ${from}
    ON CONFLICT (agent_id, category) DO UPDATE SET purchases = agent_category_counts.purchases + excluded.purchases)`

const recomputedSides = `
  SELECT buyer_agent_id AS agent_id,
    (status = 'completed')::int AS purchases,
    CASE WHEN status = 'completed' THEN price_cents ELSE 0 END AS spent_cents,
    CASE WHEN status = 'refunded' THEN price_cents ELSE 0 END AS refunds_received_cents,
    0 AS sales, 0 AS earned_cents, 0 AS fees_generated_cents,
    (status NOT IN ('failed', 'pending'))::int AS deals,
    CASE WHEN status = 'completed' THEN price_cents ELSE 0 END AS volume_cents,
    0 AS reviews_received, 0 AS rating_sum, 0 AS disputes_lost
  FROM commerce_transactions
  UNION ALL
  SELECT t.seller_agent_id, 0, 0, 0,
    (t.status = 'completed')::int,
    CASE WHEN t.status = 'completed' THEN t.seller_cents ELSE 0 END,
    CASE WHEN t.status = 'completed' THEN t.fee_cents ELSE 0 END,
    (t.status NOT IN ('failed', 'pending') AND t.seller_agent_id <> t.buyer_agent_id)::int,
    CASE WHEN t.status = 'completed' AND t.seller_agent_id <> t.buyer_agent_id THEN t.price_cents ELSE 0 END,
    (t.status = 'completed' AND r.id IS NOT NULL)::int,
    CASE WHEN t.status = 'completed' THEN COALESCE(r.rating, 0) ELSE 0 END,
    0
  FROM commerce_transactions t LEFT JOIN commerce_reviews r ON r.transaction_id = t.id
  UNION ALL
  SELECT seller_agent_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (status = 'resolved_refunded')::int FROM commerce_disputes
  UNION ALL
  SELECT buyer_agent_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (status = 'resolved_rejected')::int FROM commerce_disputes`

const unpivot = (alias: string) =>
  `(VALUES ${COUNTER_NAMES.map((k) => `('${k}', ${alias}.${COUNTER_COLUMNS[k]}::bigint)`).join(", ")}) v(counter, value)`
const sums = COUNTER_NAMES.map((k) => `SUM(${COUNTER_COLUMNS[k]}) AS ${COUNTER_COLUMNS[k]}`).join(", ")

/**
 * Every counter that differs from a recomputation over all transactions, reviews and disputes:
 * rows (agent_id, counter, kept, recomputed), names as CounterDrift's. Plain SQL text, so the
 * fault tests run the same check on a data folder or database they open themselves.
 */
export const COUNTER_DRIFT_SQL = `
WITH kept AS (
  SELECT c.agent_id, v.counter, v.value FROM (SELECT agent_id, ${sums} FROM agent_counters GROUP BY agent_id) c CROSS JOIN LATERAL ${unpivot("c")}
  UNION ALL
  SELECT agent_id, role || ':' || service_id || ':count', SUM(count)::bigint FROM agent_service_counts GROUP BY agent_id, role, service_id
  UNION ALL
  SELECT agent_id, role || ':' || service_id || ':volumeCents', SUM(volume_cents)::bigint FROM agent_service_counts GROUP BY agent_id, role, service_id
  UNION ALL
  SELECT agent_id, 'category:' || category, purchases::bigint FROM agent_category_counts
  UNION ALL
  SELECT agent_id, 'earned:' || to_char(day, 'YYYY-MM-DD'), SUM(earned_cents)::bigint FROM seller_earning_days GROUP BY agent_id, day
), recomputed AS (
  SELECT c.agent_id, v.counter, v.value FROM (SELECT agent_id, ${sums} FROM (${recomputedSides}) x GROUP BY agent_id) c CROSS JOIN LATERAL ${unpivot("c")}
  UNION ALL
  SELECT buyer_agent_id, 'buyer:' || service_id || ':count', count(*) FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, service_id
  UNION ALL
  SELECT buyer_agent_id, 'buyer:' || service_id || ':volumeCents', SUM(price_cents) FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, service_id
  UNION ALL
  SELECT seller_agent_id, 'seller:' || service_id || ':count', count(*) FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, service_id
  UNION ALL
  SELECT seller_agent_id, 'seller:' || service_id || ':volumeCents', SUM(price_cents) FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, service_id
  UNION ALL
  SELECT buyer_agent_id, 'category:' || category, count(*) FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, category
  UNION ALL
  SELECT seller_agent_id, 'earned:' || to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), SUM(seller_cents)
  FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, (created_at AT TIME ZONE 'UTC')::date
)
SELECT COALESCE(k.agent_id, r.agent_id) AS agent_id, COALESCE(k.counter, r.counter) AS counter,
  COALESCE(k.value, 0)::bigint AS kept, COALESCE(r.value, 0)::bigint AS recomputed
FROM kept k FULL OUTER JOIN recomputed r ON r.agent_id = k.agent_id AND r.counter = k.counter
WHERE COALESCE(k.value, 0) <> COALESCE(r.value, 0)
ORDER BY 1, 2`
