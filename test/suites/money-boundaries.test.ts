// Money-path boundaries, on every storage: each limit, threshold and expiry is tested at its value,
// one below and one above (docs/commerce.md "Boundaries" states the semantics pinned here): the
// per-transaction, daily and monthly limits, the approval threshold and approval expiry, the
// low-balance warning and auto-recharge (fake and stripe payments), top-up only in fake mode, the
// dispute filing window, idempotency lease and expiry, the ledger check and the 85/15 split.
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, it as vit } from "vitest"
import {
  EXTERNAL_GRANTS,
  JournalEntry,
  PLATFORM_FEES,
  splitSettlement,
  walletAccount
} from "../../src/schema/ledger/ledger.js"
import { MemoryDb } from "../../src/layers/storage/memory/MemoryDb.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { FILING_WINDOW_MS, Disputes } from "../../src/services/commerce/Disputes.js"
import { Events } from "../../src/services/events/Events.js"
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, Idempotency } from "../../src/services/idempotency/Idempotency.js"
import { Ledger, LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { utcMonthStart } from "../../src/schema/wallet/policy.js"
import { APPROVAL_TTL_MS } from "../../src/services/purchases/Purchases.js"
import type { Caller } from "../../src/services/keys/Caller.js"
import { Ids } from "../../src/services/platform/Db.js"
import { MemoryLedgerStore } from "../../src/layers/ledger/LedgerStore.memory.js"
import { MemoryTransactor } from "../../src/layers/storage/memory/MemoryDb.js"
import { commerceStack, DAY, fundedBuyer, ownerCaller, sellerWith, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

describe("splitSettlement boundaries (pure)", () => {
  vit("rejects a negative, fractional or unsafe price; 0 and the rounding edges split exactly", () => {
    expect(() => splitSettlement(-1)).toThrow(RangeError)
    expect(() => splitSettlement(-1000)).toThrow(RangeError)
    expect(() => splitSettlement(1.5)).toThrow(RangeError)
    expect(() => splitSettlement(Number.MAX_SAFE_INTEGER + 1)).toThrow(RangeError)
    expect(splitSettlement(0)).toEqual({ sellerCents: 0, feeCents: 0 })
    expect(
      splitSettlement(Number.MAX_SAFE_INTEGER - 1).sellerCents + splitSettlement(Number.MAX_SAFE_INTEGER - 1).feeCents
    ).toBe(Number.MAX_SAFE_INTEGER - 1)
    // 15 % of 3 is 0.45 → 0; of 4 is 0.60 → 1; of 10 is 1.50 → 2 (halves up); of 9 is 1.35 → 1.
    expect([1, 3, 4, 9, 10, 100].map((p) => splitSettlement(p).feeCents)).toEqual([0, 0, 1, 1, 2, 15])
    for (let p = 0; p <= 1000; p++) {
      const { sellerCents, feeCents } = splitSettlement(p)
      expect(sellerCents + feeCents).toBe(p)
      expect(Math.abs(feeCents - p * 0.15)).toBeLessThanOrEqual(0.5)
    }
  })
})

forEachStorage("money boundaries", commerceStack, (it) => {
  const buy = (c: { readonly caller: Caller }, serviceId: string, tierId: string, input: unknown = null) =>
    Effect.flatMap(Commerce, (commerce) => commerce.buy({ caller: c.caller, serviceId, tierId, input }))
  const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

  it.effect("per-transaction limit: a purchase equal to the limit is allowed, one cent above is refused", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet
      const { service } = yield* sellerWith("Per-tx", [tier("below", 499), tier("at", 500), tier("above", 501)])
      const buyer = yield* fundedBuyer(10_000)
      yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 500 as never })
      expect((yield* buy(buyer, service.id, "below")).status).toBe("completed")
      expect((yield* buy(buyer, service.id, "at")).status).toBe("completed")
      expect(yield* refusal(buy(buyer, service.id, "above"))).toMatchObject({
        _tag: "PolicyViolation",
        policy: "perTransactionLimit",
        limitCents: 500,
        attemptedCents: 501
      })
      expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(10_000 - 999)
    })
  )

  it.effect(
    "daily limit: spent + price equal to the limit is allowed, above refused; sales, failed and refunded purchases do not count",
    () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const disputes = yield* Disputes
        // The agent under test is also a seller: what it sells must not count against what it spends.
        const me = yield* sellerWith("Daily me", [tier("mine", 500)])
        yield* Effect.flatMap(Ledger, (l) =>
          l.transfer({
            kind: "grant",
            reference: `fund-${me.agentId}`,
            from: EXTERNAL_GRANTS,
            to: walletAccount(me.agentId),
            amount: 10_000
          })
        )
        const other = yield* sellerWith("Daily other", [
          tier("p999", 999),
          tier("p1", 1),
          tier("p700", 700),
          tier("p300", 300)
        ])
        const customer = yield* fundedBuyer(5_000)
        yield* wallet.updatePolicy(me.agentId, { dailyLimitCents: 1000 as never })
        expect((yield* buy(customer, me.service.id, "mine")).status).toBe("completed") // a sale of 500
        expect((yield* buy(me, other.service.id, "p700", { simulate: "fail" })).status).toBe("failed") // not delivered, not charged
        const refunded = yield* buy(me, other.service.id, "p300")
        const dispute = yield* disputes.open(me.agentId, {
          transactionId: refunded.transaction!.id,
          reason: "refund me"
        })
        expect((yield* disputes.respond(other.agentId, dispute.id, { action: "accept" })).status).toBe(
          "resolved_refunded"
        )
        expect((yield* wallet.view(me.agentId)).spentTodayCents).toBe(0)
        expect((yield* buy(me, other.service.id, "p999")).status).toBe("completed") // 999: one below
        expect((yield* wallet.view(me.agentId)).remainingTodayCents).toBe(1)
        expect((yield* buy(me, other.service.id, "p1")).status).toBe("completed") // 1000: at the limit
        expect(yield* refusal(buy(me, other.service.id, "p1"))).toMatchObject({
          _tag: "PolicyViolation",
          policy: "dailyLimit",
          limitCents: 1000,
          attemptedCents: 1
        })
        expect(yield* wallet.view(me.agentId)).toMatchObject({ spentTodayCents: 1000, remainingTodayCents: 0 })
      })
  )

  it.effect(
    "monthly limit: the month's purchases over several days plus the price equal to the limit is allowed, above refused; resets at the UTC month",
    () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const { service } = yield* sellerWith("Monthly", [tier("p600", 600), tier("p399", 399), tier("p1", 1)])
        const buyer = yield* fundedBuyer(10_000)
        // Start one hour into a fresh UTC month, so the days below stay in it.
        const now = yield* Clock.currentTimeMillis
        const d = new Date(utcMonthStart(now))
        const nextMonth = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
        yield* TestClock.adjust(nextMonth - now + 3_600_000)
        yield* wallet.updatePolicy(buyer.agentId, { monthlyLimitCents: 1000 as never })
        expect((yield* buy(buyer, service.id, "p600")).status).toBe("completed")
        yield* TestClock.adjust(DAY)
        expect((yield* buy(buyer, service.id, "p399")).status).toBe("completed") // 999 this month: one below
        expect(yield* wallet.view(buyer.agentId)).toMatchObject({
          spentTodayCents: 399,
          spentThisMonthCents: 999,
          remainingThisMonthCents: 1
        })
        yield* TestClock.adjust(DAY)
        expect((yield* buy(buyer, service.id, "p1")).status).toBe("completed") // 1000: at the limit
        expect(yield* refusal(buy(buyer, service.id, "p1"))).toMatchObject({
          _tag: "PolicyViolation",
          policy: "monthlyLimit",
          limitCents: 1000,
          attemptedCents: 1
        })
        expect(yield* wallet.view(buyer.agentId)).toMatchObject({
          spentThisMonthCents: 1000,
          remainingThisMonthCents: 0
        })
        // The last millisecond of the month still counts it; the first of the next resets.
        const t = yield* Clock.currentTimeMillis
        const m = new Date(t)
        const following = Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1)
        yield* TestClock.adjust(following - 1 - t)
        expect(yield* refusal(buy(buyer, service.id, "p1"))).toMatchObject({ policy: "monthlyLimit" })
        yield* TestClock.adjust(1)
        expect((yield* buy(buyer, service.id, "p1")).status).toBe("completed")
        expect((yield* wallet.view(buyer.agentId)).spentThisMonthCents).toBe(1)
      })
  )

  it.effect(
    "approval threshold (semi_auto): a purchase equal to the threshold buys at once, above it waits; manual always waits",
    () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const { service } = yield* sellerWith("Threshold", [tier("below", 499), tier("at", 500), tier("above", 501)])
        const buyer = yield* fundedBuyer(10_000)
        yield* wallet.updatePolicy(buyer.agentId, { autonomyLevel: "semi_auto", approvalThresholdCents: 500 as never })
        expect((yield* buy(buyer, service.id, "below")).status).toBe("completed")
        expect((yield* buy(buyer, service.id, "at")).status).toBe("completed")
        const waits = yield* buy(buyer, service.id, "above")
        expect(waits).toMatchObject({
          status: "pending_approval",
          approval: { reason: "approvalThreshold", quotedPriceCents: 501 }
        })
        yield* wallet.updatePolicy(buyer.agentId, { autonomyLevel: "manual" })
        expect((yield* buy(buyer, service.id, "below")).approval).toMatchObject({ reason: "manual" })
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(10_000 - 999)
      })
  )

  it.effect("approval expiry: pending until one millisecond before 7 days, expired at 7 days (approve → 409)", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet
      const commerce = yield* Commerce
      const { service } = yield* sellerWith("Expiry", [tier("unit", 100)])
      const buyer = yield* fundedBuyer(1_000, "acct_expiry")
      yield* wallet.updatePolicy(buyer.agentId, { autonomyLevel: "manual" })
      const first = yield* buy(buyer, service.id, "unit", 1)
      const second = yield* buy(buyer, service.id, "unit", 2)
      yield* TestClock.adjust(APPROVAL_TTL_MS - 1)
      expect((yield* wallet.view(buyer.agentId)).pendingApprovals).toBe(2)
      expect((yield* commerce.approve(ownerCaller("acct_expiry"), first.approval!.id)).transaction).toMatchObject({
        status: "completed",
        priceCents: 100
      })
      yield* TestClock.adjust(1)
      expect((yield* wallet.view(buyer.agentId)).pendingApprovals).toBe(0)
      expect(yield* refusal(commerce.approve(ownerCaller("acct_expiry"), second.approval!.id))).toMatchObject({
        _tag: "Conflict",
        state: "expired"
      })
      expect((yield* commerce.listApprovals(ownerCaller("acct_expiry"), "expired")).data.map((a) => a.id)).toEqual([
        second.approval!.id
      ])
      expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(900)
    })
  )

  it.effect(
    "low-balance warning: fires once when a purchase takes the balance from ≥ threshold to < threshold; landing on it does not",
    () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const events = yield* Events
        const { service } = yield* sellerWith("Low balance", [tier("p499", 499), tier("p1", 1)])
        const buyer = yield* fundedBuyer(1_500)
        yield* wallet.updatePolicy(buyer.agentId, {
          autoRecharge: { enabled: false, thresholdCents: 1000 as never, amountCents: 1000 as never }
        })
        const warnings = Effect.map(events.listForAgent(buyer.agentId, 50), (list) =>
          list.filter((e) => e.type === "wallet.low_balance")
        )
        yield* buy(buyer, service.id, "p499") // 1001: above
        yield* buy(buyer, service.id, "p1") // 1000: at the threshold, not below
        expect(yield* warnings).toEqual([])
        yield* buy(buyer, service.id, "p1") // 999: crossed
        expect((yield* warnings).map((e) => e.data)).toEqual([
          { balanceCents: 999, thresholdCents: 1000, autoRecharge: false }
        ])
        yield* buy(buyer, service.id, "p1") // 998: already below, no second warning
        expect((yield* warnings).length).toBe(1)
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(998)
      })
  )

  it.effect("auto-recharge in fake payments: from exactly the threshold to one below grants at once", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet
      const events = yield* Events
      const { service } = yield* sellerWith("Recharge at", [tier("p1", 1)])
      const buyer = yield* fundedBuyer(1_000)
      yield* wallet.updatePolicy(
        buyer.agentId,
        { autoRecharge: { enabled: true, thresholdCents: 1000 as never, amountCents: 2000 as never } },
        { byOwner: true }
      )
      yield* buy(buyer, service.id, "p1")
      expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(999 + 2000)
      const types = (yield* events.listForAgent(buyer.agentId, 20)).map((e) => e.type)
      expect(types.filter((t) => t === "wallet.low_balance").length).toBe(1)
      expect(types.filter((t) => t === "wallet.recharged").length).toBe(1)
      expect(yield* wallet.listRequestedRecharges(100)).toEqual([])
      // A fake top-up is allowed here.
      expect((yield* wallet.topup(buyer.agentId, 1)).balanceCents).toBe(3000)
    })
  )

  it.effect("dispute filing window: open at exactly 14 days after the purchase, 409 one millisecond later", () =>
    Effect.gen(function* () {
      const disputes = yield* Disputes
      const { service } = yield* sellerWith("Window", [tier("unit", 100)])
      const buyer = yield* fundedBuyer(1_000)
      const a = yield* buy(buyer, service.id, "unit", 1)
      const b = yield* buy(buyer, service.id, "unit", 2)
      yield* TestClock.adjust(FILING_WINDOW_MS)
      expect(
        (yield* disputes.open(buyer.agentId, { transactionId: a.transaction!.id, reason: "late but in time" })).status
      ).toBe("open")
      yield* TestClock.adjust(1)
      expect(
        yield* refusal(disputes.open(buyer.agentId, { transactionId: b.transaction!.id, reason: "too late" }))
      ).toMatchObject({ _tag: "Conflict", state: "filing_window_closed" })
    })
  )
})

