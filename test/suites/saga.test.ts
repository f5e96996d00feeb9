// Saga suite (and the MPP service rules that need no HTTP), run on memory and Postgres: the happy
// path settles 85/15 through escrow; a deliver failure, a deliver timeout, insufficient funds or an
// unusable negotiation compensate with the buyer restored to the cent; a negotiated price is what
// the saga charges; sagas left mid-step by a dead driver are resumed by the worker (runDue) after
// their lease; the ledger check stays ok throughout.
import { unlimitedWallet } from "../fixtures/money.js"
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, it as vit } from "vitest"
import { cents } from "../../src/schema/platform/common.js"
import { EXTERNAL_GRANTS, escrowAccount, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { recoveryRule, type SagaRecord, sagaSteps } from "../../src/schema/saga/saga.js"
import { commerceServices } from "../../src/seed/services.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Events } from "../../src/services/events/Events.js"
import { NegotiationServicesLive } from "../fixtures/services.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { makeCredential } from "../../src/services/mpp/encoding.js"
import { Mpp } from "../../src/services/mpp/Mpp.js"
import { CHALLENGE_TTL_MS } from "../../src/schema/mpp/protocol.js"
import { type PaymentRequired } from "../../src/schema/mpp/problems.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { offersFrom, type OfferService } from "../../src/services/purchases/Offers.js"
import { deliverTimeoutMs } from "../../src/services/purchases/simulation.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { SagaStore } from "../../src/services/saga/SagaStore.js"
import { SAGA_LEASE_MS } from "../../src/services/saga/policy.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
import { CommerceSeedLive } from "../../src/layers/seed/seedCommerce.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { forEachStorage } from "../fixtures/suite.js"
import { readFileSync } from "node:fs"

const SERVICE = "svc_doc_translate"
const TIER = "business" // 7900 cents → seller 6715, fee 1185
const SELLER = "agt_seller_lexica"
const TIMEOUT_MS = deliverTimeoutMs(commerceServices.find((s) => s.id === SERVICE)!.tiers.find((t) => t.id === TIER)!) // business p95 8000 → 16 000 ms

/** A per_call service with a free tier, to prove the 0.01 USD minimum charge. */
const freebies: OfferService = {
  id: "svc_test_free",
  sellerAgentId: "agt_seller_brevis",
  name: "Free sampler",
  category: "test",
  pricingModel: "per_call",
  negotiation: { floorPct: 80, counterStepPct: 20 },
  tiers: [
    {
      id: "free",
      name: "Free",
      priceCents: 0,
      unit: "call",
      includedUnits: null,
      sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "none" }
    }
  ]
}

describe("saga definition", () => {
  vit("five steps, the spec's three in order, and a recovery rule for each (docs/saga.md says the same)", () => {
    expect([...sagaSteps]).toEqual(["quote", "escrow", "deliver", "settle", "confirm"])
    expect(TIMEOUT_MS).toBe(16_000)
    const doc = readFileSync(new URL("../../docs/saga.md", import.meta.url), "utf8")
    for (const step of sagaSteps) expect(doc).toContain(`| \`${step}\` |`)
    for (const [step, rule] of Object.entries(recoveryRule))
      expect(doc, step).toMatch(new RegExp(`\\| \`${step}\` \\|[^\\n]*\\| ${rule} \\|`))
  })
})

let n = 0
const newBuyer = () => ({
  accountId: "acct_test",
  agentId: `agt_buyer_${++n}_${Math.random().toString(36).slice(2, 8)}`,
  keyId: `key_${n}`
})

