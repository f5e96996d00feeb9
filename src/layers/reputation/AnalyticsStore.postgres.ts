// Postgres AnalyticsStore: reputation inputs, totals, top services, usage and categories, read from
// the running counters and totals the commerce writes keep (src/layers/storage/postgres/counters.ts
// owns the counter tables and their recomputation), never from an agent's history. Rows are decoded.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { dayBoundary, utcDay } from "../../schema/wallet/policy.js"
import { AnalyticsStore } from "../../services/reputation/AnalyticsStore.js"
import { COUNTER_DRIFT_SQL } from "../storage/postgres/counters.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows } from "../storage/postgres/rows.js"

const InputsRow = Schema.Struct({
  agentId: Schema.String,
  reviewsReceived: Schema.Number,
  ratingSum: Schema.Number,
  completedDeals: Schema.Number,
  volumeCents: Schema.Number,
  disputesLost: Schema.Number
})
const TotalsRow = Schema.Struct({
  purchases: Schema.Number,
  spentCents: Schema.Number,
  sales: Schema.Number,
  earnedCents: Schema.Number,
  feesGeneratedCents: Schema.Number,
  refundsReceivedCents: Schema.Number
})
const ServiceCountRow = Schema.Struct({
  serviceId: Schema.String,
  serviceName: Schema.String,
  count: Schema.Number,
  volumeCents: Schema.Number
})
const PlatformRow = Schema.Struct({
  transactions: Schema.Number,
  volumeCents: Schema.Number,
  feesCents: Schema.Number,
  buyers: Schema.Number,
  sellers: Schema.Number
})
const CountRow = Schema.Struct({ n: Schema.Number })
const UsageRow = Schema.Struct({
  key: Schema.String,
  label: Schema.String,
  calls: Schema.Number,
  spentCents: Schema.Number
})
const CategoryRow = Schema.Struct({ category: Schema.String, count: Schema.Number })
const DriftRow = Schema.Struct({
  agentId: Schema.String,
  counter: Schema.String,
  kept: Schema.Number,
  recomputed: Schema.Number
})

