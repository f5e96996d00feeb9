// Per-agent running counters (migration 0018), on every storage: after buys (some at once, some
// failed), refunds, reviews and disputes resolved both ways, GET /stats', /reputation's and the
// recommendations' figures equal a recomputation (AnalyticsStore.counterDrift is empty) and the
// pinned numbers; a seller's counters are spread over shard rows; a tampered counter is reported.
import { unlimitedWallet } from "../fixtures/money.js"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import type { PublishServiceBody } from "../../src/schema/commerce/services.js"
import type { TransactionRecord } from "../../src/schema/commerce/transactions.js"
import { Agent } from "../../src/schema/keys/keys.js"
import { CommerceSeedLive, PLATFORM_SELLERS_ACCOUNT } from "../../src/layers/seed/seedCommerce.js"
import { COUNTER_SHARDS } from "../../src/schema/reputation/counters.js"
import { MemoryPurchaseStore } from "../../src/layers/purchases/PurchaseStore.memory.js"
import { MemoryDisputeStore } from "../../src/layers/commerce/DisputeStore.memory.js"
import { MemoryAnalyticsStore } from "../../src/layers/reputation/AnalyticsStore.memory.js"
import { MemoryDb } from "../../src/layers/storage/memory/MemoryDb.js"
import type { Caller } from "../../src/services/keys/Caller.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { NoNegotiatedPrices } from "../../src/services/purchases/NegotiatedPrices.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { Events } from "../../src/services/events/Events.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { AnalyticsStore } from "../../src/services/reputation/AnalyticsStore.js"
import { Reputation } from "../../src/services/reputation/Reputation.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { forEachStorage } from "../fixtures/suite.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"
import { AcpRefundListenersLive } from "../../src/services/acp/AcpRefundListeners.js"

const caller = (agentId: string, accountId = `acct_${agentId}`): Caller => ({
  accountId,
  agentId,
  keyId: `key_${agentId}`,
  permissions: new Set(["commerce:read", "commerce:buy", "commerce:sell"]),
  via: "key"
})

const tier = (id: string, priceCents: number) => ({
  id,
  name: id,
  priceCents,
  unit: "call",
  includedUnits: null,
  sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
})

const body = (name: string, priceCents: number, category: string): PublishServiceBody =>
  ({
    name,
    description: `${name} for tests`,
    category,
    pricingModel: "per_call",
    tags: ["test"],
    tiers: [tier("unit", priceCents)],
    negotiation: { floorPct: 80, counterStepPct: 20 },
    // The counters are under test, not fulfilment: the seller is the platform's, answered at once.
    fulfilment: { mode: "simulated" }
  }) as unknown as PublishServiceBody