forEachStorage(
  "money boundaries, stripe payments",
  commerceStack,
  (it) => {
    it.effect(
      "top-up is refused outside fake payments; auto-recharge only records a requested recharge (no credit)",
      () =>
        Effect.gen(function* () {
          const wallet = yield* Wallet
          const events = yield* Events
          const commerce = yield* Commerce
          const { service } = yield* sellerWith("Stripe recharge", [tier("p1", 1)])
          const buyer = yield* fundedBuyer(1_000)
          expect(yield* Effect.flip(wallet.topup(buyer.agentId, 100))).toMatchObject({
            _tag: "Conflict",
            state: "payments:stripe"
          })
          expect(wallet.howToFund.topupUrl).toBeNull()
          yield* wallet.updatePolicy(
            buyer.agentId,
            { autoRecharge: { enabled: true, thresholdCents: 1000 as never, amountCents: 2000 as never } },
            { byOwner: true }
          )
          yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "p1", input: null })
          expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(999)
          const requested = (yield* wallet.listRequestedRecharges(100)).filter((r) => r.agentId === buyer.agentId)
          expect(requested).toMatchObject([{ amountCents: 2000, status: "requested", ledgerEntryId: null }])
          const types = (yield* events.listForAgent(buyer.agentId, 20)).map((e) => e.type)
          expect(types).toContain("wallet.low_balance")
          expect(types).not.toContain("wallet.recharged")
        })
    )
  },
  { payments: "stripe" }
)