forEachStorage(
  "saga",
  (storage) =>
    NegotiationServicesLive.pipe(
      Layer.provideMerge(offersFrom([...commerceServices, freebies])),
      Layer.provideMerge(Wallet.layer),
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, Events.layer, CommerceSeedLive)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    const fund = (agentId: string, amount: number) =>
      Effect.andThen(
        unlimitedWallet(agentId),
        Effect.flatMap(Ledger, (l) =>
          l.transfer({
            kind: "grant",
            reference: `fund-${agentId}`,
            from: EXTERNAL_GRANTS,
            to: walletAccount(agentId),
            amount
          })
        )
      )
    const balance = (account: string) => Effect.flatMap(Ledger, (l) => l.balance(account))
    const ledgerOk = Effect.flatMap(Ledger, (l) => l.check).pipe(
      Effect.map((c) => ({ ok: c.ok, totalCents: c.totalCents, mismatches: c.mismatches.length }))
    )

    it.effect("happy path: five steps succeed in order with timestamps; 85/15 settlement through escrow; events", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const b = newBuyer()
        yield* fund(b.agentId, 10_000)
        const sellerBefore = yield* balance(walletAccount(SELLER))
        const feesBefore = yield* balance(PLATFORM_FEES)
        const saga = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER, input: { text: "hello" } })
        expect(saga).toMatchObject({
          status: "completed",
          priceCents: 7900,
          currentStep: null,
          failure: null,
          settlement: { priceCents: 7900, sellerCents: 6715, feeCents: 1185 }
        })
        expect(saga.steps.map((s) => [s.name, s.status])).toEqual(sagaSteps.map((s) => [s, "succeeded"]))
        for (const s of saga.steps) {
          expect(s.startedAt, s.name).not.toBeNull()
          expect(s.finishedAt, s.name).not.toBeNull()
        }
        expect(saga.finishedAt).not.toBeNull()
        expect(saga.output).toMatchObject({ simulated: true, serviceId: SERVICE, tierId: TIER })
        expect(yield* balance(walletAccount(b.agentId))).toBe(10_000 - 7900)
        expect((yield* balance(walletAccount(SELLER))) - sellerBefore).toBe(6715)
        expect((yield* balance(PLATFORM_FEES)) - feesBefore).toBe(1185)
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        const entries = yield* Effect.flatMap(Ledger, (l) => l.entriesByReference(saga.id))
        expect(entries.map((e) => e.kind)).toEqual(["escrow_hold", "escrow_settle"])
        expect(yield* ledgerOk).toEqual({ ok: true, totalCents: 0, mismatches: 0 })
        const events = (yield* Effect.flatMap(Events, (e) => e.listForAgent(b.agentId, 50))).filter(
          (e) => e.data.sagaId === saga.id
        )
        expect(events.filter((e) => e.type === "saga.step_changed")).toHaveLength(5)
        expect(events.filter((e) => e.type === "saga.completed").map((e) => e.data.amountCents)).toEqual([7900])
        expect(yield* sagas.get(b.agentId, saga.id)).toEqual(saga)
        expect(yield* Effect.flip(sagas.get(newBuyer().agentId, saga.id))).toMatchObject({ _tag: "NotFound" })
      })
    )

    it.effect("deliver failure compensates: escrow released, later steps skipped, the buyer restored exactly", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const b = newBuyer()
        yield* fund(b.agentId, 8000)
        const sellerBefore = yield* balance(walletAccount(SELLER))
        const saga = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER, input: { simulate: "fail" } })
        expect(saga).toMatchObject({
          status: "compensated",
          currentStep: null,
          settlement: null,
          failure: { step: "deliver" }
        })
        expect(saga.steps.map((s) => [s.name, s.status])).toEqual([
          ["quote", "compensated"],
          ["escrow", "compensated"],
          ["deliver", "failed"],
          ["settle", "skipped"],
          ["confirm", "skipped"]
        ])
        expect(saga.steps[1].compensatedAt).not.toBeNull()
        expect(yield* balance(walletAccount(b.agentId))).toBe(8000)
        expect((yield* balance(walletAccount(SELLER))) - sellerBefore).toBe(0)
        expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        const entries = yield* Effect.flatMap(Ledger, (l) => l.entriesByReference(saga.id))
        expect(entries.map((e) => e.kind)).toEqual(["escrow_hold", "escrow_release"])
        expect(yield* ledgerOk).toEqual({ ok: true, totalCents: 0, mismatches: 0 })
        const events = (yield* Effect.flatMap(Events, (e) => e.listForAgent(b.agentId, 50))).filter(
          (e) => e.data.sagaId === saga.id
        )
        expect(
          events.filter((e) => e.type === "saga.compensated").map((e) => [e.data.failedStep, e.data.refundedCents])
        ).toEqual([["deliver", 7900]])
      })
    )

    it.effect("deliver timeout: the saga waits on the seller, the worker compensates at the deadline, not before", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const b = newBuyer()
        yield* fund(b.agentId, 7900)
        const started = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER, input: { simulate: "timeout" } })
        expect(started).toMatchObject({ status: "running", currentStep: "deliver" })
        expect(started.steps[2]).toMatchObject({ status: "running" })
        expect(yield* balance(walletAccount(b.agentId))).toBe(0)
        expect(yield* balance(escrowAccount(started.id))).toBe(7900)
        yield* TestClock.adjust(TIMEOUT_MS - 1)
        yield* sagas.runDue()
        expect((yield* sagas.get(b.agentId, started.id)).status).toBe("running")
        yield* TestClock.adjust(1)
        yield* sagas.runDue()
        const done = yield* sagas.get(b.agentId, started.id)
        expect(done).toMatchObject({
          status: "compensated",
          failure: { step: "deliver", reason: `the seller did not deliver within ${TIMEOUT_MS} ms (timeout)` }
        })
        expect(yield* balance(walletAccount(b.agentId))).toBe(7900)
        expect(yield* balance(escrowAccount(started.id))).toBe(0)
        expect(yield* ledgerOk).toEqual({ ok: true, totalCents: 0, mismatches: 0 })
      })
    )

    it.effect("a slow seller answers before the deadline: the worker completes the saga when the answer is due", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const b = newBuyer()
        yield* fund(b.agentId, 7900)
        const started = yield* sagas.start(b, {
          serviceId: SERVICE,
          tierId: TIER,
          input: { simulate: "slow", delayMs: 2000 }
        })
        expect(started).toMatchObject({ status: "running", currentStep: "deliver" })
        yield* TestClock.adjust(1999)
        yield* sagas.runDue()
        expect((yield* sagas.get(b.agentId, started.id)).status).toBe("running")
        yield* TestClock.adjust(1)
        yield* sagas.runDue()
        expect(yield* sagas.get(b.agentId, started.id)).toMatchObject({
          status: "completed",
          settlement: { sellerCents: 6715, feeCents: 1185 }
        })
        expect(yield* balance(walletAccount(b.agentId))).toBe(0)
      })
    )

    it.effect("insufficient funds fail the escrow step: compensated, nothing moved", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const b = newBuyer()
        yield* fund(b.agentId, 7899)
        const saga = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER })
        expect(saga).toMatchObject({ status: "compensated", failure: { step: "escrow" } })
        expect(saga.steps.map((s) => s.status)).toEqual(["compensated", "failed", "skipped", "skipped", "skipped"])
        expect(yield* balance(walletAccount(b.agentId))).toBe(7899)
        expect(yield* Effect.flatMap(Ledger, (l) => l.entriesByReference(saga.id))).toEqual([])
      })
    )

    it.effect("a negotiated price is what the saga charges, once; compensation gives the price back for a retry", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const negotiations = yield* Negotiations
        const b = newBuyer()
        yield* fund(b.agentId, 20_000)
        const neg = yield* negotiations.open(
          { agentId: b.agentId },
          { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 }
        )
        yield* TestClock.adjust(3000) // the configured delay
        yield* negotiations.runDue()
        yield* negotiations.respond({ agentId: b.agentId, permissions: new Set() }, neg.id, { action: "accept" })
        // A failing saga uses the price, then gives it back.
        const failed = yield* sagas.start(b, {
          serviceId: SERVICE,
          tierId: TIER,
          negotiationId: neg.id,
          input: { simulate: "fail" }
        })
        expect(failed).toMatchObject({ status: "compensated", priceCents: 7030 })
        expect(failed.steps[0]).toMatchObject({ status: "compensated" })
        expect(yield* negotiations.get(b.agentId, neg.id)).toMatchObject({ status: "accepted", usedBy: null })
        const ok = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER, negotiationId: neg.id })
        expect(ok).toMatchObject({
          status: "completed",
          priceCents: 7030,
          settlement: { priceCents: 7030, sellerCents: 5975, feeCents: 1055 }
        })
        expect(yield* balance(walletAccount(b.agentId))).toBe(20_000 - 7030)
        expect(yield* negotiations.get(b.agentId, neg.id)).toMatchObject({ status: "used", usedBy: ok.id })
        // Used: a third saga fails at the quote step, nothing charged.
        const again = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER, negotiationId: neg.id })
        expect(again).toMatchObject({ status: "compensated", priceCents: null, failure: { step: "quote" } })
        expect(again.failure!.reason).toContain("already used")
        const wrongTier = yield* sagas.start(b, { serviceId: SERVICE, tierId: "starter", negotiationId: neg.id })
        expect(wrongTier).toMatchObject({ status: "compensated", failure: { step: "quote" } })
        expect(yield* balance(walletAccount(b.agentId))).toBe(20_000 - 7030)
      })
    )

    it.effect("a saga left mid-step by a dead driver is resumed by the worker once its lease runs out", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const store = yield* SagaStore
        const ledger = yield* Ledger
        const b = newBuyer()
        yield* fund(b.agentId, 10_000)
        const now = yield* Clock.currentTimeMillis
        const at = new Date(now).toISOString()
        const step = (name: (typeof sagaSteps)[number], status: "pending" | "succeeded") => ({
          name,
          status,
          startedAt: status === "pending" ? null : at,
          finishedAt: status === "pending" ? null : at,
          compensatedAt: null,
          detail: null
        })
        // Died after the escrow commit, before deliver; and died right after the quote.
        const base = (id: string, done: number): SagaRecord => ({
          id,
          buyerAgentId: b.agentId,
          accountId: b.accountId,
          sellerAgentId: SELLER,
          serviceId: SERVICE,
          tierId: TIER,
          input: null,
          negotiationId: null,
          priceCents: 7900,
          snapshot: {
            serviceName: "Document Translation Suite",
            category: "translation",
            pricingModel: "tiered",
            listPriceCents: 7900
          },
          transactionId: null,
          status: "running",
          steps: sagaSteps.map((s, i) => step(s, i < done ? "succeeded" : "pending")),
          failure: null,
          output: null,
          nextRunAt: new Date(now + SAGA_LEASE_MS).toISOString(),
          deliverDueAt: null,
          createdAt: at,
          updatedAt: at,
          finishedAt: null
        })
        const afterEscrow = `saga_crash_a_${n}`
        const afterQuote = `saga_crash_b_${n}`
        yield* ledger.transfer({
          kind: "escrow_hold",
          reference: afterEscrow,
          from: walletAccount(b.agentId),
          to: escrowAccount(afterEscrow),
          amount: 7900
        })
        yield* store.insert(base(afterEscrow, 2))
        yield* store.insert(base(afterQuote, 1))
        // Within the lease nobody takes them over.
        yield* TestClock.adjust(SAGA_LEASE_MS - 1)
        yield* sagas.runDue()
        expect((yield* sagas.get(b.agentId, afterEscrow)).currentStep).toBe("deliver")
        yield* TestClock.adjust(1)
        yield* sagas.runDue()
        expect(yield* sagas.get(b.agentId, afterEscrow)).toMatchObject({
          status: "completed",
          settlement: { sellerCents: 6715 }
        })
        // The second one escrows 7900 it no longer has after the first (10 000 − 7900 = 2100): compensated.
        expect(yield* sagas.get(b.agentId, afterQuote)).toMatchObject({
          status: "compensated",
          failure: { step: "escrow" }
        })
        expect(yield* balance(walletAccount(b.agentId))).toBe(2100)
        expect(yield* ledgerOk).toEqual({ ok: true, totalCents: 0, mismatches: 0 })
      })
    )

    it.effect(
      "the saga joins the commerce history: a completed transaction after confirm, a failed uncharged one when the seller fails",
      () =>
        Effect.gen(function* () {
          const sagas = yield* Sagas
          const commerce = yield* PurchaseStore
          const b = newBuyer()
          yield* fund(b.agentId, 8000)
          const ok = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER })
          const row = (yield* commerce.getTransaction(ok.transactionId!))!
          expect(row.tx).toMatchObject({
            status: "completed",
            buyerAgentId: b.agentId,
            sellerAgentId: SELLER,
            serviceId: SERVICE,
            tierId: TIER,
            priceCents: 7900,
            sellerCents: 6715,
            feeCents: 1185,
            listPriceCents: 7900,
            pricingModel: "tiered",
            category: "translation"
          })
          const settle = (yield* Effect.flatMap(Ledger, (l) => l.entriesByReference(ok.id))).find(
            (e) => e.kind === "escrow_settle"
          )!
          expect(row.tx.ledgerEntryId).toBe(settle.id)
          expect(row.delivery).toMatchObject({ success: true, output: { simulated: true } })
          const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(b.agentId, 50))
          expect(events.find((e) => e.type === "saga.completed" && e.data.sagaId === ok.id)?.data.transactionId).toBe(
            ok.transactionId
          )
          expect(
            events.some((e) => e.type === "transaction.completed" && e.data.transactionId === ok.transactionId)
          ).toBe(true)
          yield* fund(b.agentId, 7900)
          const failed = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER, input: { simulate: "fail" } })
          const failedRow = (yield* commerce.getTransaction(failed.transactionId!))!
          expect(failedRow.tx).toMatchObject({
            status: "failed",
            priceCents: 7900,
            sellerCents: 0,
            feeCents: 0,
            ledgerEntryId: null
          })
          expect(failedRow.delivery).toMatchObject({
            success: false,
            latencyMs: 4000,
            error: "the seller reported a delivery failure (simulated)"
          })
          const poorBuyer = newBuyer()
          yield* unlimitedWallet(poorBuyer.agentId)
          const poor = yield* sagas.start(poorBuyer, { serviceId: SERVICE, tierId: TIER })
          expect(poor).toMatchObject({ status: "compensated", transactionId: null, failure: { step: "escrow" } })
        })
    )

    it.effect(
      "wallet policies apply at the quote step: a limit or manual autonomy compensates; saga spending counts in the daily limit",
      () =>
        Effect.gen(function* () {
          const sagas = yield* Sagas
          const wallet = yield* Wallet
          const b = newBuyer()
          yield* fund(b.agentId, 30_000)
          yield* wallet.updatePolicy(b.agentId, { perTransactionLimitCents: cents(7000) })
          const over = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER })
          expect(over).toMatchObject({ status: "compensated", failure: { step: "quote" } })
          expect(over.failure!.reason).toContain("perTransactionLimit")
          yield* wallet.updatePolicy(
            b.agentId,
            { perTransactionLimitCents: null, dailyLimitCents: cents(10_000) },
            { byOwner: true }
          )
          expect(yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER })).toMatchObject({ status: "completed" })
          const second = yield* sagas.start(b, { serviceId: SERVICE, tierId: TIER })
          expect(second).toMatchObject({ status: "compensated", failure: { step: "quote" } })
          expect(second.failure!.reason).toContain("dailyLimit")
          yield* wallet.updatePolicy(b.agentId, { dailyLimitCents: null, autonomyLevel: "manual" }, { byOwner: true })
          const manual = yield* sagas.start(b, { serviceId: "svc_web_scrape", tierId: "basic" })
          expect(manual.failure!.reason).toContain("needs the owner's approval")
          expect(yield* balance(walletAccount(b.agentId))).toBe(30_000 - 7900)
        })
    )

    it.effect("unknown service or tier is 404 before anything starts; buying your own service is 400", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        expect(yield* Effect.flip(sagas.start(newBuyer(), { serviceId: "svc_nope", tierId: TIER }))).toMatchObject({
          _tag: "NotFound",
          resource: "service"
        })
        expect(yield* Effect.flip(sagas.start(newBuyer(), { serviceId: SERVICE, tierId: "nope" }))).toMatchObject({
          _tag: "NotFound",
          resource: "tier"
        })
        expect(
          yield* Effect.flip(sagas.start({ accountId: "a", agentId: SELLER }, { serviceId: SERVICE, tierId: TIER }))
        ).toMatchObject({ _tag: "InvalidInput" })
      })
    )

    it.effect("MPP: a tier priced below 0.01 USD is refused; non-per_call services are not paid per request", () =>
      Effect.gen(function* () {
        const mpp = yield* Mpp
        const b = newBuyer()
        const call = (serviceId: string, tierId: string) =>
          Effect.flip(
            mpp.invoke(b, {
              serviceId,
              tierId,
              input: {},
              body: "{}",
              credential: undefined,
              credentialHeader: undefined
            })
          )
        expect(yield* call("svc_test_free", "free")).toMatchObject({
          _tag: "ChargeBelowMinimum",
          amountCents: 0,
          minimumCents: 1
        })
        expect(yield* call(SERVICE, TIER)).toMatchObject({ _tag: "NotPayPerRequest", pricingModel: "tiered" })
        // The cheapest real tier (1 cent) is exactly the minimum: it gets a challenge.
        expect(yield* call("svc_image_gen", "draft")).toMatchObject({
          _tag: "PaymentRequired",
          challenge: { requestDecoded: { amount: "1", currency: "usd" } }
        })
      })
    )

    it.effect("MPP: a challenge expires after 5 minutes (payment-expired); before that it pays exactly once", () =>
      Effect.gen(function* () {
        const mpp = yield* Mpp
        const b = newBuyer()
        yield* fund(b.agentId, 10)
        const paid = (credential: string | undefined) =>
          mpp.invoke(b, {
            serviceId: "svc_image_gen",
            tierId: "standard",
            input: {},
            body: "{}",
            credential,
            credentialHeader: "Payment-Authorization"
          })
        const first = yield* Effect.flip(paid(undefined))
        if (first._tag !== "PaymentRequired") throw new Error(first._tag)
        yield* TestClock.adjust(CHALLENGE_TTL_MS)
        const expired = yield* Effect.flip(paid(makeCredential(first.challenge)))
        expect(expired).toMatchObject({ _tag: "PaymentRequired", problem: "payment-expired" })
        const fresh = (expired as PaymentRequired).challenge
        expect(fresh.id).not.toBe(first.challenge.id)
        yield* TestClock.adjust(CHALLENGE_TTL_MS - 1)
        const ok = yield* paid(makeCredential(fresh))
        expect(ok).toMatchObject({
          chargedCents: 4,
          receipt: { status: "success", challengeId: fresh.id, amount: "4" }
        })
        expect(yield* Effect.flip(paid(makeCredential(fresh)))).toMatchObject({ problem: "invalid-challenge" })
        expect(yield* balance(walletAccount(b.agentId))).toBe(6)
      })
    )
  },
  { negotiationDelayMs: 3000 }
)