forEachStorage(
  "agent counters",
  (storage) =>
    Layer.mergeAll(Commerce.layer, Disputes.layer, Reputation.layer).pipe(
      Layer.provideMerge(NoNegotiatedPrices),
      Layer.provideMerge(Wallet.layer),
      Layer.provideMerge(Layer.mergeAll(Catalog.layer, Ledger.layer, Events.layer, Keys.layer)),
      Layer.provideMerge(CommerceSeedLive),
      Layer.provideMerge(SagaOrderOwnersLive),
      Layer.provideMerge(AcpRefundListenersLive),
      Layer.provideMerge(AcpRefundListenersLive),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it, c) => {
    it.effect(
      "buys (10 at once, one failed), refunds, reviews and disputes both ways: every counter equals a recomputation and the pinned figures",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const disputes = yield* Disputes
          const reputation = yield* Reputation
          const analytics = yield* AnalyticsStore
          const ids = yield* Ids
          const seller = yield* ids.make("agt")
          const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
          yield* Effect.flatMap(KeysStore, (k) =>
            k.insertAgent(
              Agent.make({
                id: seller,
                accountId: PLATFORM_SELLERS_ACCOUNT,
                name: "Counter seller",
                organization: null,
                createdAt
              })
            )
          )
          const big = yield* Effect.flatMap(Catalog, (cat) =>
            cat.publish(caller(seller, PLATFORM_SELLERS_ACCOUNT), body("Counter Big", 1000, "analytics"))
          )
          const small = yield* Effect.flatMap(Catalog, (cat) =>
            cat.publish(caller(seller, PLATFORM_SELLERS_ACCOUNT), body("Counter Small", 300, "writing"))
          )
          const buyers = yield* Effect.forEach([1, 2, 3, 4, 5], () => ids.make("agt"))
          yield* Effect.forEach(
            buyers,
            (b) =>
              Effect.andThen(
                unlimitedWallet(b),
                Effect.flatMap(Wallet, (w) => w.topup(b, 20_000))
              ),
            {
              discard: true
            }
          )
          const [b1, b2] = buyers
          const buy = (buyer: string, serviceId: string, input: unknown = 1) =>
            Effect.map(commerce.buy({ caller: caller(buyer), serviceId, tierId: "unit", input }), (p) => p.transaction!)
          // 10 purchases of the big service at once, two by each buyer: they race on the seller's rows.
          const raced = yield* Effect.forEach([...buyers, ...buyers], (b) => buy(b, big.id), { concurrency: 10 })
          expect(raced.every((t) => t.status === "completed")).toBe(true)
          const s1 = yield* buy(b1, small.id)
          const failed = yield* buy(b2, small.id, { simulate: "fail" })
          expect(failed.status).toBe("failed")
          // Reviews: 5 and 2 stars on two of the raced purchases, 4 on the small one.
          const ofBuyer = (b: string) => raced.filter((t) => t.buyerAgentId === b)
          yield* commerce.review(b1, ofBuyer(b1)[0].id, { rating: 5 })
          yield* commerce.review(b2, ofBuyer(b2)[0].id, { rating: 2 })
          yield* commerce.review(b1, s1.id, { rating: 4 })
          // b1's second big purchase refunded by a dispute the seller accepts (the seller lost it);
          // b2's second contested and rejected after review (b2 lost it).
          const accepted = yield* disputes.open(b1, { transactionId: ofBuyer(b1)[1].id, reason: "wrong" })
          yield* disputes.respond(seller, accepted.id, { action: "accept" })
          const contested = yield* disputes.open(b2, { transactionId: ofBuyer(b2)[1].id, reason: "did not like it" })
          yield* disputes.respond(seller, contested.id, { action: "contest" })
          yield* TestClock.adjust(24 * 3_600_000)
          yield* disputes.resolveDue
          expect((yield* disputes.get(b2, contested.id)).status).toBe("resolved_rejected")

          expect(yield* analytics.counterDrift).toEqual([])
          // Seller: 11 completed sales then one refunded → 10 (9 × 1000 + 300); 12 deals (the failed one is none).
          expect(yield* analytics.agentTotals(seller)).toEqual({
            purchases: 0,
            spentCents: 0,
            sales: 10,
            earnedCents: 7_905,
            feesGeneratedCents: 1_395,
            refundsReceivedCents: 0
          })
          const [sIn] = yield* analytics.reputationInputs([seller])
          expect(sIn).toEqual({
            agentId: seller,
            reviewsReceived: 3,
            ratingSum: 11,
            completedDeals: 11,
            volumeCents: 9_300,
            disputesLost: 1
          })
          expect(yield* analytics.agentTotals(b1)).toEqual({
            purchases: 2,
            spentCents: 1_300,
            sales: 0,
            earnedCents: 0,
            feesGeneratedCents: 0,
            refundsReceivedCents: 1_000
          })
          const inputs = new Map((yield* analytics.reputationInputs([b1, b2, b1])).map((i) => [i.agentId, i]))
          expect(inputs.size).toBe(2)
          expect(inputs.get(b1)).toEqual({
            agentId: b1,
            reviewsReceived: 0,
            ratingSum: 0,
            completedDeals: 3,
            volumeCents: 1_300,
            disputesLost: 0
          })
          expect(inputs.get(b2)).toEqual({
            agentId: b2,
            reviewsReceived: 0,
            ratingSum: 0,
            completedDeals: 2,
            volumeCents: 2_000,
            disputesLost: 1
          })
          expect(yield* analytics.topServices({ seller }, 5)).toEqual([
            { serviceId: big.id, serviceName: "Counter Big", count: 9, volumeCents: 9_000 },
            { serviceId: small.id, serviceName: "Counter Small", count: 1, volumeCents: 300 }
          ])
          expect(yield* analytics.topServices({ buyer: b1 }, 5)).toEqual([
            { serviceId: big.id, serviceName: "Counter Big", count: 1, volumeCents: 1_000 },
            { serviceId: small.id, serviceName: "Counter Small", count: 1, volumeCents: 300 }
          ])
          expect(
            [...(yield* analytics.categoryHistory(b1))].sort((a, b) => a.category.localeCompare(b.category))
          ).toEqual([
            { category: "analytics", count: 1 },
            { category: "writing", count: 1 }
          ])
          expect(yield* analytics.categoryHistory(b2)).toEqual([{ category: "analytics", count: 2 }])
          // The service's views agree: stats and reputation read the same counters.
          const stats = yield* reputation.stats(seller)
          expect(stats.agent).toMatchObject({
            sales: 10,
            earnedCents: 7_905,
            topServicesSold: [
              { serviceId: big.id, count: 9 },
              { serviceId: small.id, count: 1 }
            ]
          })
          expect((yield* reputation.reputationOf(seller)).factors).toMatchObject({
            reviews: { count: 3 },
            disputes: { lost: 1, completedDeals: 11 },
            volume: { volumeCents: 9_300 }
          })
          // The leaderboard's "every agent" includes a buyer whose only purchase failed.
          const onlyFailed = yield* ids.make("agt")
          yield* Effect.flatMap(Wallet, (w) => w.topup(onlyFailed, 1_000))
          yield* buy(onlyFailed, small.id, { simulate: "fail" })
          expect((yield* analytics.reputationInputs("all")).find((i) => i.agentId === onlyFailed)).toEqual({
            agentId: onlyFailed,
            reviewsReceived: 0,
            ratingSum: 0,
            completedDeals: 0,
            volumeCents: 0,
            disputesLost: 0
          })
          expect(yield* analytics.counterDrift).toEqual([])

          const sqlClient = yield* Effect.serviceOption(SqlClient.SqlClient)
          expect(sqlClient._tag).toBe(c.name === "memory" ? "None" : "Some")
          if (sqlClient._tag === "Some") {
            const sql = sqlClient.value
            // The seller's counters are spread over shard rows (12 transactions with random ids), at most 16.
            const [{ n }] = yield* sql<{
              n: number
            }>`SELECT count(*)::int AS n FROM agent_counters WHERE agent_id = ${seller}`
            expect(n).toBeGreaterThan(1)
            expect(n).toBeLessThanOrEqual(COUNTER_SHARDS)
            // A tampered counter is reported, with both values.
            yield* sql`UPDATE agent_counters SET sales = sales + 1 WHERE agent_id = ${seller} AND shard = (SELECT min(shard) FROM agent_counters WHERE agent_id = ${seller})`
            yield* sql`UPDATE agent_service_counts SET count = count + 2 WHERE agent_id = ${b1} AND role = 'buyer' AND service_id = ${small.id}`
            expect(yield* analytics.counterDrift).toEqual(
              [
                { agentId: b1, counter: `buyer:${small.id}:count`, kept: 3, recomputed: 1 },
                { agentId: seller, counter: "sales", kept: 11, recomputed: 10 }
              ].sort((a, b) => (a.agentId < b.agentId ? -1 : 1))
            )
          }
        })
    )
  }
)