forEachStorage(
  "idempotency boundaries",
  (storage) => Idempotency.layer.pipe(Layer.provideMerge(storage)),
  (it) => {
    it.effect("an unfinished attempt holds its key until exactly the lease; a finished one until exactly the TTL", () =>
      Effect.gen(function* () {
        const idem = yield* Idempotency
        // The documented numbers (docs/idempotency.md), not just whatever the constants say.
        expect([IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS]).toEqual([5_000, 86_400_000])
        const begin = (key: string, hash = "h1") => Effect.map(idem.begin("scope-b", key, hash), (r) => r._tag)
        expect(yield* begin("lease")).toBe("Started")
        yield* TestClock.adjust(IDEMPOTENCY_LEASE_MS - 1)
        expect(yield* begin("lease")).toBe("InProgress")
        yield* TestClock.adjust(1)
        expect(yield* begin("lease")).toBe("Started") // the lease ran out: a retry may claim it
        expect(yield* begin("lease")).toBe("InProgress") // … and now holds a fresh lease
        // A finished key is replayed (the lease no longer matters) until the TTL, then forgotten.
        const done = yield* idem.begin("scope-b", "done", "h1")
        expect(done._tag).toBe("Started")
        yield* idem.complete("scope-b", "done", done._tag === "Started" ? done.owner : "", {
          status: 201,
          headers: { "x-a": "1" },
          body: '{"ok":true}'
        })
        yield* TestClock.adjust(IDEMPOTENCY_LEASE_MS + 1)
        const replay = yield* idem.begin("scope-b", "done", "h2")
        expect(replay).toEqual({
          _tag: "Done",
          requestHash: "h1",
          response: { status: 201, headers: { "x-a": "1" }, body: '{"ok":true}' }
        })
        yield* TestClock.adjust(IDEMPOTENCY_TTL_MS - IDEMPOTENCY_LEASE_MS - 2)
        expect(yield* begin("done")).toBe("Done") // one millisecond before the TTL
        yield* TestClock.adjust(1)
        expect(yield* begin("done", "h3")).toBe("Started") // at the TTL: expired, claimed anew
        // An unfinished key also expires at the TTL at the latest; release forgets it at once.
        const released = yield* idem.begin("scope-b", "released", "h1")
        expect(released._tag).toBe("Started")
        yield* idem.release("scope-b", "released", released._tag === "Started" ? released.owner : "")
        expect(yield* begin("released")).toBe("Started")
        // Keys are per scope.
        expect(yield* Effect.map(idem.begin("scope-other", "released", "h1"), (r) => r._tag)).toBe("Started")
      })
    )
  }
)

