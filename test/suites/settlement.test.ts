// Settlement suite, on every storage: the one writer of purchases. A settlement from a wallet or a
// saga's escrow writes the balanced entry, the transaction, the delivery and the two events in one
// unit of work (or nothing: a short wallet leaves no trace); a failed delivery is recorded without a
// charge or an event; a refund reverses the entry exactly. The event payload is the documented one.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import {
  escrowAccount,
  EXTERNAL_GRANTS,
  InsufficientFunds,
  PLATFORM_FEES,
  walletAccount
} from "../../src/schema/ledger/ledger.js"
import { eventCatalogue } from "../../src/schema/webhooks/payloads.js"
import { Ids } from "../../src/services/platform/Db.js"
import { atomically } from "../fixtures/atomically.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
import type { ServiceRecord } from "../../src/schema/commerce/services.js"
import { Events } from "../../src/services/events/Events.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { DEFAULT_POLICY } from "../../src/schema/wallet/policy.js"
import { AnalyticsStore } from "../../src/services/reputation/AnalyticsStore.js"
import { Settlement } from "../../src/services/purchases/Settlement.js"
import { noReferences, type PurchaseRecord } from "../../src/services/purchases/records.js"
import { forEachStorage } from "../fixtures/suite.js"

const offer = {
  serviceId: "svc_settle",
  serviceName: "Settlement test service",
  category: "data",
  pricingModel: "per_call" as const,
  sellerAgentId: "agt_settle_seller",
  tierId: "basic",
  listPriceCents: 1000
}

const purchase = (
  buyer: string,
  transactionId: string,
  priceCents: number,
  overrides: Partial<PurchaseRecord> = {}
): { readonly purchase: PurchaseRecord; readonly delivery: { latencyMs: number; output: unknown } } => ({
  purchase: {
    transactionId,
    source: "buy",
    buyerAgentId: buyer,
    offer,
    priceCents,
    references: { ...noReferences, idempotencyKey: `key-${transactionId}` },
    at: "2026-11-25T12:00:00.000Z",
    ...overrides
  },
  delivery: { latencyMs: 42, output: { answer: 42 } }
})

const decodes = (type: "transaction.completed" | "transaction.refunded", data: unknown) =>
  Schema.is(eventCatalogue[type].schema)(data)

