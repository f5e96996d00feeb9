// Money-path details the mutation run (docs/testing.md) found unpinned: the ledger schema's kinds,
// fields and 402, who may loosen which policy
// field, daily ≤ monthly, how-to-fund texts and refusal messages, recharge records and their order,
// the ledger's zero-posting and message rules and its account pages, the day-boundary guard, and
// the memory store's spend-drift report (corrupted by hand, so the report must name the row).
import { MemoryAcpOrderNoticeStore } from "../../src/layers/acp/AcpOrderNoticeStore.memory.js"
import { MemoryRefusalsStore } from "../../src/layers/refusals/RefusalsStore.memory.js"
import { MemoryAuditStore } from "../../src/layers/audit/AuditStore.memory.js"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, it as vit } from "vitest"
import {
  EntryKind,
  EXTERNAL_GRANTS,
  EXTERNAL_PAYMENTS,
  InsufficientFunds,
  JournalEntry,
  mayGoNegative,
  PLATFORM_FEES,
  Posting,
  splitSettlement,
  walletAccount
} from "../../src/schema/ledger/ledger.js"
import { MemoryOrderStore } from "../../src/layers/purchases/OrderStore.memory.js"
import { MemorySagaStore } from "../../src/layers/saga/SagaStore.memory.js"
import { MemoryDb, MemoryTransactor } from "../../src/layers/storage/memory/MemoryDb.js"
import { MemoryPurchaseStoresLive } from "../../src/layers/stores.js"
import { MemoryMarketplaceStore } from "../../src/layers/marketplace/MarketplaceStore.memory.js"
import { MemoryKnowledgeStore } from "../../src/layers/knowledge/KnowledgeStore.memory.js"
import { MemoryKeysStore } from "../../src/layers/keys/KeysStore.memory.js"
import { MemoryRateLimitStore } from "../../src/layers/keys/RateLimitStore.memory.js"
import { MemoryEventStore } from "../../src/layers/events/EventStore.memory.js"
import { MemoryLedgerStore } from "../../src/layers/ledger/LedgerStore.memory.js"
import { MemorySettlementStore } from "../../src/layers/purchases/SettlementStore.memory.js"
import { MemoryNegotiationStore } from "../../src/layers/negotiation/NegotiationStore.memory.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Ids } from "../../src/services/platform/Db.js"
import { atomically } from "../fixtures/atomically.js"
import { currentIdempotencyScope } from "../../src/http/requestIdempotency.js"
import { Settlement } from "../../src/services/purchases/Settlement.js"
import { noReferences } from "../../src/services/purchases/records.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { Events } from "../../src/services/events/Events.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { NoNegotiatedPrices } from "../../src/services/purchases/NegotiatedPrices.js"
import { DEFAULT_POLICY, loosens } from "../../src/schema/wallet/policy.js"
import { commerceServices, commerceStack, fundedBuyer, ownerCaller, sellerWith, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"
import { MemoryWriteReceiptStore } from "../../src/layers/idempotency/WriteReceiptStore.memory.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"

// The ledger's schema is what the SQL stores decode rows with; the memory suites never decode, so
// the full mutation run (docs/testing.md) left every kind, field and annotation unpinned.
describe("ledger schema, account names and refusal status (pure)", () => {
  vit(
    "every entry kind decodes and nothing else does; an entry round-trips; a posting is a 3–200 character account and integer cents",
    () => {
      const kinds = [
        "funding",
        "grant",
        "purchase",
        "escrow_hold",
        "escrow_release",
        "escrow_settle",
        "refund",
        "project_creation",
        "investment",
        "adjustment"
      ]
      for (const kind of kinds) expect(Schema.decodeUnknownSync(EntryKind)(kind)).toBe(kind)
      expect(() => Schema.decodeUnknownSync(EntryKind)("")).toThrow()
      const raw = {
        id: "je_1",
        kind: "funding",
        reference: "cs_1",
        memo: "plan",
        postings: [
          { account: walletAccount("agt_1"), amount: 100 },
          { account: EXTERNAL_PAYMENTS, amount: -100 }
        ],
        createdAt: "2026-01-01T00:00:00.000Z"
      }
      const entry = Schema.decodeUnknownSync(JournalEntry)(raw)
      expect(entry).toBeInstanceOf(JournalEntry)
      expect(Schema.encodeSync(JournalEntry)(entry)).toEqual(raw)
      // Each field is checked: a wrong kind, a missing reference or a bad posting inside is refused.
      expect(() => Schema.decodeUnknownSync(JournalEntry)({ ...raw, kind: "gift" })).toThrow()
      expect(() => Schema.decodeUnknownSync(JournalEntry)({ ...raw, reference: undefined })).toThrow()
      expect(() =>
        Schema.decodeUnknownSync(JournalEntry)({ ...raw, postings: [{ account: "ab", amount: 1 }] })
      ).toThrow()
      expect(Schema.decodeUnknownSync(Posting)({ account: "abc", amount: -1 })).toEqual({ account: "abc", amount: -1 })
      expect(() => Schema.decodeUnknownSync(Posting)({ account: "ab", amount: 1 })).toThrow()
      expect(() => Schema.decodeUnknownSync(Posting)({ account: "a".repeat(201), amount: 1 })).toThrow()
      expect(() => Schema.decodeUnknownSync(Posting)({ account: "abc", amount: 1.5 })).toThrow()
      // The class's identifier names the schema in the OpenAPI document.
      expect(JournalEntry.identifier).toBe("JournalEntry")
    }
  )

  vit("the processor's account keeps its stored name and may go negative; a short wallet answers 402", () => {
    // Existing ledgers hold postings to this name: renaming it would orphan them.
    expect(EXTERNAL_PAYMENTS).toBe("external:payments")
    expect(mayGoNegative(EXTERNAL_PAYMENTS)).toBe(true)
    expect(mayGoNegative(walletAccount("agt_1"))).toBe(false)
    expect(InsufficientFunds.ast.annotations?.httpApiStatus).toBe(402)
  })

  vit(
    "outside a request the idempotency scope is the empty one (what Payments reads when no middleware set it)",
    () => {
      expect(
        Effect.runSync(
          Effect.gen(function* () {
            return yield* currentIdempotencyScope
          })
        )
      ).toBe("")
    }
  )
})

describe("wallet policy: what an agent key may change (pure)", () => {
  const base = {
    ...DEFAULT_POLICY,
    perTransactionLimitCents: 500,
    dailyLimitCents: 1000,
    monthlyLimitCents: 5000,
    allowedCategories: ["a", "b"],
    allowedSellers: ["s1"],
    approvalThresholdCents: 300,
    autonomyLevel: "semi_auto" as const,
    autoRecharge: { enabled: true, thresholdCents: 100, amountCents: 1000 }
  } as never as typeof DEFAULT_POLICY
  vit("each field: raising or removing it loosens (named), keeping or lowering it does not", () => {
    expect(loosens(base, base)).toBeNull()
    const cases: ReadonlyArray<[Partial<typeof DEFAULT_POLICY>, string | null]> = [
      [{ perTransactionLimitCents: 501 as never }, "perTransactionLimitCents"],
      [{ perTransactionLimitCents: null }, "perTransactionLimitCents"],
      [{ perTransactionLimitCents: 499 as never }, null],
      [{ dailyLimitCents: 1001 as never }, "dailyLimitCents"],
      [{ dailyLimitCents: 999 as never }, null],
      [{ monthlyLimitCents: 5001 as never }, "monthlyLimitCents"],
      [{ monthlyLimitCents: null }, "monthlyLimitCents"],
      [{ monthlyLimitCents: 4999 as never }, null],
      [{ allowedCategories: ["a", "c"] }, "allowedCategories"],
      [{ allowedCategories: null }, "allowedCategories"],
      [{ allowedCategories: ["b"] }, null],
      [{ allowedCategories: [] }, null],
      [{ allowedSellers: ["s1", "s2"] }, "allowedSellers"],
      [{ allowedSellers: null }, "allowedSellers"],
      [{ allowedSellers: ["s1"] }, null],
      [{ approvalThresholdCents: 301 as never }, "approvalThresholdCents"],
      [{ approvalThresholdCents: 299 as never }, null],
      [{ autonomyLevel: "full_auto" }, "autonomyLevel"],
      [{ autonomyLevel: "manual" }, null],
      [{ autoRecharge: { enabled: true, thresholdCents: 100 as never, amountCents: 1001 as never } }, "autoRecharge"],
      [{ autoRecharge: { enabled: true, thresholdCents: 100 as never, amountCents: 999 as never } }, null],
      [{ autoRecharge: { enabled: false, thresholdCents: 100 as never, amountCents: 5000 as never } }, null]
    ]
    for (const [patch, named] of cases) expect([patch, loosens(base, { ...base, ...patch })]).toEqual([patch, named])
    // Turning auto-recharge on at all loosens; an unlimited field stays unlimited without loosening.
    const off = {
      ...base,
      autoRecharge: { enabled: false, thresholdCents: 100, amountCents: 1000 }
    } as never as typeof DEFAULT_POLICY
    expect(loosens(off, base)).toBe("autoRecharge")
    expect(loosens(DEFAULT_POLICY, DEFAULT_POLICY)).toBeNull()
    expect(loosens(DEFAULT_POLICY, { ...DEFAULT_POLICY, allowedSellers: ["x"] })).toBeNull()
  })

  vit("the default policy is the documented one (docs/money.md, Defaults)", () => {
    expect(DEFAULT_POLICY).toEqual({
      perTransactionLimitCents: 2_000,
      dailyLimitCents: 5_000,
      monthlyLimitCents: 50_000,
      allowedCategories: null,
      allowedSellers: null,
      approvalThresholdCents: 500,
      autonomyLevel: "semi_auto",
      autoRecharge: { enabled: false, thresholdCents: 0, amountCents: 1_000 },
      frozen: false
    })
  })

  vit("splitSettlement names what it refuses", () => {
    expect(() => splitSettlement(-1)).toThrow("price must be a non-negative integer, got -1")
  })
})

forEachStorage("money details", commerceStack, (it) => {
  it.effect(
    "daily ≤ monthly: equal is accepted, one cent more refused (InvalidInput naming dailyLimitCents); loosening by a key names the field",
    () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const buyer = yield* fundedBuyer(0)
        expect(
          (yield* wallet.updatePolicy(buyer.agentId, {
            dailyLimitCents: 500 as never,
            monthlyLimitCents: 500 as never
          })).policies
        ).toMatchObject({ dailyLimitCents: 500, monthlyLimitCents: 500 })
        expect(
          yield* Effect.flip(wallet.updatePolicy(buyer.agentId, { dailyLimitCents: 501 as never }, { byOwner: true }))
        ).toMatchObject({
          _tag: "InvalidInput",
          field: "dailyLimitCents",
          message: "dailyLimitCents cannot exceed monthlyLimitCents"
        })
        expect(
          yield* Effect.flip(wallet.updatePolicy(buyer.agentId, { monthlyLimitCents: 499 as never }))
        ).toMatchObject({ _tag: "InvalidInput", field: "dailyLimitCents" })
        expect(yield* Effect.flip(wallet.updatePolicy(buyer.agentId, { monthlyLimitCents: null }))).toMatchObject({
          _tag: "Forbidden",
          message:
            "an agent key may only tighten its wallet policy; loosening monthlyLimitCents is for the account owner (dashboard)",
          permission: "owner"
        })
        expect((yield* wallet.policyOf(buyer.agentId)).dailyLimitCents).toBe(500)
        expect(yield* wallet.policyOf("agt_never_seen")).toEqual(DEFAULT_POLICY)
        const view = yield* wallet.view("agt_never_seen")
        expect(view).toMatchObject({
          balanceCents: 0,
          remainingTodayCents: 5_000,
          remainingThisMonthCents: 50_000,
          spentTodayCents: 0,
          pendingApprovals: 0
        })
      })
  )

  it.effect("refusals say why, with the numbers", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet
      const commerce = yield* Commerce
      const { agentId: seller, service } = yield* sellerWith("Messages", [tier("p300", 300)], "msg-cat")
      const buyer = yield* fundedBuyer(1_000)
      const buy = () =>
        Effect.flip(commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "p300", input: null }))
      yield* wallet.updatePolicy(buyer.agentId, { allowedSellers: ["agt_other"] }, { byOwner: true })
      expect(yield* buy()).toMatchObject({
        message: `seller ${seller} is not in the wallet's allowedSellers`,
        limitCents: null,
        attemptedCents: 300
      })
      yield* wallet.updatePolicy(
        buyer.agentId,
        { allowedSellers: null, allowedCategories: ["other"] },
        { byOwner: true }
      )
      expect(yield* buy()).toMatchObject({ message: "category msg-cat is not in the wallet's allowedCategories" })
      yield* wallet.updatePolicy(
        buyer.agentId,
        { allowedCategories: null, perTransactionLimitCents: 299 as never },
        { byOwner: true }
      )
      expect(yield* buy()).toMatchObject({ message: "300 cents is over the per-transaction limit of 299 cents" })
      yield* wallet.updatePolicy(
        buyer.agentId,
        { perTransactionLimitCents: null, dailyLimitCents: 299 as never },
        { byOwner: true }
      )
      expect(yield* buy()).toMatchObject({
        message: "0 cents spent today; 300 more would pass the daily limit of 299 cents"
      })
      yield* wallet.updatePolicy(
        buyer.agentId,
        { dailyLimitCents: null, monthlyLimitCents: 299 as never },
        { byOwner: true }
      )
      expect(yield* buy()).toMatchObject({
        message: "0 cents spent this month; 300 more would pass the monthly limit of 299 cents"
      })
      // full_auto ignores the approval threshold; semi_auto above it waits.
      yield* wallet.updatePolicy(
        buyer.agentId,
        { monthlyLimitCents: null, approvalThresholdCents: 1 as never },
        { byOwner: true }
      )
      expect(
        (yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "p300", input: 1 })).status
      ).toBe("completed")
      const poor = yield* fundedBuyer(100)
      expect(
        yield* Effect.flip(commerce.buy({ caller: poor.caller, serviceId: service.id, tierId: "p300", input: null }))
      ).toMatchObject({
        _tag: "InsufficientCredits",
        message: "the wallet holds 100 cents; 300 are needed (200 missing)",
        howToFund: wallet.howToFund
      })
    })
  )

  it.effect("fake payments: how to fund, top-up entries and the recharge record", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet
      const ledger = yield* Ledger
      const events = yield* Events
      const base = (yield* AppConfig).baseUrl
      expect(wallet.howToFund).toEqual({
        topupUrl: `${base}/api/v1/agent/commerce/wallet/topup`,
        checkoutUrl: `${base}/api/trpc/subscription.createCheckout`,
        rechargeUrl: null,
        note: "POST {amountCents} to topupUrl (fake-payments mode), or buy a plan: its credits fund the wallet (1 credit = 1 cent)",
        retry:
          "after funding, send the same request again; the same Idempotency-Key is fine: a 402 is never stored for replay"
      })
      const agent = yield* fundedBuyer(0)
      const up = yield* wallet.topup(agent.agentId, 250)
      expect(up).toMatchObject({ agentId: agent.agentId, amountCents: 250, balanceCents: 250 })
      const [entry] = yield* ledger.entriesFor(walletAccount(agent.agentId), { limit: 1 })
      expect(entry).toMatchObject({ id: up.entryId, kind: "grant", memo: "fake-payments top-up" })
      expect(entry.reference).toMatch(new RegExp(`^topup:${agent.agentId}:tu_`))
      expect(entry.id).toMatch(/^je_/)
      const r = yield* wallet.requestRecharge(agent.agentId, 400, "why not")
      expect(r).toMatchObject({ agentId: agent.agentId, amountCents: 400, reason: "why not", status: "granted" })
      expect(r.id).toMatch(/^rch_/)
      const [grant] = yield* ledger.entriesByReference(r.id)
      expect(grant).toMatchObject({ id: r.ledgerEntryId, kind: "grant", memo: "auto-recharge: why not" })
      const recharged = (yield* events.listForAgent(agent.agentId, 5)).find((e) => e.type === "wallet.recharged")!
      expect(recharged.data).toEqual({ rechargeId: r.id, amountCents: 400, balanceCents: 650, automatic: true })
      // A purchase that crosses the threshold says why in the recharge's memo.
      const { service } = yield* sellerWith("Recharge memo", [tier("p1", 1)])
      yield* wallet.updatePolicy(
        agent.agentId,
        { autoRecharge: { enabled: true, thresholdCents: 650 as never, amountCents: 100 as never } },
        { byOwner: true }
      )
      yield* Effect.flatMap(Commerce, (c) =>
        c.buy({ caller: agent.caller, serviceId: service.id, tierId: "p1", input: null })
      )
      const [last] = yield* ledger.entriesFor(walletAccount(agent.agentId), { limit: 1 })
      expect(last.memo).toBe("auto-recharge: balance 649 fell below 650")
    })
  )

  it.effect(
    "ledger: an entry that moves nothing, or does not balance, is refused and says its sum; memo defaults to empty",
    () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        expect(
          yield* Effect.flip(
            ledger.transfer({
              kind: "grant",
              reference: "zero",
              from: EXTERNAL_GRANTS,
              to: walletAccount("z"),
              amount: 0
            })
          )
        ).toMatchObject({ _tag: "InvalidInput", field: "postings" })
        expect(
          yield* Effect.flip(
            ledger.post({
              kind: "adjustment",
              reference: "odd",
              postings: [
                { account: EXTERNAL_GRANTS, amount: -3 },
                { account: walletAccount("z"), amount: 5 }
              ]
            })
          )
        ).toMatchObject({ message: "ledger entry must have integer postings summing to zero (sum 2)" })
        expect(
          yield* Effect.flip(
            ledger.post({
              kind: "adjustment",
              reference: "frac",
              postings: [
                { account: EXTERNAL_GRANTS, amount: -1.5 },
                { account: walletAccount("z"), amount: 1 },
                { account: PLATFORM_FEES, amount: 0.5 }
              ]
            })
          )
        ).toMatchObject({ _tag: "InvalidInput" })
        // Postings to one account are merged, a zero one dropped.
        const merged = yield* ledger.post({
          kind: "adjustment",
          reference: "merge",
          postings: [
            { account: EXTERNAL_GRANTS, amount: -7 },
            { account: walletAccount("z"), amount: 3 },
            { account: walletAccount("z"), amount: 4 },
            { account: PLATFORM_FEES, amount: 0 }
          ]
        })
        expect(merged.postings).toEqual([
          { account: EXTERNAL_GRANTS, amount: -7 },
          { account: walletAccount("z"), amount: 7 }
        ])
        expect(merged.memo).toBe("")
        expect(
          yield* Effect.flip(
            ledger.transfer({
              kind: "purchase",
              reference: "short",
              from: walletAccount("z"),
              to: PLATFORM_FEES,
              amount: 8
            })
          )
        ).toMatchObject({
          message: "wallet:z has 7 cents; 8 needed",
          account: walletAccount("z")
        })
        // An external account may go below zero (it is debited by every grant); a wallet may not.
        expect(yield* ledger.balance(EXTERNAL_GRANTS)).toBeLessThan(0)
      })
  )

  it.effect(
    "a settlement whose entry a saga already posted writes the transaction and events only (no second entry)",
    () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const events = yield* Events
        const settlement = yield* Settlement
        const offer = {
          serviceId: "svc_posted",
          serviceName: "Posted",
          category: "c",
          pricingModel: "per_call" as const,
          sellerAgentId: "agt_posted_seller",
          tierId: "t",
          listPriceCents: 100,
          promise: { p95LatencyMs: 1000, uptimePct: 99 }
        }
        const { tx } = yield* atomically(
          settlement.settle({
            purchase: {
              transactionId: "tx_posted",
              source: "saga",
              buyerAgentId: "agt_posted_buyer",
              offer,
              priceCents: 100,
              references: { ...noReferences, sagaId: "saga_posted" },
              at: "2026-11-25T12:00:00.000Z"
            },
            delivery: { latencyMs: 1, output: null },
            from: { _tag: "posted", entryId: "je_posted" },
            memo: "posted"
          })
        )
        expect(tx).toMatchObject({ status: "completed", ledgerEntryId: "je_posted", sellerCents: 85, feeCents: 15 })
        expect(yield* ledger.entriesByReference("tx_posted")).toEqual([])
        expect(yield* ledger.balance(walletAccount("agt_posted_buyer"))).toBe(0)
        expect(yield* ledger.balance(walletAccount("agt_posted_seller"))).toBe(0)
        const toSeller = (yield* events.listForAgent("agt_posted_seller", 5)).find(
          (e) => e.type === "transaction.completed"
        )!
        expect(toSeller.data).toMatchObject({
          transactionId: "tx_posted",
          ledgerEntryId: "je_posted",
          sagaId: "saga_posted",
          source: "saga"
        })
      }).pipe(Effect.provide(Settlement.layer))
  )

  it.effect(
    "ledger pages: newest first, `limit` at most, `before` continues after an entry, an unknown cursor ends",
    () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const account = walletAccount("pages")
        const ids: Array<string> = []
        for (let i = 1; i <= 4; i++)
          ids.push(
            (yield* ledger.transfer({
              kind: "grant",
              reference: `page-${i}`,
              from: EXTERNAL_GRANTS,
              to: account,
              amount: i
            })).id
          )
        expect((yield* ledger.entriesFor(account, { limit: 1 })).map((e) => e.id)).toEqual([ids[3]])
        expect((yield* ledger.entriesFor(account, { limit: 10 })).map((e) => e.id)).toEqual([...ids].reverse())
        expect((yield* ledger.entriesFor(account, { limit: 2, before: ids[3] })).map((e) => e.id)).toEqual([
          ids[2],
          ids[1]
        ])
        expect((yield* ledger.entriesFor(account, { limit: 2, before: ids[0] })).map((e) => e.id)).toEqual([])
        expect(yield* ledger.entriesFor(walletAccount("never-posted"), { limit: 5 })).toEqual([])
        expect(yield* ledger.entriesByReference("never-referenced")).toEqual([])
      })
  )

  it.effect("spend totals are read from a UTC day boundary only; anything else is a defect", () =>
    Effect.gen(function* () {
      const store = yield* WalletStore
      expect(yield* store.spentSince("agt_nobody", "2026-03-01T00:00:00.000Z")).toBe(0)
      for (const bad of [
        "2026-03-01T00:00:00.001Z",
        "2026-03-01T00:00:01.000Z",
        "2026-03-01T00:01:00.000Z",
        "2026-03-01T01:00:00.000Z"
      ]) {
        const exit = yield* Effect.exit(store.spentSince("agt_nobody", bad))
        expect(exit._tag).toBe("Failure")
        expect(String(exit)).toContain(`spentSince needs a UTC day boundary, got ${bad}`)
      }
    })
  )

  it.effect("pending approvals are counted per agent", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet
      const commerce = yield* Commerce
      const { service } = yield* sellerWith("Counted", [tier("p1", 1)])
      const a = yield* fundedBuyer(10)
      const b = yield* fundedBuyer(10)
      yield* wallet.updatePolicy(a.agentId, { autonomyLevel: "manual" })
      yield* wallet.updatePolicy(b.agentId, { autonomyLevel: "manual" })
      yield* commerce.buy({ caller: a.caller, serviceId: service.id, tierId: "p1", input: 1 })
      yield* commerce.buy({ caller: a.caller, serviceId: service.id, tierId: "p1", input: 2 })
      yield* commerce.buy({ caller: b.caller, serviceId: service.id, tierId: "p1", input: 3 })
      expect((yield* wallet.view(a.agentId)).pendingApprovals).toBe(2)
      expect((yield* wallet.view(b.agentId)).pendingApprovals).toBe(1)
      // A decided approval no longer counts.
      const [first] = (yield* commerce.listApprovals(ownerCaller("acct_money"), "pending")).data.filter(
        (x) => x.agentId === a.agentId
      )
      yield* commerce.decline(ownerCaller("acct_money"), first.id)
      expect((yield* wallet.view(a.agentId)).pendingApprovals).toBe(1)
    })
  )
})