forEachStorage(
  "ledger boundaries",
  (storage) => Ledger.layer.pipe(Layer.provideMerge(storage), Layer.provideMerge(Ids.Live)),
  (it) => {
    const entry = (id: string, postings: ReadonlyArray<{ account: string; amount: number }>) =>
      JournalEntry.make({
        id,
        kind: "adjustment",
        reference: id,
        memo: "test",
        postings,
        createdAt: "2026-11-25T12:00:00.000Z"
      })

    it.effect("a debit of exactly the balance is allowed (to 0); one cent more is 402 with the cents missing", () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        yield* ledger.transfer({
          kind: "grant",
          reference: "fund-exact",
          from: EXTERNAL_GRANTS,
          to: walletAccount("exact"),
          amount: 500
        })
        expect(
          yield* Effect.flip(
            ledger.transfer({
              kind: "purchase",
              reference: "over",
              from: walletAccount("exact"),
              to: PLATFORM_FEES,
              amount: 501
            })
          )
        ).toMatchObject({
          _tag: "InsufficientFunds",
          balanceCents: 500,
          requiredCents: 501,
          missingCents: 1
        })
        yield* ledger.transfer({
          kind: "purchase",
          reference: "exact",
          from: walletAccount("exact"),
          to: PLATFORM_FEES,
          amount: 500
        })
        expect(yield* ledger.balance(walletAccount("exact"))).toBe(0)
        expect(
          yield* Effect.flip(
            ledger.transfer({
              kind: "purchase",
              reference: "empty",
              from: walletAccount("exact"),
              to: PLATFORM_FEES,
              amount: 1
            })
          )
        ).toMatchObject({ missingCents: 1 })
        expect((yield* ledger.check).ok).toBe(true)
      })
    )

    it.effect("the check reports a negative constrained balance and a non-zero total (not an external account's)", () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const store = yield* LedgerStore
        expect(yield* ledger.check).toMatchObject({ ok: true, totalCents: 0, negative: [], mismatches: [] })
        // Written straight to the store, past Ledger.prepare: a wallet below zero.
        yield* store.lockBalances([walletAccount("neg")])
        yield* store.append(
          entry("je_neg", [
            { account: walletAccount("neg"), amount: -10 },
            { account: EXTERNAL_GRANTS, amount: 10 }
          ])
        )
        expect(yield* ledger.check).toMatchObject({
          ok: false,
          totalCents: 0,
          negative: [walletAccount("neg")],
          mismatches: []
        })
        yield* store.append(
          entry("je_neg_back", [
            { account: walletAccount("neg"), amount: 10 },
            { account: EXTERNAL_GRANTS, amount: -10 }
          ])
        )
        expect((yield* ledger.check).ok).toBe(true)
        // An unbalanced entry: the total is not zero.
        yield* store.append(entry("je_unbalanced", [{ account: walletAccount("odd"), amount: 5 }]))
        expect(yield* ledger.check).toMatchObject({ ok: false, totalCents: 5, negative: [], mismatches: [] })
        yield* store.lockBalances([walletAccount("odd")]) // SQL stores move a debit on its locked row
        yield* store.append(entry("je_unbalanced_back", [{ account: walletAccount("odd"), amount: -5 }]))
        expect(yield* ledger.check).toMatchObject({ ok: true, totalCents: 0 })
      })
    )
  }
)

