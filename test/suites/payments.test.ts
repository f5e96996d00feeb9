// Payments suite, run on memory and Postgres with the fake processor: plan activation credits the
// wallet once per event, knowledge access, acquisitions, recharges, failures, expiries, renewals,
// and the Stripe-Signature check (SDK-made headers accepted; tampered and stale ones refused).
import { expect } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import Stripe from "stripe"
import { describe, it as vit } from "vitest"
import { FAKE_SESSION_TTL_MS, FakeProcessorLive } from "../../src/layers/payments/PaymentProcessor.fake.js"
import { eventEnvelope, signPayload, verifySignature } from "../../src/layers/payments/stripeFormat.js"
import { SeedLive } from "../../src/layers/seed/seed.js"
import { Conflict, InvalidInput, NotFound } from "../../src/schema/platform/errors.js"
import { KnowledgeProduct } from "../../src/schema/knowledge/knowledge.js"
import { EXTERNAL_PAYMENTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { InvalidSignature, RECHARGE_MAX_CENTS, RECHARGE_MIN_CENTS } from "../../src/schema/payments/payments.js"
import type { Caller } from "../../src/services/keys/Caller.js"
import { configDefaults } from "../../src/services/platform/AppConfig.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Events } from "../../src/services/events/Events.js"
import { ServicesLive } from "../fixtures/services.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { KnowledgeStore } from "../../src/services/knowledge/KnowledgeStore.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { FakeCheckout } from "../../src/services/payments/FakeCheckout.js"
import { Payments } from "../../src/services/payments/Payments.js"
import { forEachStorage } from "../fixtures/suite.js"

const build = <R, E>(storage: Layer.Layer<R, E>) =>
  Payments.layer.pipe(
    Layer.provideMerge(FakeProcessorLive),
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(SeedLive),
    Layer.provideMerge(storage),
    Layer.provideMerge(Ids.Live)
  )

/** Configured, so the suite can sign events itself (unset, the fake makes a random secret per process). */
const TEST_WEBHOOK_SECRET = "whsec_payments_suite_secret_0123456789abcdef"

let counter = 0
/** An account with one agent; the caller is that agent's key. */
const owner = Effect.gen(function* () {
  const keys = yield* Keys
  const account = yield* keys.signUp({
    email: `payer-${Date.now()}-${counter++}@example.com`,
    password: "correct horse battery",
    name: "Payer"
  })
  const agent = yield* keys.createAgent(account.id, { name: "buyer" })
  const caller: Caller = {
    accountId: account.id,
    agentId: agent.id,
    keyId: "key_test",
    permissions: new Set(),
    via: "key"
  }
  return { account, agent, caller }
})

/** Clicks Pay (or a failing test card) on the fake page and delivers the event like the page does. */
const pay = (sessionId: string, failure?: string) =>
  Effect.gen(function* () {
    const outcome = yield* Effect.flatMap(FakeCheckout, (p) => p.pay(sessionId, { failure }))
    const ack = yield* Effect.flatMap(Payments, (p) =>
      p.handleWebhook(outcome.delivery!.payload, outcome.delivery!.signatureHeader)
    )
    return { outcome, ack, delivery: outcome.delivery! }
  })

forEachStorage(
  "payments",
  build,
  (it) => {
    it.effect(
      "Pro plan: checkout → Pay → plan pro, 2,500 credits in the wallet, 5-project quota, payment.succeeded",
      () =>
        Effect.gen(function* () {
          const payments = yield* Payments
          const ledger = yield* Ledger
          const { account, agent, caller } = yield* owner
          expect(yield* payments.planOf(account.id)).toBeNull()
          const checkout = yield* payments.createSubscriptionCheckout(caller, { planId: "pro" })
          expect(checkout).toMatchObject({ planId: "pro", amountCents: 9900, credits: 2500, agentId: agent.id })
          expect(checkout.checkoutUrl).toBe(`http://localhost:3000/checkout/fake/${checkout.sessionId}`)
          expect(yield* ledger.balance(walletAccount(agent.id))).toBe(0)

          const { ack, outcome } = yield* pay(checkout.sessionId)
          expect(ack).toMatchObject({ received: true, duplicate: false })
          expect(ack.outcome).toContain("plan pro active, 2500 credits")
          expect(outcome.redirectUrl).toBe(`http://localhost:3000/checkout/success?session_id=${checkout.sessionId}`)
          expect(yield* ledger.balance(walletAccount(agent.id))).toBe(2500)
          expect((yield* Effect.flatMap(Keys, (k) => k.getAccount(account.id))).planId).toBe("pro")
          expect((yield* payments.planOf(account.id))?.max_projects).toBe(5)
          const entries = yield* ledger.entriesByReference(checkout.sessionId)
          expect(entries).toHaveLength(1)
          expect(entries[0]).toMatchObject({ kind: "funding" })
          expect(entries[0].postings).toEqual(
            expect.arrayContaining([
              { account: EXTERNAL_PAYMENTS, amount: -2500 },
              { account: walletAccount(agent.id), amount: 2500 }
            ])
          )
          const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(agent.id, 10))
          expect(events.map((e) => e.type)).toEqual(["payment.succeeded"])
          expect(events[0].data).toMatchObject({ checkoutSessionId: checkout.sessionId, planId: "pro", credits: 2500 })
          expect((yield* payments.getCheckout(checkout.sessionId))?.status).toBe("paid")
          expect((yield* ledger.check).ok).toBe(true)
        })
    )

    it.effect("the same event delivered twice grants once (ledger counts it once)", () =>
      Effect.gen(function* () {
        const payments = yield* Payments
        const ledger = yield* Ledger
        const { agent, caller } = yield* owner
        const checkout = yield* payments.createSubscriptionCheckout(caller, { planId: "starter" })
        const { delivery } = yield* pay(checkout.sessionId)
        const again = yield* payments.handleWebhook(delivery.payload, delivery.signatureHeader)
        expect(again).toEqual({
          received: true,
          eventId: delivery.eventId,
          duplicate: true,
          outcome: "duplicate: already processed"
        })
        // Ten concurrent replays: still one grant.
        const replays = yield* Effect.all(
          Array.from({ length: 10 }, () => payments.handleWebhook(delivery.payload, delivery.signatureHeader)),
          { concurrency: "unbounded" }
        )
        expect(replays.every((r) => r.duplicate)).toBe(true)
        expect(yield* ledger.balance(walletAccount(agent.id))).toBe(500)
        expect(yield* ledger.entriesByReference(checkout.sessionId)).toHaveLength(1)
        // Paying again on the page is refused: the session is complete.
        const repay = yield* Effect.flip(Effect.flatMap(FakeCheckout, (p) => p.pay(checkout.sessionId, {})))
        expect(repay).toBeInstanceOf(Conflict)
      })
    )

    it.effect("a dashboard session must name one of its own agents; a key credits only its own", () =>
      Effect.gen(function* () {
        const payments = yield* Payments
        const { account, agent, caller } = yield* owner
        const other = yield* owner
        const session: Caller = {
          accountId: account.id,
          agentId: undefined,
          keyId: undefined,
          permissions: new Set(),
          via: "session"
        }
        const missing = yield* Effect.flip(payments.createSubscriptionCheckout(session, { planId: "pro" }))
        expect(missing).toBeInstanceOf(InvalidInput)
        expect(missing).toMatchObject({ field: "agentId" })
        const foreign = yield* Effect.flip(
          payments.createSubscriptionCheckout(session, { planId: "pro", agentId: other.agent.id })
        )
        expect(foreign).toBeInstanceOf(NotFound)
        const ok = yield* payments.createSubscriptionCheckout(session, { planId: "scale", agentId: agent.id })
        expect(ok).toMatchObject({ agentId: agent.id, credits: 10000, amountCents: 29900 })
        const wrongKey = yield* Effect.flip(
          payments.createSubscriptionCheckout(caller, { planId: "pro", agentId: other.agent.id })
        )
        expect(wrongKey).toMatchObject({ _tag: "InvalidInput", field: "agentId" })
        yield* pay(ok.sessionId)
        expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agent.id)))).toBe(10000)
        expect((yield* payments.planOf(account.id))?.max_projects).toBe("unlimited")
      })
    )

    it.effect(
      "knowledge purchase: pending → paid with an access record; unknown → NotFound; inactive → InvalidInput",
      () =>
        Effect.gen(function* () {
          const payments = yield* Payments
          const started = yield* payments.purchaseAccess({
            serviceId: 3,
            customerEmail: "Buyer@Example.com",
            customerName: "Ana"
          })
          expect(started.checkoutUrl).toContain("/checkout/fake/")
          const before = yield* payments.purchaseStatus(started.sessionId)
          expect(before).toMatchObject({ status: "pending", productId: 3, amountCents: 1997, currency: "usd" })
          expect(before.grantedAt).toBeUndefined()
          yield* pay(started.sessionId)
          const after = yield* payments.purchaseStatus(started.sessionId)
          expect(after.status).toBe("paid")
          expect(after.grantedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/)
          expect(after.accessId).toMatch(/^acc_/)

          const unknown = yield* Effect.flip(
            payments.purchaseAccess({ serviceId: 999, customerEmail: "a@b.co", customerName: "A" })
          )
          expect(unknown).toBeInstanceOf(NotFound)
          expect(unknown.message).toContain("serviceId")
          yield* Effect.flatMap(KnowledgeStore, (s) =>
            s.upsertProducts([
              KnowledgeProduct.make({
                id: 77,
                name: "Retired",
                slug: "retired",
                description: "x",
                priceInCents: 500,
                currency: "usd",
                category: "ai_consultation",
                isActive: false
              })
            ])
          )
          const inactive = yield* Effect.flip(
            payments.purchaseAccess({ serviceId: 77, customerEmail: "a@b.co", customerName: "A" })
          )
          expect(inactive).toMatchObject({ _tag: "InvalidInput", field: "serviceId" })
          // A plan checkout is not a purchase: its status is not readable here.
          const { caller } = yield* owner
          const plan = yield* payments.createSubscriptionCheckout(caller, { planId: "pro" })
          expect(yield* Effect.flip(payments.purchaseStatus(plan.sessionId))).toBeInstanceOf(NotFound)
          expect(yield* Effect.flip(payments.purchaseStatus("cs_nothing_here"))).toBeInstanceOf(NotFound)
        })
    )

    it.effect("a declined test card fails the checkout: status failed, nothing granted", () =>
      Effect.gen(function* () {
        const payments = yield* Payments
        const started = yield* payments.purchaseAccess({ serviceId: 1, customerEmail: "c@d.co", customerName: "C" })
        const { ack, outcome } = yield* pay(started.sessionId, "card_declined")
        expect(outcome.delivery?.type).toBe("checkout.session.async_payment_failed")
        expect(outcome.session.failureCode).toBe("card_declined")
        expect(outcome.redirectUrl).toContain("/checkout/cancelled?session_id=")
        expect(ack.outcome).toBe("failed")
        const status = yield* payments.purchaseStatus(started.sessionId)
        expect(status).toMatchObject({ status: "failed", failureReason: "payment_failed" })
        expect(status.grantedAt).toBeUndefined()
      })
    )

    it.effect(
      "acquisitions: pending → paid lands in listAcquisitions; cancel expires; a second paid acquisition conflicts",
      () =>
        Effect.gen(function* () {
          const payments = yield* Payments
          const { agent, caller } = yield* owner
          const started = yield* payments.startAcquisition({
            caller,
            projectId: "proj_alpha",
            priceCents: 125_000,
            title: "Alpha"
          })
          expect(started).toMatchObject({ projectId: "proj_alpha", priceCents: 125_000 })
          expect(started.acquisitionId).toMatch(/^acq_/)
          let list = (yield* payments.listAcquisitions(agent.id)).data
          expect(list.map((a) => [a.projectId, a.status])).toEqual([["proj_alpha", "pending"]])
          yield* pay(started.sessionId)
          list = (yield* payments.listAcquisitions(agent.id)).data
          expect(list[0]).toMatchObject({
            id: started.acquisitionId,
            status: "paid",
            priceCents: 125_000,
            checkoutSessionId: started.sessionId
          })
          expect(list[0].paidAt).not.toBeNull()
          const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(agent.id, 5))
          expect(events[0]).toMatchObject({
            type: "payment.succeeded",
            data: { acquisitionId: started.acquisitionId, projectId: "proj_alpha" }
          })

          const again = yield* Effect.flip(
            payments.startAcquisition({ caller, projectId: "proj_alpha", priceCents: 125_000, title: "Alpha" })
          )
          expect(again).toBeInstanceOf(Conflict)

          const beta = yield* payments.startAcquisition({
            caller,
            projectId: "proj_beta",
            priceCents: 900,
            title: "Beta"
          })
          const cancelled = yield* Effect.flatMap(FakeCheckout, (p) => p.cancel(beta.sessionId))
          yield* payments.handleWebhook(cancelled.delivery!.payload, cancelled.delivery!.signatureHeader)
          list = (yield* payments.listAcquisitions(agent.id)).data
          expect(list.map((a) => [a.projectId, a.status])).toEqual([
            ["proj_beta", "expired"],
            ["proj_alpha", "paid"]
          ])
          // Keyset pages, newest first: one, then the one before it, then the end.
          const first = yield* payments.listAcquisitions(agent.id, { limit: 1 })
          expect(first.data.map((a) => a.projectId)).toEqual(["proj_beta"])
          const second = yield* payments.listAcquisitions(agent.id, { limit: 1, cursor: first.nextCursor! })
          expect([second.data.map((a) => a.projectId), second.nextCursor]).toEqual([["proj_alpha"], null])
          expect(yield* Effect.flip(payments.listAcquisitions(agent.id, { cursor: "x" }))).toMatchObject({
            _tag: "InvalidInput",
            field: "cursor"
          })
          // An expired acquisition does not block a new one; the paid one still does (after others).
          const beta2 = yield* payments.startAcquisition({
            caller,
            projectId: "proj_beta",
            priceCents: 900,
            title: "Beta"
          })
          expect(beta2.projectId).toBe("proj_beta")
          expect(
            yield* Effect.flip(
              payments.startAcquisition({ caller, projectId: "proj_alpha", priceCents: 125_000, title: "Alpha" })
            )
          ).toBeInstanceOf(Conflict)
          // Another agent sees none of them.
          expect((yield* payments.listAcquisitions((yield* owner).agent.id)).data).toEqual([])

          const noAgent = yield* Effect.flip(
            payments.startAcquisition({
              caller: { ...caller, agentId: undefined, via: "session" },
              projectId: "p",
              priceCents: 100,
              title: "P"
            })
          )
          expect(noAgent).toMatchObject({ _tag: "InvalidInput", field: "agentId" })
          expect(
            yield* Effect.flip(payments.startAcquisition({ caller, projectId: "p", priceCents: 0, title: "P" }))
          ).toMatchObject({ field: "priceCents" })
        })
    )

    it.effect(
      "wallet recharge: funds the wallet and emits wallet.recharged; amounts outside the bounds are refused",
      () =>
        Effect.gen(function* () {
          const payments = yield* Payments
          const { agent } = yield* owner
          const started = yield* payments.startRecharge({ agentId: agent.id, amountCents: 5_000 })
          expect(started).toMatchObject({ agentId: agent.id, amountCents: 5_000 })
          yield* pay(started.sessionId)
          expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agent.id)))).toBe(5_000)
          const events = yield* Effect.flatMap(Events, (e) => e.listForAgent(agent.id, 5))
          expect(events.map((e) => e.type)).toEqual(["wallet.recharged", "payment.succeeded"])
          expect(events[0].data).toMatchObject({
            amountCents: 5_000,
            balanceCents: 5_000,
            checkoutSessionId: started.sessionId
          })
          for (const amountCents of [RECHARGE_MIN_CENTS - 1, RECHARGE_MAX_CENTS + 1, 150.5]) {
            expect(yield* Effect.flip(payments.startRecharge({ agentId: agent.id, amountCents }))).toMatchObject({
              _tag: "InvalidInput",
              field: "amountCents"
            })
          }
          expect(
            yield* Effect.flip(payments.startRecharge({ agentId: "agt_nobody", amountCents: 500 }))
          ).toBeInstanceOf(NotFound)
        })
    )

    it.effect(
      "subscription renewal (invoice.paid, subscription_cycle) credits another period once; cancellation ends the plan",
      () =>
        Effect.gen(function* () {
          const payments = yield* Payments
          const ledger = yield* Ledger
          const { account, agent, caller } = yield* owner
          const checkout = yield* payments.createSubscriptionCheckout(caller, { planId: "pro" })
          const { outcome } = yield* pay(checkout.sessionId)
          const subscriptionId = outcome.session.subscriptionId!
          expect(subscriptionId).toMatch(/^sub_fake_/)
          // Owner only (another account: NotFound, as for a session that does not exist), once per period.
          const renew = (accountId: string) =>
            Effect.flatMap(FakeCheckout, (p) => p.renew(checkout.sessionId, { accountId }))
          expect(yield* Effect.flip(renew("acc_someone_else"))).toBeInstanceOf(NotFound)
          expect(yield* Effect.flip(renew(account.id))).toMatchObject({ _tag: "Conflict", state: "period_not_over" })
          yield* TestClock.adjust(FAKE_BILLING_PERIOD_MS - 1000)
          expect(yield* Effect.flip(renew(account.id))).toMatchObject({ _tag: "Conflict", state: "period_not_over" })
          yield* TestClock.adjust(1000)
          const renewal = yield* renew(account.id)
          // The second renewal waits for the end of the second period.
          expect(yield* Effect.flip(renew(account.id))).toMatchObject({ _tag: "Conflict", state: "period_not_over" })
          const deliveries = yield* Effect.flatMap(FakeCheckout, (p) =>
            p.deliveries(checkout.sessionId, { accountId: account.id })
          )
          expect(deliveries.map((d) => d.type)).toEqual(["checkout.session.completed", "invoice.paid"])
          expect(
            yield* Effect.flip(
              Effect.flatMap(FakeCheckout, (p) => p.deliveries(checkout.sessionId, { accountId: "acc_someone_else" }))
            )
          ).toBeInstanceOf(NotFound)
          expect(
            yield* Effect.flip(Effect.flatMap(FakeCheckout, (p) => p.deliveries(checkout.sessionId, undefined)))
          ).toBeInstanceOf(NotFound)
          const ack = yield* payments.handleWebhook(renewal.delivery!.payload, renewal.delivery!.signatureHeader)
          expect(ack.outcome).toContain("renewal of pro")
          expect(yield* ledger.balance(walletAccount(agent.id))).toBe(5000)
          expect(
            (yield* payments.handleWebhook(renewal.delivery!.payload, renewal.delivery!.signatureHeader)).duplicate
          ).toBe(true)
          expect(yield* ledger.balance(walletAccount(agent.id))).toBe(5000)

          // customer.subscription.deleted, signed with the fake's secret like any processor event.
          const now = Math.floor((yield* TestClockTime) / 1000)
          const payload = JSON.stringify(
            eventEnvelope({
              id: "evt_sub_deleted_1",
              type: "customer.subscription.deleted",
              createdSeconds: now,
              object: { id: subscriptionId, object: "subscription", status: "canceled" }
            })
          )
          const ended = yield* payments.handleWebhook(payload, signPayload(payload, TEST_WEBHOOK_SECRET, now))
          expect(ended.outcome).toBe("plan pro ended")
          expect(yield* payments.planOf(account.id)).toBeNull()
          expect(yield* ledger.balance(walletAccount(agent.id))).toBe(5000)
        })
    )

    it.effect("an open fake session lapses after 24 h: viewing it expires the checkout", () =>
      Effect.gen(function* () {
        const payments = yield* Payments
        const started = yield* payments.purchaseAccess({
          serviceId: 2,
          customerEmail: "late@x.co",
          customerName: "Late"
        })
        yield* TestClock.adjust(FAKE_SESSION_TTL_MS + 1000)
        const view = yield* Effect.flatMap(FakeCheckout, (p) => p.view(started.sessionId))
        expect(view.session.status).toBe("expired")
        expect(view.delivery?.type).toBe("checkout.session.expired")
        yield* payments.handleWebhook(view.delivery!.payload, view.delivery!.signatureHeader)
        expect((yield* payments.purchaseStatus(started.sessionId)).status).toBe("expired")
        // A late Pay click cannot revive it.
        expect(yield* Effect.flip(Effect.flatMap(FakeCheckout, (p) => p.pay(started.sessionId, {})))).toBeInstanceOf(
          Conflict
        )
      })
    )

    it.effect("the Idempotency-Key passed reaches the processor: a retried request gets the same session", () =>
      Effect.gen(function* () {
        const payments = yield* Payments
        const { caller } = yield* owner
        const first = yield* payments.createSubscriptionCheckout(
          caller,
          { planId: "pro" },
          { key: "retry-1", scope: "" }
        )
        const second = yield* payments.createSubscriptionCheckout(
          caller,
          { planId: "pro" },
          { key: "retry-1", scope: "" }
        )
        const third = yield* payments.createSubscriptionCheckout(
          caller,
          { planId: "pro" },
          { key: "retry-2", scope: "" }
        )
        const plain = yield* payments.createSubscriptionCheckout(caller, { planId: "pro" })
        expect(second.sessionId).toBe(first.sessionId)
        expect(third.sessionId).not.toBe(first.sessionId)
        expect(plain.sessionId).not.toBe(first.sessionId)
      })
    )

    it.effect(
      "webhook signatures: SDK-made headers pass; tampered, stale, future, missing and wrong-secret ones are InvalidSignature",
      () =>
        Effect.gen(function* () {
          const payments = yield* Payments
          yield* TestClock.setTime(Date.now())
          const now = Math.floor(Date.now() / 1000)
          const payload = JSON.stringify(
            eventEnvelope({
              id: `evt_sig_${now}`,
              type: "ping",
              createdSeconds: now,
              object: { id: "x", object: "ping" }
            })
          )
          const sdkHeader = Stripe.webhooks.generateTestHeaderString({
            payload,
            secret: TEST_WEBHOOK_SECRET,
            timestamp: now
          })
          expect((yield* payments.handleWebhook(payload, sdkHeader)).outcome).toBe("ignored: ping")

          const refused = (body: string, header: string | undefined) =>
            Effect.flip(payments.handleWebhook(body, header))
          expect(yield* refused(payload.replace("ping", "pong"), sdkHeader)).toBeInstanceOf(InvalidSignature)
          expect(
            yield* refused(
              payload,
              Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET, timestamp: now - 301 })
            )
          ).toMatchObject({
            _tag: "InvalidSignature",
            message: expect.stringContaining("tolerance")
          })
          expect(
            yield* refused(
              payload,
              Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET, timestamp: now + 301 })
            )
          ).toBeInstanceOf(InvalidSignature)
          expect(
            yield* refused(
              payload,
              Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_wrong", timestamp: now })
            )
          ).toBeInstanceOf(InvalidSignature)
          expect(yield* refused(payload, undefined)).toMatchObject({ message: "missing Stripe-Signature header" })
          expect(yield* refused(payload, `t=${now}`)).toBeInstanceOf(InvalidSignature)
          expect(yield* refused(payload, "v1=abc")).toBeInstanceOf(InvalidSignature)
          // Within the tolerance (299 s old) it still passes.
          const old = JSON.stringify(
            eventEnvelope({
              id: `evt_sig_old_${now}`,
              type: "ping",
              createdSeconds: now - 299,
              object: { object: "ping" }
            })
          )
          expect((yield* payments.handleWebhook(old, signPayload(old, TEST_WEBHOOK_SECRET, now - 299))).duplicate).toBe(
            false
          )
          // Several v1 signatures (a rotated secret): one match is enough.
          const rotated = JSON.stringify(
            eventEnvelope({ id: `evt_sig_rot_${now}`, type: "ping", createdSeconds: now, object: { object: "ping" } })
          )
          const good = signPayload(rotated, TEST_WEBHOOK_SECRET, now).split(",")[1]
          const bad = signPayload(rotated, "whsec_old", now).split(",")[1]
          expect((yield* payments.handleWebhook(rotated, `t=${now},${bad},${good},v0=zzz`)).duplicate).toBe(false)
          // A verified body that is not an event is InvalidInput, not a crash.
          const junk = '{"hello":1}'
          expect(yield* refused(junk, signPayload(junk, TEST_WEBHOOK_SECRET, now))).toBeInstanceOf(InvalidInput)
        })
    )
  },
  { stripeWebhookSecret: Option.some(Redacted.make(TEST_WEBHOOK_SECRET)) }
)