forEachStorage(
  "settlement",
  (storage) =>
    Settlement.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, Events.layer)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    const fund = (agentId: string, amount: number) =>
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${agentId}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(agentId),
          amount
        })
      )

    it.effect(
      "from a wallet: one balanced purchase entry (85/15), the transaction and delivery, and the same event to buyer and seller",
      () =>
        Effect.gen(function* () {
          const settlement = yield* Settlement
          const ledger = yield* Ledger
          const buyer = "agt_settle_b1"
          yield* fund(buyer, 5_000)
          const feesBefore = yield* ledger.balance(PLATFORM_FEES)
          const { tx, delivery } = yield* atomically(
            settlement.settle({ ...purchase(buyer, "tx_settle_1", 1_000), from: { _tag: "wallet" }, memo: "svc/basic" })
          )
          expect(tx).toMatchObject({
            status: "completed",
            priceCents: 1_000,
            sellerCents: 850,
            feeCents: 150,
            idempotencyKey: "key-tx_settle_1"
          })
          expect(delivery).toMatchObject({ success: true, latencyMs: 42, output: { answer: 42 }, error: null })
          expect(yield* ledger.balance(walletAccount(buyer))).toBe(4_000)
          expect((yield* ledger.balance(PLATFORM_FEES)) - feesBefore).toBe(150)
          const [entry] = yield* ledger.entriesByReference("tx_settle_1")
          expect(entry.kind).toBe("purchase")
          expect(entry.id).toBe(tx.ledgerEntryId)
          expect(entry.postings.reduce((s, p) => s + p.amount, 0)).toBe(0)
          const stored = yield* Effect.flatMap(PurchaseStore, (s) => s.getTransaction("tx_settle_1"))
          expect(stored?.tx).toEqual(tx)
          expect(stored?.delivery).toEqual(delivery)
          const events = yield* Effect.flatMap(Events, (e) =>
            Effect.all([e.listForAgent(buyer, 5), e.listForAgent(offer.sellerAgentId, 5)])
          )
          const [toBuyer, toSeller] = events.map((list) =>
            list.find((e) => e.type === "transaction.completed" && e.data.transactionId === "tx_settle_1")!
          )
          expect(toBuyer.data).toEqual({ ...toSeller.data, role: "buyer" })
          expect(toSeller.data.role).toBe("seller")
          expect(toBuyer.data).toEqual({
            transactionId: "tx_settle_1",
            serviceId: offer.serviceId,
            tierId: "basic",
            priceCents: 1_000,
            sellerCents: 850,
            feeCents: 150,
            source: "buy",
            ledgerEntryId: tx.ledgerEntryId,
            negotiationId: null,
            approvalId: null,
            sagaId: null,
            challengeId: null,
            role: "buyer"
          })
          expect(decodes("transaction.completed", toBuyer.data)).toBe(true)
        })
    )

    it.effect("a short wallet: InsufficientFunds and nothing written (no entry, no transaction, no event)", () =>
      Effect.gen(function* () {
        const settlement = yield* Settlement
        const buyer = "agt_settle_b2"
        yield* fund(buyer, 500)
        const failure = yield* Effect.flip(
          atomically(
            settlement.settle({ ...purchase(buyer, "tx_settle_2", 1_000), from: { _tag: "wallet" }, memo: "x" })
          )
        )
        expect(failure).toBeInstanceOf(InsufficientFunds)
        expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(buyer)))).toBe(500)
        expect(yield* Effect.flatMap(Ledger, (l) => l.entriesByReference("tx_settle_2"))).toEqual([])
        expect(yield* Effect.flatMap(PurchaseStore, (s) => s.getTransaction("tx_settle_2"))).toBeUndefined()
        expect(
          (yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer, 5))).filter(
            (e) => e.type === "transaction.completed"
          )
        ).toEqual([])
      })
    )

    it.effect(
      "a purchase lock reads the wallet's whole balance (base and credits) under the lock, makes a first-timer's rows, and the settlement spends it without locking again",
      () =>
        Effect.gen(function* () {
          const wallets = yield* WalletStore
          const settlement = yield* Settlement
          const ledger = yield* Ledger
          const initial = (agentId: string) => ({
            agentId,
            policy: DEFAULT_POLICY,
            createdAt: "2026-11-25T12:00:00.000Z",
            updatedAt: "2026-11-25T12:00:00.000Z"
          })
          // A first-timer: no wallet row, no balance row.
          const fresh = yield* atomically(wallets.lockForPurchase(initial("agt_settle_lock_new")))
          expect(fresh.balanceCents).toBe(0)
          expect(fresh.wallet.agentId).toBe("agt_settle_lock_new")
          // A buyer funded twice and paid for a sale: credits (shard rows on Postgres) and the base row both count.
          const buyer = "agt_settle_lock"
          yield* fund(buyer, 700)
          yield* Effect.flatMap(Ledger, (l) =>
            l.transfer({
              kind: "grant",
              reference: "fund-more",
              from: EXTERNAL_GRANTS,
              to: walletAccount(buyer),
              amount: 300
            })
          )
          yield* atomically(
            settlement.settle({
              ...purchase(buyer, "tx_settle_lock_1", 400),
              from: { _tag: "wallet" },
              memo: "svc/basic"
            })
          )
          const locked = yield* atomically(wallets.lockForPurchase(initial(buyer)))
          expect(locked.balanceCents).toBe(600)
          expect(locked.balanceCents).toBe(yield* ledger.balance(walletAccount(buyer)))
          // Settled against the balance read under the lock: the check uses it (here a smaller one
          // than stored, so the refusal can only come from it), and nothing is written.
          const refused = yield* Effect.flip(
            atomically(
              settlement.settle({
                ...purchase(buyer, "tx_settle_lock_2", 500),
                from: { _tag: "wallet", lockedBalanceCents: 450 },
                memo: "svc/basic"
              })
            )
          )
          expect(refused).toMatchObject({ _tag: "InsufficientFunds", balanceCents: 450, missingCents: 50 })
          expect(yield* ledger.entriesByReference("tx_settle_lock_2")).toEqual([])
          // In one unit of work, as a purchase runs: lock, then settle with what the lock read.
          const { tx } = yield* atomically(
            Effect.flatMap(wallets.lockForPurchase(initial(buyer)), ({ balanceCents }) =>
              settlement.settle({
                ...purchase(buyer, "tx_settle_lock_3", 600),
                from: { _tag: "wallet", lockedBalanceCents: balanceCents },
                memo: "svc/basic"
              })
            )
          )
          expect(tx.status).toBe("completed")
          expect(yield* ledger.balance(walletAccount(buyer))).toBe(0)
          expect((yield* ledger.check).ok).toBe(true)
        })
    )

    it.effect(
      "opening a purchase: the wallet locked with its balance, the service as the catalogue has it (undefined when unknown), rows made for a first-timer",
      () =>
        Effect.gen(function* () {
          const settlement = yield* Settlement
          const catalog = yield* CatalogStore
          const service: ServiceRecord = {
            id: "svc_settle_open",
            sellerAgentId: offer.sellerAgentId,
            name: "Open test",
            description: "a service to open a purchase of",
            category: "data",
            pricingModel: "per_call",
            tags: ["open"],
            tiers: [
              {
                id: "basic",
                name: "Basic",
                priceCents: 1_000,
                unit: "call",
                includedUnits: null,
                sla: { uptimePct: 99, p95LatencyMs: 500, supportWindow: "24/7" }
              }
            ],
            negotiation: { floorPct: 80, counterStepPct: 20 },
            status: "active",
            ratingSum: 9,
            ratingCount: 2,
            fulfilment: { mode: "pull", url: null, secret: null },
            createdAt: "2026-11-25T12:00:00.000Z",
            updatedAt: "2026-11-25T12:30:00.000Z"
          } as unknown as ServiceRecord
          yield* catalog.insert(service)
          const buyer = "agt_settle_open"
          const first = yield* atomically(settlement.open(buyer, service.id))
          expect(first.balanceCents).toBe(0)
          expect(first.wallet).toMatchObject({ agentId: buyer, policy: DEFAULT_POLICY })
          expect(first.service).toEqual(service)
          expect(first.service).toEqual(yield* catalog.get(service.id))
          yield* fund(buyer, 1_234)
          const again = yield* atomically(settlement.open(buyer, "svc_no_such_service"))
          expect(again.service).toBeUndefined()
          expect(again.balanceCents).toBe(1_234)
          expect(again.wallet).toEqual(first.wallet)
        })
    )

    it.effect(
      "from a saga's escrow: an escrow_settle entry referenced by the saga, the escrow emptied, source saga",
      () =>
        Effect.gen(function* () {
          const settlement = yield* Settlement
          const ledger = yield* Ledger
          const buyer = "agt_settle_b3"
          yield* fund(buyer, 2_000)
          yield* ledger.transfer({
            kind: "escrow_hold",
            reference: "saga_settle_1",
            from: walletAccount(buyer),
            to: escrowAccount("saga_settle_1"),
            amount: 777
          })
          const { tx } = yield* atomically(
            settlement.settle({
              ...purchase(buyer, "tx_settle_3", 777, {
                source: "saga",
                references: { ...noReferences, sagaId: "saga_settle_1" }
              }),
              from: { _tag: "escrow", sagaId: "saga_settle_1" },
              memo: "saga"
            })
          )
          expect(yield* ledger.balance(escrowAccount("saga_settle_1"))).toBe(0)
          const entries = yield* ledger.entriesByReference("saga_settle_1")
          expect(entries.map((e) => e.kind)).toEqual(
            ["escrow_hold", "escrow_settle"].filter((k) => entries.some((e) => e.kind === k))
          )
          expect(entries.find((e) => e.kind === "escrow_settle")?.id).toBe(tx.ledgerEntryId)
          expect(tx).toMatchObject({ sellerCents: 660, feeCents: 117 })
          const event = (yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer, 5))).find(
            (e) => e.type === "transaction.completed"
          )!
          expect(event.data).toMatchObject({ source: "saga", sagaId: "saga_settle_1", ledgerEntryId: tx.ledgerEntryId })
          expect(decodes("transaction.completed", event.data)).toBe(true)
        })
    )

    it.effect(
      "a failed delivery is recorded (failed, nothing charged, no entry, no event); a refund reverses a settled one exactly and tells both",
      () =>
        Effect.gen(function* () {
          const settlement = yield* Settlement
          const ledger = yield* Ledger
          const buyer = "agt_settle_b4"
          yield* fund(buyer, 3_000)
          const failed = yield* atomically(
            settlement.recordFailed(purchase(buyer, "tx_settle_4", 1_000), "the seller did not deliver")
          )
          expect(failed.tx).toMatchObject({ status: "failed", sellerCents: 0, feeCents: 0, ledgerEntryId: null })
          expect(failed.delivery).toMatchObject({ success: false, output: null, error: "the seller did not deliver" })
          expect(yield* ledger.entriesByReference("tx_settle_4")).toEqual([])
          expect(yield* ledger.balance(walletAccount(buyer))).toBe(3_000)

          const sellerBefore = yield* ledger.balance(walletAccount(offer.sellerAgentId))
          const { tx } = yield* atomically(
            settlement.settle({ ...purchase(buyer, "tx_settle_5", 1_000), from: { _tag: "wallet" }, memo: "x" })
          )
          const refunded = yield* atomically(
            settlement.refund(tx, {
              disputeId: "dsp_settle",
              reason: "accepted",
              at: "2026-11-26T00:00:00.000Z",
              memo: "refund"
            })
          )
          expect(refunded.tx).toMatchObject({ status: "refunded", refundedAt: "2026-11-26T00:00:00.000Z" })
          expect(yield* ledger.balance(walletAccount(buyer))).toBe(3_000)
          expect(yield* ledger.balance(walletAccount(offer.sellerAgentId))).toBe(sellerBefore)
          expect((yield* ledger.entriesByReference("tx_settle_5")).map((e) => e.kind).sort()).toEqual([
            "purchase",
            "refund"
          ])
          for (const agentId of [buyer, offer.sellerAgentId]) {
            const event = (yield* Effect.flatMap(Events, (e) => e.listForAgent(agentId, 10))).find(
              (e) => e.type === "transaction.refunded" && e.data.transactionId === "tx_settle_5"
            )!
            expect(event.data).toEqual({
              transactionId: "tx_settle_5",
              amountCents: 1_000,
              sellerCents: 850,
              feeCents: 150,
              disputeId: "dsp_settle",
              reason: "accepted"
            })
            expect(decodes("transaction.refunded", event.data)).toBe(true)
          }
          expect((yield* ledger.check).ok).toBe(true)
        })
    )

    it.effect(
      "two agents buying from each other at the same moment: every purchase settles exactly (a deadlock between them is run again)",
      () =>
        Effect.gen(function* () {
          const settlement = yield* Settlement
          const ledger = yield* Ledger
          const [a, b] = ["agt_settle_x1", "agt_settle_x2"]
          yield* fund(a, 100_000)
          yield* fund(b, 100_000)
          const from = (buyer: string, seller: string, i: number) =>
            atomically(
              settlement.settle({
                ...purchase(buyer, `tx_x_${buyer}_${i}`, 100, {
                  offer: { ...offer, serviceId: `svc_of_${seller}`, sellerAgentId: seller }
                }),
                from: { _tag: "wallet" },
                memo: "x"
              })
            )
          const feesBefore = yield* ledger.balance(PLATFORM_FEES)
          const results = yield* Effect.all(
            Array.from({ length: 30 }, (_, i) => [from(a, b, i), from(b, a, i)]).flat(),
            { concurrency: "unbounded" }
          )
          expect(results.every((r) => r.tx.status === "completed")).toBe(true)
          // Each paid 30 × 100 and earned 30 × 85.
          expect(yield* ledger.balance(walletAccount(a))).toBe(100_000 - 3_000 + 2_550)
          expect(yield* ledger.balance(walletAccount(b))).toBe(100_000 - 3_000 + 2_550)
          expect((yield* ledger.balance(PLATFORM_FEES)) - feesBefore).toBe(900)
          expect((yield* ledger.check).ok).toBe(true)
        })
    )

    it.effect(
      "the buyer's running spend follows settlements and refunds (day and month), and equals a recomputation",
      () =>
        Effect.gen(function* () {
          const settlement = yield* Settlement
          const wallets = yield* WalletStore
          const buyer = "agt_settle_b5"
          yield* fund(buyer, 10_000)
          const now = yield* Clock.currentTimeMillis
          const at = new Date(now).toISOString()
          const day = new Date(
            Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate())
          ).toISOString()
          const month = new Date(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1)).toISOString()
          const spent = Effect.all([wallets.spentSince(buyer, day), wallets.spentSince(buyer, month)])
          expect(yield* spent).toEqual([0, 0])
          const first = yield* atomically(
            settlement.settle({ ...purchase(buyer, "tx_settle_6", 700, { at }), from: { _tag: "wallet" }, memo: "x" })
          )
          yield* atomically(
            settlement.settle({ ...purchase(buyer, "tx_settle_7", 300, { at }), from: { _tag: "wallet" }, memo: "x" })
          )
          yield* atomically(settlement.recordFailed(purchase(buyer, "tx_settle_8", 5_000, { at }), "no delivery"))
          expect(yield* spent).toEqual([1_000, 1_000])
          yield* atomically(settlement.refund(first.tx, { disputeId: null, reason: "test", at, memo: "refund" }))
          expect(yield* spent).toEqual([300, 300])
          // A settlement that fails (a short wallet) leaves the total as it was.
          yield* Effect.flip(
            atomically(
              settlement.settle({
                ...purchase(buyer, "tx_settle_9", 1_000_000, { at }),
                from: { _tag: "wallet" },
                memo: "x"
              })
            )
          )
          expect(yield* spent).toEqual([300, 300])
          // Usage per service and day comes from the same kind of totals: the refunded call is gone.
          const usage = yield* Effect.flatMap(AnalyticsStore, (a) =>
            a.usage(buyer, day, new Date(now + 1).toISOString())
          )
          expect(usage.byService).toEqual([
            { key: offer.serviceId, label: offer.serviceName, calls: 1, spentCents: 300 }
          ])
          expect(usage.byDay).toEqual([{ key: day.slice(0, 10), label: day.slice(0, 10), calls: 1, spentCents: 300 }])
          expect(yield* wallets.spendDrift).toEqual([])
          // Only day boundaries are asked for (the totals are per UTC day).
          expect(yield* Effect.exit(wallets.spentSince(buyer, at.replace(/T.*/, "T12:34:56.000Z")))).toMatchObject({
            _tag: "Failure"
          })
        })
    )
  }
)