// The memory store's check over its own tables, corrupted by hand (SQL stores derive balances in a view).
layer(
  Ledger.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(MemoryLedgerStore, MemoryTransactor)),
    Layer.provideMerge(MemoryDb.layer),
    Layer.provideMerge(Ids.Live)
  )
)("ledger check, memory store", (it) => {
  it.effect("the check reports a stored balance that differs from its postings (memory store)", () =>
    Effect.gen(function* () {
      const ledger = yield* Ledger
      const balances = (yield* MemoryDb).table<string, number>("ledger_balances")
      yield* ledger.transfer({
        kind: "grant",
        reference: "fund-drift",
        from: EXTERNAL_GRANTS,
        to: walletAccount("drift"),
        amount: 100
      })
      yield* balances.set(walletAccount("drift"), 101)
      expect(yield* ledger.check).toMatchObject({
        ok: false,
        totalCents: 0,
        negative: [],
        mismatches: [{ account: walletAccount("drift"), stored: 101, derived: 100 }]
      })
      // A stored balance with no postings at all is a mismatch too.
      yield* balances.set(walletAccount("drift"), 100)
      yield* balances.set(walletAccount("ghost"), 7)
      expect(yield* ledger.check).toMatchObject({
        ok: false,
        mismatches: [{ account: walletAccount("ghost"), stored: 7, derived: 0 }]
      })
      yield* balances.set(walletAccount("ghost"), 0)
      expect((yield* ledger.check).ok).toBe(true)
    })
  )
})