/** The default billing period (30 days), as configDefaults has it. */
const FAKE_BILLING_PERIOD_MS = configDefaults.fakeBillingPeriodSeconds * 1000
const TestClockTime = Effect.clockWith((clock) => clock.currentTimeMillis)

describe("verifySignature", () => {
  vit("pins the 300 s tolerance on both sides and the header grammar", () => {
    const payload = '{"id":"evt_1"}'
    const at = 1_700_000_000
    const header = signPayload(payload, "whsec_x", at)
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/)
    expect(verifySignature({ payload, header, secret: "whsec_x", nowSeconds: at + 300 })._tag).toBe("Success")
    expect(verifySignature({ payload, header, secret: "whsec_x", nowSeconds: at + 301 })._tag).toBe("Failure")
    expect(verifySignature({ payload, header, secret: "whsec_x", nowSeconds: at - 300 })._tag).toBe("Success")
    expect(verifySignature({ payload, header, secret: "whsec_x", nowSeconds: at - 301 })._tag).toBe("Failure")
    expect(verifySignature({ payload: `${payload} `, header, secret: "whsec_x", nowSeconds: at })._tag).toBe("Failure")
    expect(
      verifySignature({ payload, header: `${header.slice(0, -1)}0`, secret: "whsec_x", nowSeconds: at })._tag
    ).toBe(header.endsWith("0") ? "Success" : "Failure")
    // Same as the official SDK.
    const sdk = Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_x", timestamp: at })
    expect(sdk).toBe(header)
  })
})
