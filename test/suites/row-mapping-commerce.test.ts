// The purchase path's hand-mapped rows, on the SQL storages: the wallet lock a paid call takes
// (WalletStore.lockForPurchase) reads its row without a row Schema, so this pins its mapping
// against the decoded row `get` returns (a wallet with a non-default policy, its timestamps and
// its whole balance, and a first-timer's rows). The settlement's open statement is pinned the same
// way in test/suites/settlement.test.ts ("opening a purchase").
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { mapServiceRow, ServiceRow } from "../../src/layers/commerce/CatalogStore.postgres.js"
import { mapTxPageRow, toTxRow, TxJoinRow } from "../../src/layers/purchases/transactions.postgres.js"
import type { WalletRecord } from "../../src/schema/commerce/wallets.js"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { cents } from "../../src/schema/platform/common.js"
import { DEFAULT_POLICY } from "../../src/schema/wallet/policy.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Ids, Transactor } from "../../src/services/platform/Db.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { forEachStorage } from "../fixtures/suite.js"

forEachStorage(
  "row mapping: the purchase lock",
  (storage) => Ledger.layer.pipe(Layer.provideMerge(storage), Layer.provideMerge(Ids.Live)),
  (it) => {
    it.effect("lockForPurchase maps the wallet row exactly as the decoded `get` does, with the balance", () =>
      Effect.gen(function* () {
        const wallets = yield* WalletStore
        const ledger = yield* Ledger
        const { atomically } = yield* Transactor
        const wallet: WalletRecord = {
          agentId: "agt_rowmap_1",
          policy: {
            ...DEFAULT_POLICY,
            perTransactionLimitCents: cents(700),
            dailyLimitCents: null,
            allowedCategories: ["data", "text"],
            autonomyLevel: "semi_auto",
            autoRecharge: { enabled: true, thresholdCents: cents(100), amountCents: cents(2_000) }
          },
          createdAt: "2026-11-20T08:15:30.123Z",
          updatedAt: "2026-11-21T09:00:00.000Z"
        }
        yield* wallets.put(wallet)
        yield* ledger.transfer({
          kind: "grant",
          reference: "fund-rowmap-1",
          from: EXTERNAL_GRANTS,
          to: walletAccount(wallet.agentId),
          amount: 1_234
        })
        const locked = yield* atomically(wallets.lockForPurchase({ ...wallet, policy: DEFAULT_POLICY }))
        expect(locked).toEqual({ wallet, balanceCents: 1_234 })
        expect(locked.wallet).toEqual(yield* wallets.get(wallet.agentId))
      })
    )

    it.effect("a first-timer's lock makes the rows: the wallet as given, balance 0, the same as `get` reads", () =>
      Effect.gen(function* () {
        const wallets = yield* WalletStore
        const { atomically } = yield* Transactor
        const initial: WalletRecord = {
          agentId: "agt_rowmap_new",
          policy: DEFAULT_POLICY,
          createdAt: "2026-11-22T00:00:00.000Z",
          updatedAt: "2026-11-22T00:00:00.000Z"
        }
        const locked = yield* atomically(wallets.lockForPurchase(initial))
        expect(locked).toEqual({ wallet: initial, balanceCents: 0 })
        expect(yield* wallets.get(initial.agentId)).toEqual(initial)
      })
    )
  },
  undefined,
  { only: ["embedded", "postgres"] }
)

