// Migrations 0018's, 0034's and 0035's backfills (embedded and Postgres): transactions, reviews and disputes written
// with the counters, then the counter tables dropped and the migration run again as on a database
// that predates it — the backfilled counters equal the ones kept by the writes, and a recomputation.
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { DisputeRecord } from "../../src/schema/commerce/disputes.js"
import type { ServiceRecord } from "../../src/schema/commerce/services.js"
import type { TransactionRecord } from "../../src/schema/commerce/transactions.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { COUNTER_DRIFT_SQL } from "../../src/layers/storage/postgres/counters.js"
import m0018 from "../../src/layers/storage/postgres/migrations/0018_agent_counters.js"
import m0034 from "../../src/layers/storage/postgres/migrations/0034_seller_earning_days.js"
import m0035 from "../../src/layers/storage/postgres/migrations/0035_refunded_reviews.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
import { DisputeStore } from "../../src/services/commerce/DisputeStore.js"
import { embeddedCase, postgresCase } from "../fixtures/db.js"

const tx = (i: number, status: TransactionRecord["status"]): TransactionRecord => ({
  id: `tx_bf${i}`,
  buyerAgentId: `agt_bfb${i % 3}`,
  sellerAgentId: i % 7 === 0 ? `agt_bfb${i % 3}` : `agt_bfs${i % 2}`,
  serviceId: `svc_bf${i % 4}`,
  serviceName: `BF ${i % 4}`,
  category: `bfcat${i % 2}`,
  pricingModel: "per_call",
  tierId: "t",
  listPriceCents: 100 + i,
  priceCents: 100 + i,
  sellerCents: status === "failed" ? 0 : 85 + i,
  feeCents: status === "failed" ? 0 : 15,
  negotiationId: null,
  approvalId: null,
  idempotencyKey: null,
  status,
  ledgerEntryId: null,
  createdAt: new Date(Date.UTC(2026, 10, 1 + (i % 20), 12)).toISOString(),
  refundedAt: null
})

const snapshot = (sql: SqlClient.SqlClient) =>
  Effect.all([
    sql`SELECT agent_id, SUM(purchases)::int AS p, SUM(spent_cents)::bigint AS s, SUM(refunds_received_cents)::bigint AS r, SUM(sales)::int AS sa,
          SUM(earned_cents)::bigint AS e, SUM(fees_generated_cents)::bigint AS f, SUM(deals)::int AS d, SUM(volume_cents)::bigint AS v,
          SUM(reviews_received)::int AS rr, SUM(rating_sum)::bigint AS rs, SUM(disputes_lost)::int AS dl
        FROM agent_counters GROUP BY agent_id ORDER BY agent_id`,
    sql`SELECT agent_id, role, service_id, SUM(count)::int AS c, SUM(volume_cents)::bigint AS v FROM agent_service_counts
        GROUP BY agent_id, role, service_id HAVING SUM(count) <> 0 ORDER BY 1, 2, 3`,
    sql`SELECT agent_id, category, purchases FROM agent_category_counts WHERE purchases <> 0 ORDER BY 1, 2`
  ])

