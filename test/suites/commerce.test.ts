// Commerce suite, run on memory and Postgres: 1,000 concurrent buys against a wallet funded for
// exactly 100, idempotent replays, exact refunds, policies and approvals, reviews, disputes, SLA,
// catalog search and the reputation formula with pinned numbers.
import { unlimitedWallet } from "../fixtures/money.js"
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, it as vit } from "vitest"
import type { PublishServiceBody } from "../../src/schema/commerce/services.js"
import { Agent } from "../../src/schema/keys/keys.js"
import { EXTERNAL_GRANTS, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { CommerceSeedLive, PLATFORM_SELLERS_ACCOUNT } from "../../src/layers/seed/seedCommerce.js"
import type { Caller } from "../../src/services/keys/Caller.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { CatalogStore } from "../../src/services/commerce/CatalogStore.js"
import { simulateDelivery } from "../../src/services/purchases/simulation.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { NoNegotiatedPrices } from "../../src/services/purchases/NegotiatedPrices.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { Events } from "../../src/services/events/Events.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Reputation } from "../../src/services/reputation/Reputation.js"
import { bandOf, reputationScore } from "../../src/services/reputation/policy.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { loosens, DEFAULT_POLICY } from "../../src/schema/wallet/policy.js"
import { forEachStorage } from "../fixtures/suite.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"
import { AcpRefundListenersLive } from "../../src/services/acp/AcpRefundListeners.js"

const DAY = 86_400_000

const caller = (
  agentId: string,
  accountId = "acct_suite",
  permissions: ReadonlyArray<Caller["permissions"] extends ReadonlySet<infer P> ? P : never> = [
    "commerce:read",
    "commerce:buy",
    "commerce:sell"
  ]
): Caller => ({
  accountId,
  agentId,
  keyId: `key_${agentId}`,
  permissions: new Set(permissions),
  via: "key"
})

const tier = (id: string, priceCents: number, p95LatencyMs = 1000) => ({
  id,
  name: id,
  priceCents,
  unit: "call",
  includedUnits: null,
  sla: { uptimePct: 99, p95LatencyMs, supportWindow: "24/7" }
})

const body = (name: string, tiers: ReadonlyArray<ReturnType<typeof tier>>, category = "testing"): PublishServiceBody =>
  ({
    name,
    description: `${name} for tests`,
    category,
    pricingModel: "per_call",
    tags: ["test"],
    tiers,
    negotiation: { floorPct: 80, counterStepPct: 20 },
    // This suite tests money, not fulfilment: its sellers are the platform's, answered at once.
    fulfilment: { mode: "simulated" }
  }) as unknown as PublishServiceBody

describe("reputation formula (pure)", () => {
  vit("pins the factor points and band cut-offs", () => {
    const none = { reviewsReceived: 0, ratingSum: 0, completedDeals: 0, volumeCents: 0, disputesLost: 0 }
    expect(reputationScore(none, 0)).toMatchObject({ score: 300, reviews: 200, disputes: 100, volume: 0, tenure: 0 })
    // One 5-star review, one $100 deal: 267 + 200 + 100 + 0.
    expect(
      reputationScore({ reviewsReceived: 1, ratingSum: 5, completedDeals: 1, volumeCents: 10_000, disputesLost: 0 }, 0)
        .score
    ).toBe(567)
    // Two deals, one dispute lost: disputes 200·max(0, 1 − 5·½) = 0.
    expect(
      reputationScore({ reviewsReceived: 1, ratingSum: 5, completedDeals: 2, volumeCents: 10_000, disputesLost: 1 }, 0)
        .score
    ).toBe(367)
    // Ten 1-star reviews: b = (10 + 6)/12 = 1.333 → 33.
    expect(
      reputationScore({ reviewsReceived: 10, ratingSum: 10, completedDeals: 10, volumeCents: 0, disputesLost: 0 }, 0)
        .reviews
    ).toBe(33)
    // Maximum: many 5-star reviews, $100k volume, a year.
    expect(
      reputationScore(
        {
          reviewsReceived: 10_000,
          ratingSum: 50_000,
          completedDeals: 10_000,
          volumeCents: 10_000_000,
          disputesLost: 0
        },
        400
      ).score
    ).toBe(1000)
    expect(reputationScore(none, 182.5).tenure).toBe(75)
    expect([0, 349, 350, 549, 550, 749, 750, 899, 900, 1000].map(bandOf)).toEqual([
      "Bronze",
      "Bronze",
      "Silver",
      "Silver",
      "Gold",
      "Gold",
      "Platinum",
      "Platinum",
      "Diamond",
      "Diamond"
    ])
  })

  vit("an agent key may only tighten its wallet policy", () => {
    expect(loosens(DEFAULT_POLICY, { ...DEFAULT_POLICY, autonomyLevel: "manual" })).toBeNull()
    const strict = { ...DEFAULT_POLICY, autonomyLevel: "manual" as const, dailyLimitCents: 100 as never }
    expect(loosens(strict, { ...strict, autonomyLevel: "semi_auto" })).toBe("autonomyLevel")
    expect(loosens(strict, { ...strict, dailyLimitCents: null })).toBe("dailyLimitCents")
    expect(loosens(strict, { ...strict, dailyLimitCents: 50 as never })).toBeNull()
  })

  vit("simulated delivery is deterministic and honours the simulate switch", () => {
    const service = {
      id: "svc_x",
      sellerAgentId: "agt_s",
      name: "X",
      category: "c",
      pricingModel: "per_call" as const,
      negotiation: { floorPct: 80, counterStepPct: 20 },
      tiers: []
    }
    const t = tier("t", 10, 1000) as never
    const a = simulateDelivery(service, t, { text: "hello" })
    expect(simulateDelivery(service, t, { text: "hello" })).toEqual(a)
    expect(a.success).toBe(true)
    expect(a.latencyMs).toBeGreaterThanOrEqual(200)
    expect(a.latencyMs).toBeLessThanOrEqual(900)
    expect(simulateDelivery(service, t, { simulate: "fail" })).toMatchObject({ success: false, latencyMs: 500 })
    expect(simulateDelivery(service, t, { simulate: "timeout" })).toMatchObject({ success: false, latencyMs: 2000 })
    expect(simulateDelivery(service, t, { simulate: "slow", delayMs: 4321 })).toMatchObject({
      success: true,
      latencyMs: 4321
    })
  })
})

forEachStorage(
  "commerce",
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
  (it) => {
    /**
     * A simulated seller: an agent of the platform sellers account (registered, created now) with one
     * published service. The TestClock is shared by the block's tests.
     */
    const sellerWith = (name: string, tiers: ReadonlyArray<ReturnType<typeof tier>>, category = "testing") =>
      Effect.gen(function* () {
        const ids = yield* Ids
        const agentId = yield* ids.make("agt")
        const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* Effect.flatMap(KeysStore, (k) =>
          k.insertAgent(
            Agent.make({ id: agentId, accountId: PLATFORM_SELLERS_ACCOUNT, name, organization: null, createdAt })
          )
        )
        const service = yield* Effect.flatMap(Catalog, (c) =>
          c.publish(caller(agentId, PLATFORM_SELLERS_ACCOUNT), body(name, tiers, category))
        )
        return { agentId, service }
      })

    const fundedBuyer = (amountCents: number, accountId = "acct_suite") =>
      Effect.gen(function* () {
        const agentId = yield* Effect.flatMap(Ids, (ids) => ids.make("agt"))
        yield* unlimitedWallet(agentId)
        if (amountCents > 0) yield* Effect.flatMap(Wallet, (w) => w.topup(agentId, amountCents))
        return { agentId, caller: caller(agentId, accountId) }
      })

    it.effect(
      "1,000 concurrent buys against a wallet funded for exactly 100: 100 succeed, 900 get 402, 85/15 exact",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const ledger = yield* Ledger
          const { agentId: seller, service } = yield* sellerWith("Race Service", [tier("unit", 100)])
          const buyer = yield* fundedBuyer(100 * 100)
          const feesBefore = yield* ledger.balance(PLATFORM_FEES)
          const results = yield* Effect.forEach(
            Array.from({ length: 1000 }, (_, i) => i),
            (i) =>
              commerce
                .buy({ caller: buyer.caller, serviceId: service.id, tierId: "unit", input: { n: i } })
                .pipe(Effect.result),
            { concurrency: 100 }
          )
          const ok = results.filter((r) => r._tag === "Success" && r.success.status === "completed")
          const refused = results.filter((r) => r._tag === "Failure" && r.failure._tag === "InsufficientCredits")
          expect(ok.length).toBe(100)
          expect(refused.length).toBe(900)
          const first = refused[0]
          if (first._tag === "Failure" && first.failure._tag === "InsufficientCredits") {
            expect(first.failure).toMatchObject({ requiredCents: 100, balanceCents: 0, missingCents: 100 })
            expect(first.failure.howToFund.topupUrl).toContain("/api/v1/agent/commerce/wallet/topup")
          }
          expect(yield* ledger.balance(walletAccount(buyer.agentId))).toBe(0)
          expect(yield* ledger.balance(walletAccount(seller))).toBe(8500)
          expect((yield* ledger.balance(PLATFORM_FEES)) - feesBefore).toBe(1500)
          const check = yield* ledger.check
          expect(check.totalCents).toBe(0)
          expect(check.ok).toBe(true)
          const page = yield* commerce.listTransactions(buyer.agentId, { limit: 100, role: "buyer" })
          expect(page.data.length).toBe(100)
          expect(page.nextCursor).toBeNull()
          expect(new Set(page.data.map((t) => t.id)).size).toBe(100)
          // Keyset pages of 30 (no role: buyer or seller) walk the same 100 rows, newest first, without overlap.
          const walked: Array<string> = []
          let cursor: string | undefined
          do {
            const p = yield* commerce.listTransactions(buyer.agentId, { limit: 30, cursor })
            walked.push(...p.data.map((t) => t.id))
            cursor = p.nextCursor ?? undefined
          } while (cursor)
          expect(walked).toEqual(page.data.map((t) => t.id))
          const sellerView = yield* commerce.listTransactions(seller, { limit: 5 })
          expect(sellerView.data.every((t) => t.role === "seller")).toBe(true)
          expect(sellerView.nextCursor).not.toBeNull()
        }),
      { timeout: 120_000 }
    )

    it.effect("50 concurrent replays of one idempotency key charge once", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const wallet = yield* Wallet
        const { service } = yield* sellerWith("Replay Service", [tier("unit", 250)])
        const buyer = yield* fundedBuyer(1000)
        const results = yield* Effect.forEach(
          Array.from({ length: 50 }, () => 0),
          () =>
            commerce.buy({
              caller: buyer.caller,
              serviceId: service.id,
              tierId: "unit",
              input: { q: 1 },
              idempotencyReference: "same-key"
            }),
          { concurrency: 50 }
        )
        expect(new Set(results.map((r) => r.transaction!.id)).size).toBe(1)
        expect(results.every((r) => r.status === "completed")).toBe(true)
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(750)
        const other = yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "unit",
          input: { q: 1 },
          idempotencyReference: "other-key"
        })
        expect(other.transaction!.id).not.toBe(results[0].transaction!.id)
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(500)
      })
    )

    it.effect(
      "a replayed key answers the first outcome as it stands: a failed delivery stays failed, charged nothing",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const wallet = yield* Wallet
          const { service } = yield* sellerWith("Replay Failure", [tier("unit", 250)])
          const buyer = yield* fundedBuyer(1000)
          const ask = () =>
            commerce.buy({
              caller: buyer.caller,
              serviceId: service.id,
              tierId: "unit",
              input: { simulate: "fail" },
              idempotencyReference: "failed-key"
            })
          const first = yield* ask()
          const again = yield* ask()
          expect(first).toMatchObject({ status: "failed" })
          expect(again).toMatchObject({
            status: "failed",
            transaction: { id: first.transaction!.id, status: "failed" }
          })
          expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(1000)
        })
    )

    it.effect("a buy of a service or tier that does not exist is refused as not found and moves no money", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const wallet = yield* Wallet
        const ledger = yield* Ledger
        const { service } = yield* sellerWith("Real Service", [tier("basic", 100)])
        const buyer = yield* fundedBuyer(1000)
        const missing = yield* Effect.flip(
          commerce.buy({ caller: buyer.caller, serviceId: "svc_does_not_exist", tierId: "basic", input: "x" })
        )
        expect(missing).toMatchObject({ _tag: "NotFound", resource: "service", id: "svc_does_not_exist" })
        const noTier = yield* Effect.flip(
          commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "gold", input: "x" })
        )
        expect(noTier).toMatchObject({ _tag: "NotFound", resource: "tier", id: "gold" })
        expect(noTier.message).toContain('no tier "gold" (tiers: basic)')
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(1000)
        expect((yield* commerce.listTransactions(buyer.agentId, {})).data).toEqual([])
        expect((yield* ledger.check).ok).toBe(true)
      })
    )

    it.effect("a refund restores the buyer to the cent and debits seller and platform exactly", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const disputes = yield* Disputes
        const ledger = yield* Ledger
        const { agentId: seller, service } = yield* sellerWith("Refund Service", [tier("odd", 1999)])
        const buyer = yield* fundedBuyer(5000)
        const fees0 = yield* ledger.balance(PLATFORM_FEES)
        const bought = yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "odd", input: "doc" })
        expect(bought.transaction).toMatchObject({
          priceCents: 1999,
          sellerCents: 1699,
          feeCents: 300,
          status: "completed"
        })
        expect(yield* ledger.balance(walletAccount(buyer.agentId))).toBe(3001)
        expect(yield* ledger.balance(walletAccount(seller))).toBe(1699)
        const opened = yield* disputes.open(buyer.agentId, {
          transactionId: bought.transaction!.id,
          reason: "output was empty"
        })
        expect(opened.status).toBe("open")
        // Only the seller answers; the buyer gets 403, a stranger 404.
        expect((yield* Effect.flip(disputes.respond(buyer.agentId, opened.id, { action: "accept" })))._tag).toBe(
          "Forbidden"
        )
        expect((yield* Effect.flip(disputes.get("agt_stranger", opened.id)))._tag).toBe("NotFound")
        const resolved = yield* disputes.respond(seller, opened.id, { action: "accept" })
        expect(resolved).toMatchObject({ status: "resolved_refunded", refundCents: 1999 })
        expect(yield* ledger.balance(walletAccount(buyer.agentId))).toBe(5000)
        expect(yield* ledger.balance(walletAccount(seller))).toBe(0)
        expect(yield* ledger.balance(PLATFORM_FEES)).toBe(fees0)
        expect((yield* commerce.getTransaction(buyer.agentId, bought.transaction!.id)).status).toBe("refunded")
        expect(
          (yield* Effect.flip(disputes.open(buyer.agentId, { transactionId: bought.transaction!.id, reason: "again" })))
            ._tag
        ).toBe("Conflict")
        expect((yield* ledger.check).ok).toBe(true)
      })
    )

    it.effect("policies bite: per-transaction, daily (resets next UTC day), category and seller limits, named", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const wallet = yield* Wallet
        const { service } = yield* sellerWith("Policy Service", [tier("small", 300), tier("big", 2000)], "policy-cat")
        const buyer = yield* fundedBuyer(10_000)
        yield* wallet.updatePolicy(buyer.agentId, {
          perTransactionLimitCents: 1000 as never,
          dailyLimitCents: 700 as never
        })
        const over = yield* Effect.flip(
          commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "big", input: null })
        )
        expect(over).toMatchObject({
          _tag: "PolicyViolation",
          policy: "perTransactionLimit",
          limitCents: 1000,
          attemptedCents: 2000
        })
        yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "small", input: 1 })
        yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "small", input: 2 })
        const daily = yield* Effect.flip(
          commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "small", input: 3 })
        )
        expect(daily).toMatchObject({ _tag: "PolicyViolation", policy: "dailyLimit", limitCents: 700 })
        const view = yield* wallet.view(buyer.agentId)
        expect(view).toMatchObject({ spentTodayCents: 600, remainingTodayCents: 100, balanceCents: 9400 })
        yield* TestClock.adjust(DAY)
        expect(
          (yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "small", input: 4 })).status
        ).toBe("completed")
        // Loosening through a key is refused; tightening the allow-lists bites.
        expect((yield* Effect.flip(wallet.updatePolicy(buyer.agentId, { dailyLimitCents: null })))._tag).toBe(
          "Forbidden"
        )
        yield* wallet.updatePolicy(buyer.agentId, { allowedCategories: ["translation"] })
        expect(
          yield* Effect.flip(commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "small", input: 5 }))
        ).toMatchObject({ policy: "allowedCategories" })
        yield* wallet.updatePolicy(buyer.agentId, { allowedCategories: null, dailyLimitCents: null }, { byOwner: true })
        yield* wallet.updatePolicy(buyer.agentId, { allowedSellers: ["agt_seller_lexica"] })
        expect(
          yield* Effect.flip(commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "small", input: 6 }))
        ).toMatchObject({ policy: "allowedSellers" })
        expect(
          (yield* commerce.buy({ caller: buyer.caller, serviceId: "svc_translate_pro", tierId: "priority", input: 7 }))
            .status
        ).toBe("completed")
      })
    )

    it.effect(
      "manual and semi_auto purchases wait; only the owner approves (no agent key, not even a sibling) and it executes",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const wallet = yield* Wallet
          const ledger = yield* Ledger
          const events = yield* Events
          const { service } = yield* sellerWith("Approval Service", [tier("low", 100), tier("high", 900)])
          const buyer = yield* fundedBuyer(5000, "acct_approvals")
          const supervisor = caller("agt_supervisor", "acct_approvals")
          yield* wallet.updatePolicy(buyer.agentId, { autonomyLevel: "manual" })
          const pending = yield* commerce.buy({
            caller: buyer.caller,
            serviceId: service.id,
            tierId: "low",
            input: "x"
          })
          expect(pending.status).toBe("pending_approval")
          expect(pending.approval).toMatchObject({ reason: "manual", status: "pending", quotedPriceCents: 100 })
          expect(yield* ledger.balance(walletAccount(buyer.agentId))).toBe(5000)
          expect((yield* wallet.view(buyer.agentId)).pendingApprovals).toBe(1)
          expect((yield* events.listForAgent(buyer.agentId, 10)).map((e) => e.type)).toContain("approval.requested")
          // Not by the buying agent itself, not by another agent of the same account, not from another account.
          expect((yield* Effect.flip(commerce.approve(buyer.caller, pending.approval!.id)))._tag).toBe("Forbidden")
          expect((yield* Effect.flip(commerce.approve(supervisor, pending.approval!.id)))._tag).toBe("Forbidden")
          expect((yield* Effect.flip(commerce.decline(supervisor, pending.approval!.id)))._tag).toBe("Forbidden")
          expect(
            (yield* Effect.flip(commerce.approve(caller("agt_other", "acct_other"), pending.approval!.id)))._tag
          ).toBe("NotFound")
          const owner: Caller = {
            accountId: "acct_approvals",
            agentId: undefined,
            keyId: undefined,
            permissions: new Set(),
            via: "session"
          }
          expect((yield* commerce.listApprovals(owner, "pending")).data.map((a) => a.id)).toEqual([
            pending.approval!.id
          ])
          const approved = yield* commerce.approve(owner, pending.approval!.id)
          expect(approved.approval).toMatchObject({ status: "approved", decidedBy: "account:acct_approvals" })
          expect(approved.transaction).toMatchObject({
            status: "completed",
            priceCents: 100,
            approvalId: pending.approval!.id
          })
          expect(yield* ledger.balance(walletAccount(buyer.agentId))).toBe(4900)
          expect(yield* Effect.flip(commerce.approve(owner, pending.approval!.id))).toMatchObject({
            _tag: "Conflict",
            state: "approved"
          })
          // semi_auto: at or under the threshold buys at once; above it waits; a decline charges nothing.
          yield* wallet.updatePolicy(
            buyer.agentId,
            { autonomyLevel: "semi_auto", approvalThresholdCents: 500 as never },
            { byOwner: true }
          )
          expect(
            (yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "low", input: "y" })).status
          ).toBe("completed")
          const waits = yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "high", input: "z" })
          expect(waits.approval).toMatchObject({ reason: "approvalThreshold", quotedPriceCents: 900 })
          const declined = yield* commerce.decline(owner, waits.approval!.id)
          expect(declined.approval).toMatchObject({ status: "declined", decidedBy: "account:acct_approvals" })
          expect(yield* ledger.balance(walletAccount(buyer.agentId))).toBe(4800)
          // An approval whose purchase now breaks a limit stays pending (the approval re-checks the policy).
          const again = yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "high", input: "w" })
          yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 800 as never })
          expect(yield* Effect.flip(commerce.approve(owner, again.approval!.id))).toMatchObject({
            _tag: "PolicyViolation",
            policy: "perTransactionLimit"
          })
          expect((yield* commerce.listApprovals(owner, "pending")).data.map((a) => a.id)).toEqual([again.approval!.id])
          expect((yield* commerce.listApprovals(owner, "expired")).data).toEqual([])
          // Approvals expire after 7 days: listed as expired, no longer as pending.
          yield* TestClock.adjust(8 * DAY)
          expect((yield* commerce.listApprovals(owner, "expired")).data.map((a) => a.id)).toEqual([again.approval!.id])
          expect((yield* commerce.listApprovals(owner, "pending")).data).toEqual([])
          // Only a pending approval expires: the owner's decisions stand after the 7 days.
          const statuses = (yield* commerce.listApprovals(owner, undefined)).data.map((a) => [a.id, a.status])
          expect(Object.fromEntries(statuses)).toEqual({
            [pending.approval!.id]: "approved",
            [waits.approval!.id]: "declined",
            [again.approval!.id]: "expired"
          })
          // Keyset pages over every status, newest first, the same rows as one read.
          const all = (yield* commerce.listApprovals(owner, undefined)).data.map((a) => a.id)
          expect(all).toHaveLength(3)
          // One and two rows a page: the pages together are the one read, each row once.
          for (const limit of [1, 2]) {
            const paged: Array<string> = []
            let cursor: string | undefined
            for (let i = 0; i < 10; i++) {
              const page: {
                readonly data: ReadonlyArray<{ readonly id: string }>
                readonly nextCursor: string | null
              } = yield* commerce.listApprovals(owner, undefined, { limit, cursor })
              paged.push(...page.data.map((a) => a.id))
              if (page.nextCursor === null) break
              cursor = page.nextCursor
            }
            expect(paged).toEqual(all)
          }
          expect(yield* Effect.flip(commerce.listApprovals(owner, undefined, { cursor: "e30" }))).toMatchObject({
            _tag: "InvalidInput",
            field: "cursor"
          })
        })
    )

    it.effect("reviews: buyer only, once, after delivery; a failed delivery is recorded and not charged", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const catalog = yield* Catalog
        const { agentId: seller, service } = yield* sellerWith("Review Service", [tier("unit", 40)])
        const buyer = yield* fundedBuyer(1000)
        const failed = yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "unit",
          input: { simulate: "fail" }
        })
        expect(failed.status).toBe("failed")
        expect(failed.transaction).toMatchObject({ status: "failed", sellerCents: 0, feeCents: 0, ledgerEntryId: null })
        expect(failed.transaction!.delivery).toMatchObject({ success: false, latencyMs: 500 })
        expect((yield* Effect.flatMap(Wallet, (w) => w.view(buyer.agentId))).balanceCents).toBe(1000)
        expect(yield* Effect.flip(commerce.review(buyer.agentId, failed.transaction!.id, { rating: 5 }))).toMatchObject(
          { _tag: "Conflict" }
        )
        const ok = yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "unit",
          input: { text: "hi" }
        })
        expect((yield* Effect.flip(commerce.review(seller, ok.transaction!.id, { rating: 5 })))._tag).toBe("Forbidden")
        expect((yield* Effect.flip(commerce.review("agt_nobody", ok.transaction!.id, { rating: 5 })))._tag).toBe(
          "NotFound"
        )
        const review = yield* commerce.review(buyer.agentId, ok.transaction!.id, { rating: 4, text: "good" })
        expect(review).toMatchObject({ rating: 4, text: "good", sellerAgentId: seller })
        expect(yield* Effect.flip(commerce.review(buyer.agentId, ok.transaction!.id, { rating: 1 }))).toMatchObject({
          _tag: "Conflict"
        })
        expect(yield* catalog.getService(service.id)).toMatchObject({ rating: 4, reviewCount: 1 })
        expect(yield* commerce.getTransaction(seller, ok.transaction!.id)).toMatchObject({
          role: "seller",
          review: { rating: 4 }
        })
        expect((yield* Effect.flip(commerce.getTransaction("agt_nobody", ok.transaction!.id)))._tag).toBe("NotFound")
      })
    )

    it.effect("reputation moves with reviews, volume, lost disputes and tenure as the formula says", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const disputes = yield* Disputes
        const reputation = yield* Reputation
        const { agentId: seller, service } = yield* sellerWith("Reputation Service", [tier("hundred", 10_000)])
        const buyer = yield* fundedBuyer(50_000)
        expect(yield* reputation.reputationOf(seller)).toMatchObject({ score: 300, band: "Bronze" })
        const first = yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "hundred", input: 1 })
        yield* commerce.review(buyer.agentId, first.transaction!.id, { rating: 5 })
        const r1 = yield* reputation.reputationOf(seller)
        expect(r1).toMatchObject({ score: 567, band: "Gold" })
        expect(r1.factors).toMatchObject({
          reviews: { points: 267, count: 1, averageRating: 5 },
          disputes: { points: 200 },
          volume: { points: 100, volumeCents: 10_000 },
          tenure: { points: 0 }
        })
        const second = yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "hundred", input: 2 })
        const d = yield* disputes.open(buyer.agentId, { transactionId: second.transaction!.id, reason: "wrong output" })
        yield* disputes.respond(seller, d.id, { action: "accept" })
        expect(yield* reputation.reputationOf(seller)).toMatchObject({
          score: 367,
          band: "Silver",
          factors: { disputes: { points: 0, lost: 1, completedDeals: 2 } }
        })
        yield* TestClock.adjust(365 * DAY)
        expect(yield* reputation.reputationOf(seller)).toMatchObject({
          score: 517,
          factors: { tenure: { points: 150, days: 365 } }
        })
        const board = yield* reputation.leaderboard(100)
        expect(board.data.find((e) => e.agentId === seller)).toMatchObject({
          score: 517,
          band: "Silver",
          completedDeals: 2,
          reviewsReceived: 1
        })
        expect(board.data.map((e) => e.score)).toEqual([...board.data.map((e) => e.score)].sort((a, b) => b - a))
      })
    )

    it.effect(
      "disputes: unanswered → refunded after 72 h; contested → refunded on an SLA breach, else rejected; 14-day window",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const disputes = yield* Disputes
          const { agentId: seller, service } = yield* sellerWith("Dispute Service", [tier("unit", 500, 1000)])
          const buyer = yield* fundedBuyer(5000)
          const buy = (input: unknown) =>
            Effect.map(
              commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "unit", input }),
              (p) => p.transaction!.id
            )
          const silent = yield* disputes.open(buyer.agentId, { transactionId: yield* buy(1), reason: "no answer" })
          const slowTx = yield* buy({ simulate: "slow", delayMs: 5000 })
          const slow = yield* disputes.open(buyer.agentId, { transactionId: slowTx, reason: "too slow" })
          const fine = yield* disputes.open(buyer.agentId, { transactionId: yield* buy(2), reason: "did not like it" })
          yield* disputes.respond(seller, slow.id, { action: "contest", note: "it arrived" })
          yield* disputes.respond(seller, fine.id, { action: "contest" })
          // Both sides' lists as keyset pages of 2 (the three share a createdAt: ties go by id) equal the whole list.
          for (const agentId of [buyer.agentId, seller]) {
            const all = (yield* disputes.list(agentId)).data.map((d) => d.id)
            expect([...all].sort()).toEqual([silent.id, slow.id, fine.id].sort())
            const p1 = yield* disputes.list(agentId, { limit: 2 })
            const p2 = yield* disputes.list(agentId, { limit: 2, cursor: p1.nextCursor! })
            expect([...p1.data, ...p2.data].map((d) => d.id)).toEqual(all)
            expect(p2.nextCursor).toBeNull()
          }
          expect(yield* Effect.flip(disputes.list(buyer.agentId, { cursor: "bad" }))).toMatchObject({
            _tag: "InvalidInput",
            field: "cursor"
          })
          expect((yield* disputes.get(buyer.agentId, slow.id)).status).toBe("under_review")
          const late = yield* buy(3)
          yield* TestClock.adjust(24 * 3_600_000)
          expect(yield* disputes.resolveDue).toBe(2)
          expect(yield* disputes.get(buyer.agentId, slow.id)).toMatchObject({
            status: "resolved_refunded",
            refundCents: 500
          })
          expect(yield* disputes.get(buyer.agentId, fine.id)).toMatchObject({
            status: "resolved_rejected",
            refundCents: 0
          })
          expect((yield* disputes.get(seller, silent.id)).status).toBe("open")
          yield* TestClock.adjust(48 * 3_600_000)
          expect(yield* disputes.resolveDue).toBe(1)
          expect(yield* disputes.get(buyer.agentId, silent.id)).toMatchObject({
            status: "resolved_refunded",
            refundCents: 500
          })
          yield* TestClock.adjust(12 * DAY)
          expect(
            yield* Effect.flip(disputes.open(buyer.agentId, { transactionId: late, reason: "late" }))
          ).toMatchObject({ _tag: "Conflict", state: "filing_window_closed" })
          // 4 purchases of 500 minus 2 refunds: 1000 spent.
          expect((yield* Effect.flatMap(Wallet, (w) => w.view(buyer.agentId))).balanceCents).toBe(5000 - 1000)
          expect((yield* Effect.flatMap(Ledger, (l) => l.check)).ok).toBe(true)
        })
    )

    it.effect("SLA compliance is measured from deliveries; no deliveries → no_data", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const catalog = yield* Catalog
        const { service } = yield* sellerWith("SLA Service", [tier("fast", 10, 1000), tier("idle", 10, 1000)])
        const buyer = yield* fundedBuyer(1000)
        for (let i = 0; i < 19; i++)
          yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "fast", input: { i } })
        let report = yield* catalog.sla(service.id)
        expect(report.tiers.find((t) => t.tierId === "idle")).toMatchObject({
          status: "no_data",
          deliveries: 0,
          measuredP95LatencyMs: null
        })
        expect(report.tiers.find((t) => t.tierId === "fast")).toMatchObject({
          status: "compliant",
          deliveries: 19,
          successes: 19,
          successRatePct: 100
        })
        // Two slow deliveries out of 21: the p95 (21st smallest → rank 20) is a slow one → breached.
        yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "fast",
          input: { simulate: "slow", delayMs: 3000 }
        })
        yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "fast",
          input: { simulate: "slow", delayMs: 3000 }
        })
        report = yield* catalog.sla(service.id)
        expect(report.tiers.find((t) => t.tierId === "fast")).toMatchObject({
          status: "breached",
          deliveries: 21,
          measuredP95LatencyMs: 3000,
          latencyCompliant: false,
          availabilityCompliant: true
        })
        // A failed delivery drops the success rate to 21/22 = 95.45 % < 99 %.
        yield* commerce.buy({
          caller: buyer.caller,
          serviceId: service.id,
          tierId: "fast",
          input: { simulate: "fail" }
        })
        expect((yield* catalog.sla(service.id)).tiers.find((t) => t.tierId === "fast")).toMatchObject({
          successRatePct: 95.45,
          availabilityCompliant: false
        })
      })
    )

    it.effect("catalog: 12 seeded services, all four pricing models, filters and keyset pages", () =>
      Effect.gen(function* () {
        const catalog = yield* Catalog
        const seeded = (s: { id: string }) => s.id.startsWith("svc_") && !/^svc_[A-Za-z0-9_-]{20}$/.test(s.id)
        const pages: Array<string> = []
        let cursor: string | undefined
        do {
          const page = yield* catalog.list({ sellerId: undefined, limit: 5, cursor })
          pages.push(...page.data.map((s) => s.id))
          cursor = page.nextCursor ?? undefined
        } while (cursor)
        expect(new Set(pages).size).toBe(pages.length)
        expect(pages).toEqual([...pages].sort())
        expect(pages.filter((id) => seeded({ id })).length).toBe(12)
        for (const model of ["per_call", "monthly", "usage_based", "tiered"] as const) {
          expect(
            (yield* catalog.list({ pricingModel: model, sellerId: "agt_seller_lexica", limit: 100 })).data.every(
              (s) => s.pricingModel === model
            )
          ).toBe(true)
          expect((yield* catalog.list({ pricingModel: model, limit: 100 })).data.length).toBeGreaterThan(0)
        }
        const lexica = yield* catalog.list({ sellerId: "agt_seller_lexica", limit: 100 })
        expect(lexica.data.map((s) => s.id)).toEqual(["svc_doc_translate", "svc_transcribe_live", "svc_translate_pro"])
        expect(
          (yield* catalog.list({ q: "TRANSLAT", sellerId: "agt_seller_lexica", limit: 100 })).data.map((s) => s.id)
        ).toEqual(["svc_doc_translate", "svc_translate_pro"])
        expect(
          (yield* catalog.list({ category: "translation", maxPriceCents: 2, limit: 100 })).data.map((s) => s.id)
        ).toEqual(["svc_translate_pro"])
        expect(
          (yield* catalog.list({ sellerId: "agt_seller_lexica", minPriceCents: 20_000, limit: 100 })).data.map(
            (s) => s.id
          )
        ).toEqual(["svc_doc_translate"])
        expect((yield* catalog.getTier("svc_doc_translate", "enterprise")).tier).toMatchObject({
          priceCents: 29900,
          sla: { uptimePct: 99.95 }
        })
        expect(yield* Effect.flip(catalog.getTier("svc_doc_translate", "nope"))).toMatchObject({
          _tag: "NotFound",
          resource: "tier"
        })
        expect((yield* Effect.flip(catalog.list({ cursor: "!!", limit: 5 })))._tag).toBe("InvalidInput")
        // Publishing and updating: own services only.
        const { agentId: seller, service } = yield* sellerWith("Catalog Service", [tier("unit", 10)], "catalog-test")
        const updated = yield* catalog.update(caller(seller), service.id, { name: "Renamed", status: "inactive" })
        expect(updated).toMatchObject({ name: "Renamed", status: "inactive" })
        expect((yield* catalog.list({ category: "catalog-test", limit: 10 })).data).toEqual([])
        expect((yield* Effect.flip(catalog.update(caller("agt_intruder"), service.id, { name: "x" })))._tag).toBe(
          "NotFound"
        )
        expect(
          (yield* Effect.flip(
            catalog.publish(caller("agt_buyer_only", "acct", ["commerce:buy"]), body("x", [tier("a", 1)]))
          ))._tag
        ).toBe("Forbidden")
      })
    )

    it.effect("auto-recharge: crossing the threshold warns and, in fake mode, grants at once", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const wallet = yield* Wallet
        const events = yield* Events
        const { service } = yield* sellerWith("Recharge Service", [tier("unit", 300)])
        const buyer = yield* fundedBuyer(1000)
        yield* wallet.updatePolicy(
          buyer.agentId,
          { autoRecharge: { enabled: true, thresholdCents: 500 as never, amountCents: 2000 as never } },
          { byOwner: true }
        )
        yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "unit", input: 1 }) // 700: above
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(700)
        yield* commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "unit", input: 2 }) // 400 < 500 → +2000
        expect((yield* wallet.view(buyer.agentId)).balanceCents).toBe(2400)
        const types = (yield* events.listForAgent(buyer.agentId, 20)).map((e) => e.type)
        expect(types.filter((t) => t === "wallet.low_balance").length).toBe(1)
        expect(types.filter((t) => t === "wallet.recharged").length).toBe(1)
        expect(
          (yield* Effect.flatMap(Ledger, (l) => l.entriesFor(walletAccount(buyer.agentId), { limit: 1 })))[0].postings
        ).toContainEqual({ account: EXTERNAL_GRANTS, amount: -2000 })
      })
    )

    it.effect("stats, usage and recommendations", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const reputation = yield* Reputation
        const buyer = yield* fundedBuyer(10_000)
        // Start of a UTC day, so the two days below are distinct.
        const now = yield* Clock.currentTimeMillis
        yield* TestClock.adjust(DAY - (now % DAY))
        const day1 = new Date(now - (now % DAY) + DAY).toISOString().slice(0, 10)
        const day2 = new Date(now - (now % DAY) + 2 * DAY).toISOString().slice(0, 10)
        yield* commerce.buy({ caller: buyer.caller, serviceId: "svc_translate_pro", tierId: "priority", input: 1 })
        yield* commerce.buy({ caller: buyer.caller, serviceId: "svc_translate_pro", tierId: "standard", input: 2 })
        yield* TestClock.adjust(DAY)
        yield* commerce.buy({ caller: buyer.caller, serviceId: "svc_doc_translate", tierId: "starter", input: 3 })
        const usage = yield* reputation.usage(buyer.agentId, 30)
        expect(usage.totals).toEqual({ calls: 3, spentCents: 1907 })
        expect(usage.byService).toEqual([
          { serviceId: "svc_doc_translate", serviceName: "Document Translation Suite", calls: 1, spentCents: 1900 },
          { serviceId: "svc_translate_pro", serviceName: "Translate Pro", calls: 2, spentCents: 7 }
        ])
        expect(usage.byDay).toEqual([
          { day: day1, calls: 2, spentCents: 7 },
          { day: day2, calls: 1, spentCents: 1900 }
        ])
        const stats = yield* reputation.stats(buyer.agentId)
        expect(stats.agent).toMatchObject({ purchases: 3, spentCents: 1907, sales: 0 })
        expect(stats.agent.topServicesBought[0]).toMatchObject({
          serviceId: "svc_translate_pro",
          count: 2,
          volumeCents: 7
        })
        expect(stats.platform.transactions).toBeGreaterThanOrEqual(3)
        const rec = yield* reputation.recommend(buyer.agentId, { limit: 20 })
        expect(rec.data.length).toBeGreaterThan(5)
        expect(rec.data[0].service.category).toBe("translation")
        expect(rec.data[0].reasons[0]).toBe("100% of your 3 purchases were translation")
        expect(rec.data.map((r) => r.score)).toEqual([...rec.data.map((r) => r.score)].sort((a, b) => b - a))
        // The wallet policy filters: only what the per-transaction limit allows.
        yield* Effect.flatMap(Wallet, (w) => w.updatePolicy(buyer.agentId, { perTransactionLimitCents: 5 as never }))
        const cheap = yield* reputation.recommend(buyer.agentId, { limit: 50 })
        expect(cheap.data.every((r) => r.priceCents <= 5)).toBe(true)
      })
    )

    it.effect(
      "recommendations draw their candidates from the kept ranking: a well-rated service past the first 100 by id is found",
      () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          const reputation = yield* Reputation
          const buyer = yield* fundedBuyer(0)
          // 120 unrated services in a category of their own; the one with the last id has a hundred 5-star reviews.
          for (let i = 0; i < 120; i++) {
            yield* store.insert({
              id: `svc_rank_${String(i).padStart(3, "0")}`,
              sellerAgentId: "agt_rank_seller",
              ...body(`Ranked ${i}`, [tier("unit", 10)], "ranktest"),
              status: "active",
              ratingSum: i === 119 ? 500 : 0,
              ratingCount: i === 119 ? 100 : 0,
              createdAt: "2026-11-25T00:00:00.000Z",
              updatedAt: "2026-11-25T00:00:00.000Z"
            } as never)
          }
          const rec = yield* reputation.recommend(buyer.agentId, { category: "ranktest", limit: 5 })
          expect(rec.data.map((r) => r.service.id)).toEqual([
            "svc_rank_119",
            "svc_rank_000",
            "svc_rank_001",
            "svc_rank_002",
            "svc_rank_003"
          ])
          expect(rec.data[0].reasons[1]).toBe("rated 5 from 100 reviews")
          // A review moves a service up the ranking at once.
          yield* Effect.forEach([5, 5, 5], (stars) => store.addRating("svc_rank_110", stars))
          const again = yield* reputation.recommend(buyer.agentId, { category: "ranktest", limit: 2 })
          expect(again.data.map((r) => r.service.id)).toEqual(["svc_rank_119", "svc_rank_110"])
        })
    )
  }
)