export const PgAnalyticsStore = Layer.effect(
  AnalyticsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      // Every per-agent figure below reads the agent's counter rows (its shards, summed;
      // migration 0018), never its history.
      reputationInputs: Effect.fnUntraced(function* (agentIds) {
        if (agentIds !== "all" && agentIds.length === 0) return []
        const list =
          agentIds === "all"
            ? sql`(SELECT agent_id FROM agent_counters
                   UNION SELECT seller_agent_id FROM commerce_services WHERE status = 'active')`
            : sql`(SELECT DISTINCT agent_id FROM (VALUES ${sql.csv(agentIds.map((id) => sql`(${id})`))}) v(agent_id))`
        return yield* sql`
            SELECT a.agent_id, COALESCE(SUM(c.reviews_received), 0)::int AS reviews_received,
              COALESCE(SUM(c.rating_sum), 0)::int AS rating_sum, COALESCE(SUM(c.deals), 0)::int AS completed_deals,
              COALESCE(SUM(c.volume_cents), 0)::bigint AS volume_cents,
              COALESCE(SUM(c.disputes_lost), 0)::int AS disputes_lost
            FROM ${list} a LEFT JOIN agent_counters c ON c.agent_id = a.agent_id
            GROUP BY a.agent_id`.pipe(Effect.flatMap(decodeRows(InputsRow)))
      }, orUnavailable),
      agentTotals: (agentId) =>
        orUnavailable(
          sql`
            SELECT COALESCE(SUM(purchases), 0)::int AS purchases, COALESCE(SUM(spent_cents), 0)::bigint AS spent_cents,
              COALESCE(SUM(sales), 0)::int AS sales, COALESCE(SUM(earned_cents), 0)::bigint AS earned_cents,
              COALESCE(SUM(fees_generated_cents), 0)::bigint AS fees_generated_cents,
              COALESCE(SUM(refunds_received_cents), 0)::bigint AS refunds_received_cents
            FROM agent_counters WHERE agent_id = ${agentId}`
        ).pipe(
          Effect.flatMap(decodeFirst(TotalsRow)),
          Effect.map((r) => r!)
        ),
      // Per agent: its services' rows (one per shard on the seller side); platform-wide: every
      // seller's rows, i.e. O(services), not O(transactions) (and cached by Reputation).
      topServices: (by, limit) =>
        orUnavailable(
          sql`
            SELECT service_id, max(service_name) AS service_name, SUM(count)::int AS count,
              SUM(volume_cents)::bigint AS volume_cents
            FROM agent_service_counts
            WHERE ${
              by.buyer !== undefined
                ? sql`agent_id = ${by.buyer} AND role = 'buyer'`
                : by.seller !== undefined
                  ? sql`agent_id = ${by.seller} AND role = 'seller'`
                  : sql`role = 'seller'`
            }
            GROUP BY service_id HAVING SUM(count) > 0 ORDER BY SUM(count) DESC, SUM(volume_cents) DESC, service_id
            LIMIT ${limit}`
        ).pipe(Effect.flatMap(decodeRows(ServiceCountRow))),
      // From every agent's counters: O(agents), not O(transactions).
      platformTotals: orUnavailable(
        Effect.gen(function* () {
          const t = yield* sql`
            WITH per AS (SELECT agent_id, SUM(purchases) AS purchases, SUM(sales) AS sales, SUM(spent_cents) AS spent,
                           SUM(fees_generated_cents) AS fees
                         FROM agent_counters GROUP BY agent_id)
            SELECT COALESCE(SUM(sales), 0)::int AS transactions, COALESCE(SUM(spent), 0)::bigint AS volume_cents,
                   COALESCE(SUM(fees), 0)::bigint AS fees_cents,
                   (count(*) FILTER (WHERE purchases > 0))::int AS buyers,
                   (count(*) FILTER (WHERE sales > 0))::int AS sellers
            FROM per`.pipe(Effect.flatMap(decodeFirst(PlatformRow)))
          const s = yield* sql`SELECT count(*)::int AS n FROM commerce_services WHERE status = 'active'`.pipe(
            Effect.flatMap(decodeFirst(CountRow))
          )
          return { ...t!, activeServices: s!.n }
        })
      ),
      usage: Effect.fnUntraced(function* (agentId, from, to) {
        // From the running totals (at most days × services rows): `from` is a UTC day start, `to` now.
        const fromDay = yield* dayBoundary(from)
        const toDay = utcDay(new Date(Date.parse(to) - 1).toISOString())
        const byService = yield* sql`
            SELECT service_id AS key, max(service_name) AS label, SUM(calls)::int AS calls,
              SUM(spent_cents)::bigint AS spent_cents
            FROM agent_usage_days WHERE agent_id = ${agentId} AND day >= ${fromDay}::date AND day <= ${toDay}::date
            GROUP BY service_id HAVING SUM(calls) > 0 ORDER BY service_id`.pipe(Effect.flatMap(decodeRows(UsageRow)))
        const byDay = yield* sql`
            SELECT to_char(day, 'YYYY-MM-DD') AS key, to_char(day, 'YYYY-MM-DD') AS label, SUM(calls)::int AS calls,
              SUM(spent_cents)::bigint AS spent_cents
            FROM agent_usage_days WHERE agent_id = ${agentId} AND day >= ${fromDay}::date AND day <= ${toDay}::date
            GROUP BY day HAVING SUM(calls) > 0 ORDER BY day`.pipe(Effect.flatMap(decodeRows(UsageRow)))
        return { byService, byDay }
      }, orUnavailable),
      categoryHistory: (agentId) =>
        orUnavailable(
          sql`SELECT category, purchases AS count FROM agent_category_counts
              WHERE agent_id = ${agentId} AND purchases > 0`
        ).pipe(Effect.flatMap(decodeRows(CategoryRow))),
      counterDrift: orUnavailable(sql.unsafe(COUNTER_DRIFT_SQL)).pipe(Effect.flatMap(decodeRows(DriftRow)))
    }
  })
)