forEachStorage(
  "money details, stripe payments",
  commerceStack,
  (it) => {
    it.effect("how to fund without top-ups; requested recharges listed oldest first, up to the limit", () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const base = (yield* AppConfig).baseUrl
        expect(wallet.howToFund).toEqual({
          topupUrl: null,
          checkoutUrl: `${base}/api/trpc/subscription.createCheckout`,
          rechargeUrl: null,
          note: "buy a plan through checkoutUrl (its credits fund the wallet, 1 credit = 1 cent), or enable auto-recharge with PATCH /wallet",
          retry:
            "after funding, send the same request again; the same Idempotency-Key is fine: a 402 is never stored for replay"
        })
        expect(yield* Effect.flip(wallet.topup("agt_x", 1))).toMatchObject({
          message:
            "top-up is only available in fake-payments mode; fund the wallet through a plan checkout or a recharge"
        })
        const before = (yield* wallet.listRequestedRecharges(1000)).length
        const first = yield* wallet.requestRecharge("agt_r1", 100, "first")
        yield* TestClock.adjust(1000)
        const second = yield* wallet.requestRecharge("agt_r2", 200, "second")
        expect(first).toMatchObject({ status: "requested", ledgerEntryId: null, amountCents: 100, reason: "first" })
        const listed = yield* wallet.listRequestedRecharges(1000)
        expect(listed.length).toBe(before + 2)
        expect(listed.slice(-2).map((r) => r.id)).toEqual([first.id, second.id])
        expect((yield* wallet.listRequestedRecharges(1)).length).toBe(1)
        expect(yield* wallet.balance("agt_r1")).toBe(0)
      })
    )
  },
  { payments: "stripe" }
)