for (const c of [embeddedCase, postgresCase]) {
  describe.skipIf(c.skip !== undefined)(`migration 0018's backfill [${c.name}]${c.skip ? ` — ${c.skip}` : ""}`, () => {
    layer(c.layer(), { timeout: "60 seconds" })((it) => {
      it.effect("the backfilled counters equal those kept by the writes and a recomputation", () =>
        Effect.gen(function* () {
          const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
          const store = yield* PurchaseStore
          const disputes = yield* DisputeStore
          const tier = (id: string, priceCents: number) => ({
            id,
            name: id,
            priceCents,
            unit: "call",
            includedUnits: null,
            sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
          })
          yield* Effect.flatMap(CatalogStore, (cat) =>
            cat.insert({
              id: "svc_bfx",
              sellerAgentId: "agt_bfs0",
              name: "BF",
              description: "d",
              category: "bfcat0",
              pricingModel: "per_call",
              tags: [],
              tiers: [tier("a", 500), tier("b", 10)],
              negotiation: { floorPct: 80, counterStepPct: 20 },
              status: "active",
              ratingSum: 0,
              ratingCount: 0,
              fulfilment: { mode: "pull", url: null, secret: null },
              createdAt: "2026-11-01T00:00:00.000Z",
              updatedAt: "2026-11-01T00:00:00.000Z"
            } as unknown as ServiceRecord)
          )
          for (let i = 0; i < 40; i++) {
            const t = tx(i, i % 9 === 0 ? "failed" : "completed")
            yield* store.insertTransaction(t, {
              transactionId: t.id,
              serviceId: t.serviceId,
              tierId: t.tierId,
              success: t.status !== "failed",
              latencyMs: 1,
              output: null,
              error: null,
              deliveredAt: t.createdAt
            })
            if (i % 3 === 0 && t.status !== "failed")
              yield* store.insertReview({
                id: `rv_bf${i}`,
                transactionId: t.id,
                serviceId: t.serviceId,
                reviewerAgentId: t.buyerAgentId,
                sellerAgentId: t.sellerAgentId,
                rating: 1 + (i % 5),
                text: null,
                createdAt: t.createdAt
              })
            if (i % 5 === 1) {
              const d: DisputeRecord = {
                id: `dp_bf${i}`,
                transactionId: t.id,
                buyerAgentId: t.buyerAgentId,
                sellerAgentId: t.sellerAgentId,
                reason: "x",
                status: "open",
                sellerResponse: null,
                sellerNote: null,
                resolution: null,
                refundCents: 0,
                refundEntryId: null,
                respondBy: t.createdAt,
                reviewDueAt: null,
                createdAt: t.createdAt,
                updatedAt: t.createdAt,
                resolvedAt: null
              }
              yield* disputes.insert(d)
              const refunded = i % 10 === 1
              yield* disputes.update({ ...d, status: refunded ? "resolved_refunded" : "resolved_rejected" })
              if (refunded) yield* store.updateTransaction({ ...t, status: "refunded", refundedAt: t.createdAt })
            }
          }
          expect(yield* sql.unsafe(COUNTER_DRIFT_SQL)).toEqual([])
          const kept = yield* snapshot(sql)
          expect(kept[0].length).toBeGreaterThan(3)
          // Back to a database before 0018, then the migration as it would run there.
          for (const q of [
            "DROP TABLE agent_counters, agent_service_counts, agent_category_counts",
            "DROP INDEX commerce_approvals_account_page_idx, commerce_approvals_account_status_idx, commerce_disputes_buyer_page_idx, commerce_disputes_seller_page_idx",
            "DROP INDEX commerce_services_active_category_idx, commerce_services_active_seller_idx, commerce_services_active_min_tier_idx, commerce_services_active_max_tier_idx",
            "DROP INDEX IF EXISTS commerce_services_search_trgm_idx",
            "ALTER TABLE commerce_services DROP COLUMN min_tier_cents, DROP COLUMN max_tier_cents",
            "CREATE INDEX commerce_approvals_account_idx ON commerce_approvals (account_id, created_at DESC)",
            "CREATE INDEX commerce_disputes_buyer_idx ON commerce_disputes (buyer_agent_id)",
            "CREATE INDEX commerce_disputes_seller_idx ON commerce_disputes (seller_agent_id)"
          ])
            yield* sql.unsafe(q)
          // 0018's backfill, then 0035's correction (a refunded purchase's review stops counting), as on a
          // database that predates both: the data above has a reviewed purchase later refunded (i = 21).
          yield* m0018.pipe(Effect.provideService(SqlClient.SqlClient, sql))
          yield* m0035.pipe(Effect.provideService(SqlClient.SqlClient, sql))
          expect(yield* snapshot(sql)).toEqual(kept)
          expect(yield* sql.unsafe(COUNTER_DRIFT_SQL)).toEqual([])
          // An existing service got its cheapest and dearest tier.
          expect(yield* sql`SELECT min_tier_cents, max_tier_cents FROM commerce_services WHERE id = 'svc_bfx'`).toEqual(
            [{ minTierCents: 10, maxTierCents: 500 }]
          )

          // Migration 0034's backfill: the sellers' day totals kept by the writes (refunds taken off),
          // dropped and rebuilt from the sales, are the same.
          const days = sql`SELECT agent_id, to_char(day, 'YYYY-MM-DD') AS day, SUM(earned_cents)::bigint AS e
            FROM seller_earning_days GROUP BY 1, 2 HAVING SUM(earned_cents) <> 0 ORDER BY 1, 2`
          const keptDays = yield* days
          expect(keptDays.length).toBeGreaterThan(10)
          yield* sql`DROP TABLE seller_earning_days`
          yield* m0034.pipe(Effect.provideService(SqlClient.SqlClient, sql))
          expect(yield* days).toEqual(keptDays)
          expect(yield* sql.unsafe(COUNTER_DRIFT_SQL)).toEqual([])
        })
      )
    })
  })
}