// A transactions page is a hot read, so its rows are mapped by hand (mapTxPageRow) rather than
// decoded: the mapping must give exactly what the row Schema's decode gives, for the shapes the
// driver returns (Date timestamps, nulls where there is no delivery, review or dispute).
describe("row mapping: a transactions page", () => {
  const base = {
    id: "tx_rowmap_1",
    buyerAgentId: "agt_b",
    sellerAgentId: "agt_s",
    serviceId: "svc_1",
    serviceName: "Summaries",
    category: "text",
    pricingModel: "per_call",
    tierId: "lite",
    listPriceCents: 250,
    priceCents: 200,
    sellerCents: 170,
    feeCents: 30,
    negotiationId: "neg_1",
    approvalId: null,
    idempotencyKey: "key-1",
    status: "completed",
    ledgerEntryId: "ent_1",
    createdAt: new Date("2026-11-20T08:15:30.123Z"),
    refundedAt: null
  }
  const none = {
    dServiceId: null,
    dTierId: null,
    dSuccess: null,
    dLatencyMs: null,
    dOutput: null,
    dError: null,
    dDeliveredAt: null,
    rId: null,
    rReviewerAgentId: null,
    rRating: null,
    rText: null,
    rCreatedAt: null,
    disputeId: null
  }
  const full = {
    ...base,
    status: "refunded",
    refundedAt: new Date("2026-11-21T10:00:00.000Z"),
    dServiceId: "svc_1",
    dTierId: "lite",
    dSuccess: true,
    dLatencyMs: 42,
    dOutput: { text: "done", nested: [1, 2] },
    dError: null,
    dDeliveredAt: new Date("2026-11-20T08:15:31.000Z"),
    rId: "rev_1",
    rReviewerAgentId: "agt_b",
    rRating: 4,
    rText: "good",
    rCreatedAt: "2026-11-20T09:00:00.000Z",
    disputeId: "dsp_1"
  }
  const decode = Schema.decodeUnknownSync(TxJoinRow)

  it("a bare row, one with only a delivery, and one with its delivery, review, dispute and refund map as the Schema decodes them", () => {
    const deliveredOnly = {
      ...full,
      status: "completed",
      refundedAt: null,
      rId: null,
      rReviewerAgentId: null,
      rRating: null,
      rText: null,
      rCreatedAt: null,
      disputeId: null
    }
    for (const raw of [{ ...base, ...none }, deliveredOnly, full]) {
      expect(mapTxPageRow(raw)).toStrictEqual(toTxRow(decode(raw)))
    }
    expect(mapTxPageRow({ ...base, ...none })).toMatchObject({
      delivery: undefined,
      review: undefined,
      disputeId: null
    })
    expect(mapTxPageRow(deliveredOnly).delivery?.deliveredAt).toBe("2026-11-20T08:15:31.000Z")
    expect(mapTxPageRow(full).tx.refundedAt).toBe("2026-11-21T10:00:00.000Z")
    expect(mapTxPageRow(full).review?.createdAt).toBe("2026-11-20T09:00:00.000Z")
  })
})

// A catalogue page is a hot read too: its rows are mapped by hand (mapServiceRow), which must give
// exactly what ServiceRow's decode gives for what the driver returns (jsonb parsed, Date timestamps).
describe("row mapping: a catalogue page", () => {
  const raw = {
    id: "svc_rowmap_1",
    sellerAgentId: "agt_s",
    name: "Summaries",
    description: "Short summaries of long text",
    category: "text",
    pricingModel: "per_call",
    tags: ["summary", "text"],
    tiers: [
      {
        id: "lite",
        name: "Lite",
        priceCents: 200,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 2_000, supportWindow: "business hours" }
      },
      {
        id: "pro",
        name: "Pro",
        priceCents: 900,
        unit: "month",
        includedUnits: 1_000,
        sla: { uptimePct: 99.9, p95LatencyMs: 800, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 80, counterStepPct: 20 },
    fulfilment: { mode: "push", url: "https://seller.example/orders", secret: "whsec_c2VjcmV0" },
    status: "active",
    ratingSum: 17,
    ratingCount: 4,
    createdAt: new Date("2026-11-20T08:15:30.123Z"),
    updatedAt: new Date("2026-11-21T09:00:00.000Z")
  }

  it("maps a row as the Schema decodes it", () => {
    expect(mapServiceRow(raw)).toStrictEqual(Schema.decodeUnknownSync(ServiceRow)(raw))
    expect(mapServiceRow(raw).updatedAt).toBe("2026-11-21T09:00:00.000Z")
  })
})