// The memory store's spend-drift report over its own tables, corrupted by hand.
const memoryStores = Layer.mergeAll(
  MemoryTransactor,
  MemoryPurchaseStoresLive,
  MemoryMarketplaceStore,
  MemoryKnowledgeStore,
  MemoryKeysStore,
  MemoryRateLimitStore,
  MemoryLedgerStore,
  MemorySettlementStore.pipe(
    Layer.provide([MemoryLedgerStore, MemoryPurchaseStoresLive, MemoryEventStore, MemoryOrderStore, MemoryKeysStore])
  ),
  MemoryEventStore,
  MemoryNegotiationStore,
  MemoryAuditStore,
  MemoryRefusalsStore,
  MemoryWriteReceiptStore,
  MemoryOrderStore,
  MemorySagaStore,
  MemoryAcpOrderNoticeStore
).pipe(Layer.provideMerge(MemoryDb.layer), Layer.provideMerge(AppConfig.test({ storage: "memory" })))

layer(
  commerceServices.pipe(
    Layer.provideMerge(NoNegotiatedPrices),
    Layer.provideMerge(SagaOrderOwnersLive),
    Layer.provideMerge(memoryStores),
    Layer.provideMerge(Ids.Live)
  )
)("spend drift, memory store", (it) => {
  it.effect(
    "kept totals equal to the purchases report nothing; a changed day or service cell is named with both numbers",
    () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const disputes = yield* Disputes
        const store = yield* WalletStore
        const db = yield* MemoryDb
        expect(yield* store.spendDrift).toEqual([]) // no transactions at all
        expect(yield* Effect.flatMap(Ledger, (l) => l.check)).toEqual({
          totalCents: 0,
          mismatches: [],
          negative: [],
          ok: true
        }) // an empty ledger
        const { agentId: seller, service } = yield* sellerWith("Drift", [tier("p100", 100)])
        const buyer = yield* fundedBuyer(1_000)
        const a = yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "p100", input: 1 })
        yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "p100", input: 2 })
        yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "p100",
          input: { simulate: "fail" }
        })
        const d = yield* disputes.open(buyer.agentId, { transactionId: a.transaction!.id, reason: "x" })
        yield* disputes.respond(seller, d.id, { action: "accept" })
        expect(yield* store.spendDrift).toEqual([])
        const day = a.transaction!.createdAt.slice(0, 10)
        const spend = db.table<string, number>("agent_spend_days")
        const usage = db.table<string, Record<string, { calls: number; spentCents: number; label: string }>>(
          "agent_usage_days"
        )
        const key = `${buyer.agentId}|${day}`
        expect(spend.get(key)).toBe(100)
        yield* spend.set(key, 150)
        expect(yield* store.spendDrift).toEqual([
          {
            agentId: buyer.agentId,
            day,
            serviceId: null,
            kept: 150,
            recomputed: 100,
            keptCalls: null,
            recomputedCalls: null
          }
        ])
        yield* spend.set(key, 100)
        const cell = usage.get(key)![service.id]
        expect(cell).toMatchObject({ calls: 1, spentCents: 100 })
        yield* usage.set(key, { [service.id]: { ...cell, calls: 2 } })
        expect(yield* store.spendDrift).toEqual([
          {
            agentId: buyer.agentId,
            day,
            serviceId: service.id,
            kept: 100,
            recomputed: 100,
            keptCalls: 2,
            recomputedCalls: 1
          }
        ])
        yield* usage.set(key, { [service.id]: { ...cell, spentCents: 90 } })
        expect(yield* store.spendDrift).toEqual([
          {
            agentId: buyer.agentId,
            day,
            serviceId: service.id,
            kept: 90,
            recomputed: 100,
            keptCalls: 1,
            recomputedCalls: 1
          }
        ])
        // Kept rows with no purchases behind them (sorted by agent and day), and purchases with no kept row.
        yield* usage.set(key, {})
        yield* spend.set(`agt_ghost_b|${day}`, 5)
        yield* spend.set(`agt_ghost_a|${day}`, 6)
        // Inserted b before a: the report must still sort them.
        yield* usage.set(`agt_ghost_b|${day}`, { svc_ghost: { calls: 0, spentCents: 8, label: "ghost" } })
        yield* usage.set(`agt_ghost_a|${day}`, { svc_ghost: { calls: 0, spentCents: 7, label: "ghost" } })
        // Day rows first, then service rows, each sorted by (agent, day[, service]).
        const byKey = (
          x: { agentId: string; serviceId: string | null },
          y: { agentId: string; serviceId: string | null }
        ) => (`${x.agentId}|${x.serviceId}` < `${y.agentId}|${y.serviceId}` ? -1 : 1)
        expect(yield* store.spendDrift).toEqual([
          {
            agentId: "agt_ghost_a",
            day,
            serviceId: null,
            kept: 6,
            recomputed: 0,
            keptCalls: null,
            recomputedCalls: null
          },
          {
            agentId: "agt_ghost_b",
            day,
            serviceId: null,
            kept: 5,
            recomputed: 0,
            keptCalls: null,
            recomputedCalls: null
          },
          ...[
            {
              agentId: buyer.agentId,
              day,
              serviceId: service.id,
              kept: 0,
              recomputed: 100,
              keptCalls: 0,
              recomputedCalls: 1
            },
            {
              agentId: "agt_ghost_a",
              day,
              serviceId: "svc_ghost",
              kept: 7,
              recomputed: 0,
              keptCalls: 0,
              recomputedCalls: 0
            },
            {
              agentId: "agt_ghost_b",
              day,
              serviceId: "svc_ghost",
              kept: 8,
              recomputed: 0,
              keptCalls: 0,
              recomputedCalls: 0
            }
          ].sort(byKey)
        ])
      })
  )
})