describe("agent counters [memory engine]", () => {
  const stores = Layer.mergeAll(MemoryPurchaseStore, MemoryAnalyticsStore, MemoryDisputeStore).pipe(
    Layer.provideMerge(MemoryDb.layer)
  )
  layer(stores)((it) => {
    it.effect("a tampered counter is reported with both values; the writes keep no drift", () =>
      Effect.gen(function* () {
        const store = yield* PurchaseStore
        const analytics = yield* AnalyticsStore
        const db = yield* MemoryDb
        const tx: TransactionRecord = {
          id: "tx_mem_1",
          buyerAgentId: "agt_mb",
          sellerAgentId: "agt_ms",
          serviceId: "svc_m",
          serviceName: "M",
          category: "c",
          pricingModel: "per_call",
          tierId: "t",
          listPriceCents: 100,
          priceCents: 100,
          sellerCents: 85,
          feeCents: 15,
          negotiationId: null,
          approvalId: null,
          idempotencyKey: null,
          status: "completed",
          ledgerEntryId: null,
          createdAt: "2026-11-25T12:00:00.000Z",
          refundedAt: null,
          promisedP95LatencyMs: 1000,
          promisedUptimePct: 99
        }
        const delivery = {
          transactionId: tx.id,
          serviceId: "svc_m",
          tierId: "t",
          success: true,
          latencyMs: 1,
          output: null,
          error: null,
          deliveredAt: tx.createdAt
        }
        yield* store.insertTransaction(tx, delivery)
        yield* store.updateTransaction({ ...tx, status: "refunded", refundedAt: tx.createdAt })
        expect(yield* analytics.counterDrift).toEqual([])
        expect(yield* analytics.agentTotals("agt_mb")).toMatchObject({ purchases: 0, refundsReceivedCents: 100 })
        const counters = db.table<string, Record<string, number>>("agent_counters")
        yield* counters.set("agt_ms", { ...counters.get("agt_ms")!, sales: 7 })
        expect(yield* analytics.counterDrift).toEqual([{ agentId: "agt_ms", counter: "sales", kept: 7, recomputed: 0 }])
      })
    )
  })
})
