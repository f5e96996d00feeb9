// Payments: hosted checkouts through the PaymentProcessor port (fake or Stripe) and their
// fulfilment from the processor's signed events — plans, knowledge access, acquisitions, recharges.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { AppConfig } from "../platform/AppConfig.js"
import { Conflict, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { EXTERNAL_PAYMENTS, walletAccount } from "../../schema/ledger/ledger.js"
import type { Plan } from "../../schema/marketplace/marketplace.js"
import {
  Acquisition,
  AcquisitionCheckout,
  type AcquisitionStatus,
  type CheckoutMode,
  type CheckoutPurpose,
  type CheckoutRecord,
  type CheckoutStatus,
  type InvalidSignature,
  KnowledgeAccess,
  type ProcessorEvent,
  type ProcessorSession,
  type ProcessorUnavailable,
  PurchaseStatus,
  RECHARGE_MAX_CENTS,
  RECHARGE_MIN_CENTS,
  RechargeCheckout,
  SubscriptionCheckout,
  type WebhookAck
} from "../../schema/payments/payments.js"
import { cents, decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import { KnowledgeContent } from "../../schema/knowledge/knowledge.js"
import type { Caller } from "../keys/Caller.js"
import { atomically, Ids } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../idempotency/Idempotency.js"
import { Keys } from "../keys/Keys.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { Ledger } from "../ledger/Ledger.js"
import { Marketplace } from "../marketplace/Marketplace.js"

// ---------------------------------------------------------------------------------------------
// Ports
// ---------------------------------------------------------------------------------------------

export interface CheckoutSessionRequest {
  readonly mode: CheckoutMode
  readonly amountCents: number
  /** Lowercase ISO currency code. */
  readonly currency: string
  readonly description: string
  /** May contain `{CHECKOUT_SESSION_ID}`, replaced by the processor. */
  readonly successUrl: string
  readonly cancelUrl: string
  readonly metadata: Readonly<Record<string, string>>
  readonly customerEmail?: string
  /** Passed to the processor: the same key returns the same session. */
  readonly idempotencyKey: string
}

/** The payment processor: hosted checkout sessions and signed events. */
export class PaymentProcessor extends Context.Service<
  PaymentProcessor,
  {
    readonly kind: "fake" | "stripe"
    readonly createCheckoutSession: (
      request: CheckoutSessionRequest
    ) => Effect.Effect<{ readonly sessionId: string; readonly checkoutUrl: string }, ProcessorUnavailable | StorageUnavailable>
    readonly retrieveSession: (sessionId: string) => Effect.Effect<ProcessorSession, NotFound | ProcessorUnavailable | StorageUnavailable>
    /** Verifies `Stripe-Signature` over the exact raw body, then parses the event. */
    readonly verifyEvent: (rawBody: string, signatureHeader: string | undefined) => Effect.Effect<ProcessorEvent, InvalidSignature | InvalidInput>
  }
>()("PaymentProcessor") {}

/** GET /portfolio's acquisitions page when no `limit` is given (at most 100). */
export const DEFAULT_ACQUISITIONS_LIMIT = 50

/** Storage port: checkouts, processed event ids, knowledge access grants, acquisitions. */
export class PaymentsStore extends Context.Service<
  PaymentsStore,
  {
    /** Inserts unless a checkout with this session id exists (a retried request); returns the stored one. */
    readonly insertCheckout: (
      checkout: CheckoutRecord
    ) => Effect.Effect<{ readonly checkout: CheckoutRecord; readonly inserted: boolean }, StorageUnavailable>
    readonly getCheckout: (sessionId: string) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
    /** The checkout, row-locked for this unit of work. */
    readonly lockCheckout: (sessionId: string) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
    readonly updateCheckout: (checkout: CheckoutRecord) => Effect.Effect<void, StorageUnavailable>
    readonly findCheckoutBySubscription: (subscriptionId: string) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
    /** Records a processor event id; false when it was recorded before (a replay). */
    readonly recordEvent: (event: { readonly id: string; readonly type: string; readonly receivedAt: string }) => Effect.Effect<boolean, StorageUnavailable>
    readonly setEventOutcome: (id: string, outcome: string) => Effect.Effect<void, StorageUnavailable>
    readonly insertAccess: (access: KnowledgeAccess) => Effect.Effect<void, StorageUnavailable>
    readonly getAccessBySession: (sessionId: string) => Effect.Effect<KnowledgeAccess | undefined, StorageUnavailable>
    readonly insertAcquisition: (acquisition: Acquisition) => Effect.Effect<void, StorageUnavailable>
    readonly updateAcquisition: (acquisition: Acquisition) => Effect.Effect<void, StorageUnavailable>
    readonly getAcquisition: (id: string) => Effect.Effect<Acquisition | undefined, StorageUnavailable>
    /**
     * Up to `limit` of the agent's acquisitions, newest first, starting after the acquisition
     * `beforeId` (a keyset page on (agent_id, seq); an unknown `beforeId` gives an empty page).
     */
    readonly listAcquisitions: (
      agentId: string,
      page: { readonly limit: number; readonly beforeId?: string | undefined }
    ) => Effect.Effect<ReadonlyArray<Acquisition>, StorageUnavailable>
    /** The agent's paid acquisition of the project, if any (one indexed lookup, not the agent's history). */
    readonly findPaidAcquisition: (agentId: string, projectId: string) => Effect.Effect<Acquisition | undefined, StorageUnavailable>
  }
>()("PaymentsStore") {}

/** A session of the fake processor (kept in our storage, so a restart keeps it). */
export interface FakeSession {
  readonly id: string
  readonly mode: CheckoutMode
  readonly amountCents: number
  readonly currency: string
  readonly description: string
  readonly successUrl: string
  readonly cancelUrl: string
  readonly metadata: Readonly<Record<string, string>>
  readonly customerEmail: string | null
  readonly idempotencyKey: string
  readonly status: "open" | "complete" | "expired"
  readonly paymentStatus: "paid" | "unpaid"
  /** Why the test payment failed (e.g. card_declined), when it did. */
  readonly failureCode: string | null
  readonly subscriptionId: string | null
  readonly createdAt: string
  readonly expiresAt: string
  readonly completedAt: string | null
}

/** One signed event the fake processor emitted: the exact body and `Stripe-Signature` header. */
export interface FakeDelivery {
  readonly eventId: string
  readonly sessionId: string
  readonly type: string
  readonly payload: string
  readonly signatureHeader: string
  readonly createdAt: string
}

/** Storage port of the fake processor. */
export class FakeProcessorStore extends Context.Service<
  FakeProcessorStore,
  {
    /** Does nothing when a session with the same idempotency key exists (read it back by key). */
    readonly insertSession: (session: FakeSession) => Effect.Effect<void, StorageUnavailable>
    readonly getSession: (id: string) => Effect.Effect<FakeSession | undefined, StorageUnavailable>
    readonly lockSession: (id: string) => Effect.Effect<FakeSession | undefined, StorageUnavailable>
    readonly findSessionByIdempotencyKey: (key: string) => Effect.Effect<FakeSession | undefined, StorageUnavailable>
    readonly updateSession: (session: FakeSession) => Effect.Effect<void, StorageUnavailable>
    readonly insertDelivery: (delivery: FakeDelivery) => Effect.Effect<void, StorageUnavailable>
    /** Oldest first. */
    readonly listDeliveries: (sessionId: string) => Effect.Effect<ReadonlyArray<FakeDelivery>, StorageUnavailable>
  }
>()("FakeProcessorStore") {}

/** The fake processor's hosted page: what it shows, and what Pay / Cancel do. */
export interface FakeCheckoutOutcome {
  /** Where the buyer's browser goes next (the checkout's success or cancel address). */
  readonly redirectUrl: string
  /** The signed event to deliver to the webhook handler (absent when nothing changed). */
  readonly delivery: FakeDelivery | undefined
  readonly session: FakeSession
}

/** Who asks the fake processor for an owner-only action: the account behind a key or dashboard session. */
export interface FakeRequester {
  readonly accountId: string
}

export class FakeCheckout extends Context.Service<
  FakeCheckout,
  {
    /** False under PAYMENTS=stripe: the fake pages answer 404. */
    readonly enabled: boolean
    /** The session (an open session past its expiry is expired first, emitting its event). */
    readonly view: (sessionId: string) => Effect.Effect<{ readonly session: FakeSession; readonly delivery: FakeDelivery | undefined }, NotFound | StorageUnavailable>
    /** Completes the session: paid, or failed with `failure` (a test card's decline code). */
    readonly pay: (sessionId: string, options: { readonly failure?: string }) => Effect.Effect<FakeCheckoutOutcome, NotFound | Conflict | StorageUnavailable>
    readonly cancel: (sessionId: string) => Effect.Effect<FakeCheckoutOutcome, NotFound | Conflict | StorageUnavailable>
    /**
     * The next period of a paid subscription: an `invoice.paid` event (billing_reason
     * subscription_cycle). Only for the account the subscription belongs to (another account gets
     * NotFound), and once per billing period: renewal n is due `n` periods after the payment
     * (FAKE_BILLING_PERIOD_SECONDS); earlier is a Conflict naming when it is due.
     */
    readonly renew: (sessionId: string, requester: FakeRequester) => Effect.Effect<FakeCheckoutOutcome, NotFound | Conflict | StorageUnavailable>
    /**
     * The signed events sent for a session. A session opened for an account (plans, recharges,
     * acquisitions) shows them to that account only (NotFound to anyone else); an anonymous one
     * (a knowledge purchase) to whoever holds its id, as its hosted page is.
     */
    readonly deliveries: (sessionId: string, requester: FakeRequester | undefined) => Effect.Effect<ReadonlyArray<FakeDelivery>, NotFound | StorageUnavailable>
  }
>()("FakeCheckout") {}

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")
const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

interface NewCheckout {
  readonly purpose: CheckoutPurpose
  readonly mode: CheckoutMode
  readonly amountCents: number
  readonly currency: string
  readonly description: string
  readonly accountId: string | null
  readonly agentId: string | null
  readonly planId?: string
  readonly productId?: number
  readonly acquisitionId?: string
  readonly credits: number
  readonly customerEmail?: string
  readonly customerName?: string
  /** Who asks: scopes the request's Idempotency-Key before it goes to the processor. */
  readonly scope: string
}

export class Payments extends Context.Service<Payments>()("Payments", {
  make: Effect.gen(function* () {
    const store = yield* PaymentsStore
    const processor = yield* PaymentProcessor
    const ids = yield* Ids
    const config = yield* AppConfig
    const ledger = yield* Ledger
    const events = yield* Events
    const keys = yield* Keys
    const marketplace = yield* Marketplace
    const knowledge = yield* Knowledge

    const successUrl = `${config.baseUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`
    const cancelUrl = `${config.baseUrl}/checkout/cancelled?session_id={CHECKOUT_SESSION_ID}`

    /**
     * Opens a processor session and records it. The processor call happens outside any unit of
     * work; a retry with the same Idempotency-Key gets the same processor session back.
     */
    const openCheckout = Effect.fnUntraced(function* (input: NewCheckout, extra?: (checkout: CheckoutRecord) => Effect.Effect<void, StorageUnavailable>) {
      const requestKey = yield* currentIdempotencyKey
      // The caller's key scope too: two anonymous buyers using the same key get their own sessions.
      const callerScope = yield* currentIdempotencyScope
      const idempotencyKey =
        requestKey !== undefined ? `ck_${sha256(`${input.purpose}|${input.scope}|${callerScope}|${requestKey}`).slice(0, 40)}` : yield* ids.uuid
      const metadata: Record<string, string> = { purpose: input.purpose }
      if (input.accountId) metadata.account_id = input.accountId
      if (input.agentId) metadata.agent_id = input.agentId
      if (input.planId) metadata.plan_id = input.planId
      if (input.productId !== undefined) metadata.product_id = String(input.productId)
      if (input.acquisitionId) metadata.acquisition_id = input.acquisitionId
      const session = yield* processor.createCheckoutSession({
        mode: input.mode,
        amountCents: input.amountCents,
        currency: input.currency,
        description: input.description,
        successUrl,
        cancelUrl,
        metadata,
        customerEmail: input.customerEmail,
        idempotencyKey
      })
      const record: CheckoutRecord = {
        sessionId: session.sessionId,
        purpose: input.purpose,
        mode: input.mode,
        status: "pending",
        amountCents: input.amountCents,
        currency: input.currency,
        description: input.description,
        checkoutUrl: session.checkoutUrl,
        accountId: input.accountId,
        agentId: input.agentId,
        planId: input.planId ?? null,
        productId: input.productId ?? null,
        acquisitionId: input.acquisitionId ?? null,
        credits: input.credits,
        customerEmail: input.customerEmail ?? null,
        customerName: input.customerName ?? null,
        subscriptionId: null,
        failureReason: null,
        createdAt: yield* nowIso,
        completedAt: null
      }
      return yield* atomically(
        Effect.gen(function* () {
          const stored = yield* store.insertCheckout(record)
          if (extra && stored.inserted) yield* extra(stored.checkout)
          return stored.checkout
        })
      )
    })

    /** The agent a plan checkout credits: the key's own agent, or one the session's account owns. */
    const creditedAgent = Effect.fnUntraced(function* (caller: Caller, agentId: string | undefined) {
      if (caller.agentId !== undefined) {
        if (agentId !== undefined && agentId !== caller.agentId) {
          return yield* Effect.fail(new InvalidInput({ message: "agentId: a key credits only its own agent's wallet", field: "agentId" }))
        }
        return caller.agentId
      }
      if (agentId === undefined) {
        return yield* Effect.fail(
          new InvalidInput({ message: "agentId: a dashboard session must name the agent whose wallet receives the plan's credits", field: "agentId" })
        )
      }
      return (yield* keys.ownedAgent(caller.accountId, agentId)).id
    })

    /** subscription.createCheckout: a monthly subscription checkout for a plan (spec §2.3, §4.2). */
    const createSubscriptionCheckout = Effect.fnUntraced(function* (caller: Caller, input: { readonly planId: string; readonly agentId?: string }) {
      const agentId = yield* creditedAgent(caller, input.agentId)
      const plan = yield* marketplace.getPlan(input.planId)
      const checkout = yield* openCheckout({
        purpose: "plan",
        mode: "subscription",
        amountCents: plan.priceCents,
        currency: plan.currency,
        description: `${plan.name} plan: ${plan.credits} credits per month, ${plan.max_projects === "unlimited" ? "unlimited" : plan.max_projects} project${plan.max_projects === 1 ? "" : "s"}`,
        accountId: caller.accountId,
        agentId,
        planId: plan.id,
        credits: plan.credits,
        scope: `${caller.accountId}|${caller.keyId ?? "session"}`
      })
      return SubscriptionCheckout.make({
        checkoutUrl: checkout.checkoutUrl,
        sessionId: checkout.sessionId,
        planId: plan.id,
        amountCents: cents(plan.priceCents),
        credits: plan.credits,
        agentId
      })
    }, traced("Payments.createSubscriptionCheckout"))

    /** publicApi.purchaseAccess: a one-off checkout for a knowledge product (spec §4.5). */
    const purchaseAccess = Effect.fnUntraced(function* (input: { readonly serviceId: number; readonly customerEmail?: string | undefined; readonly customerName?: string | undefined }) {
      const product = yield* knowledge.getProduct(input.serviceId).pipe(
        Effect.catchTag("NotFound", (e) =>
          Effect.fail(new NotFound({ resource: e.resource, id: e.id, message: `serviceId: knowledge product ${input.serviceId} not found` }))
        )
      )
      if (!product.isActive) {
        return yield* Effect.fail(new InvalidInput({ message: `serviceId: knowledge product ${product.id} is not available for purchase`, field: "serviceId" }))
      }
      const email = input.customerEmail?.toLowerCase()
      const checkout = yield* openCheckout({
        purpose: "knowledge",
        mode: "payment",
        amountCents: product.priceInCents,
        currency: product.currency,
        description: product.name,
        accountId: null,
        agentId: null,
        productId: product.id,
        credits: 0,
        customerEmail: email,
        customerName: input.customerName,
        scope: `knowledge|${email ?? "-"}|${product.id}`
      })
      return { checkoutUrl: checkout.checkoutUrl, sessionId: checkout.sessionId }
    }, traced("Payments.purchaseAccess"))

    /** publicApi.purchaseStatus: where a knowledge purchase stands (the session id is the secret). */
    const purchaseStatus = Effect.fnUntraced(function* (sessionId: string) {
      const checkout = yield* store.getCheckout(sessionId)
      if (!checkout || checkout.purpose !== "knowledge" || checkout.productId === null) {
        return yield* Effect.fail(new NotFound({ message: `purchase ${sessionId} not found`, resource: "purchase", id: sessionId }))
      }
      const access = yield* store.getAccessBySession(sessionId)
      const product = yield* knowledge.getProduct(checkout.productId).pipe(Effect.option)
      return PurchaseStatus.make({
        sessionId,
        status: checkout.status,
        productId: checkout.productId,
        productName: product._tag === "Some" ? product.value.name : checkout.description,
        amountCents: cents(checkout.amountCents),
        currency: checkout.currency,
        ...(access ? { grantedAt: access.grantedAt, accessId: access.id } : {}),
        ...(checkout.failureReason ? { failureReason: checkout.failureReason } : {})
      })
    })

    /**
     * The content of a paid knowledge purchase, to its buyer only: the access id must be the one
     * granted for this checkout session. Both come only to whoever started the checkout (the
     * session id from purchaseAccess, the access id from purchaseStatus once paid), so the pair
     * proves the buyer; any mismatch, an unpaid or unknown purchase is the same 404 (no oracle of
     * which half was wrong).
     */
    const accessContent = Effect.fnUntraced(function* (accessId: string, sessionId: string) {
      const notFound = new NotFound({ message: `access ${accessId} not found for this checkout session`, resource: "knowledgeAccess", id: accessId })
      const access = yield* store.getAccessBySession(sessionId)
      if (!access || access.id !== accessId) return yield* Effect.fail(notFound)
      const product = yield* knowledge.getProduct(access.productId)
      const delivered = yield* knowledge.deliverableOf(product)
      return KnowledgeContent.make({
        accessId: access.id,
        productId: product.id,
        productName: product.name,
        format: delivered.format,
        language: "pt-BR",
        grantedAt: access.grantedAt,
        sections: delivered.sections,
        disclaimer: delivered.disclaimer
      })
    }, traced("Payments.accessContent"))

    /**
     * Starts the purchase of a catalog project (POST /api/v1/agent/acquire): a checkout and a
     * pending acquisition, which becomes paid when the processor reports the payment.
     */
    const startAcquisition = Effect.fnUntraced(function* (input: { readonly caller: Caller; readonly projectId: string; readonly priceCents: number; readonly title: string }) {
      const agentId = input.caller.agentId
      if (agentId === undefined) {
        return yield* Effect.fail(new InvalidInput({ message: "agentId: projects are acquired by an agent (use its API key)", field: "agentId" }))
      }
      if (!Number.isSafeInteger(input.priceCents) || input.priceCents < 1) {
        return yield* Effect.fail(new InvalidInput({ message: `priceCents: must be a positive integer, got ${input.priceCents}`, field: "priceCents" }))
      }
      const owned = yield* store.findPaidAcquisition(agentId, input.projectId)
      if (owned) {
        return yield* Effect.fail(new Conflict({ message: `project ${input.projectId} is already in this agent's portfolio (acquisition ${owned.id})`, state: "paid" }))
      }
      const acquisitionId = yield* ids.make("acq")
      const checkout = yield* openCheckout(
        {
          purpose: "acquisition",
          mode: "payment",
          amountCents: input.priceCents,
          currency: "usd",
          description: `Acquisition of project "${input.title}"`,
          accountId: input.caller.accountId,
          agentId,
          acquisitionId,
          credits: 0,
          scope: `${agentId}|${input.projectId}`
        },
        (c) =>
          store.insertAcquisition(
            Acquisition.make({
              id: acquisitionId,
              agentId,
              accountId: input.caller.accountId,
              projectId: input.projectId,
              title: input.title,
              priceCents: cents(input.priceCents),
              currency: "usd",
              status: "pending",
              checkoutSessionId: c.sessionId,
              checkoutUrl: c.checkoutUrl,
              createdAt: c.createdAt,
              paidAt: null
            })
          )
      )
      return AcquisitionCheckout.make({
        acquisitionId: checkout.acquisitionId ?? acquisitionId,
        projectId: input.projectId,
        priceCents: cents(input.priceCents),
        checkoutUrl: checkout.checkoutUrl,
        sessionId: checkout.sessionId
      })
    }, traced("Payments.startAcquisition"))

    /** The agent's acquisitions, newest first, a keyset page: `nextCursor` names the page's last one. */
    const listAcquisitions = Effect.fnUntraced(function* (agentId: string, options: { readonly limit?: number; readonly cursor?: string } = {}) {
      const limit = options.limit ?? DEFAULT_ACQUISITIONS_LIMIT
      let beforeId: string | undefined
      if (options.cursor !== undefined) {
        const c = decodeCursor(options.cursor) as { q?: unknown } | undefined
        if (!c || typeof c.q !== "string") return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
        beforeId = c.q
      }
      const rows = yield* store.listAcquisitions(agentId, { limit: limit + 1, beforeId })
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return { data: page, nextCursor: rows.length > limit && last ? encodeCursor({ q: last.id }) : null }
    })

    /** A wallet recharge through the processor: the credits arrive when the payment does. */
    const startRecharge = Effect.fnUntraced(function* (input: { readonly agentId: string; readonly amountCents: number }) {
      if (!Number.isSafeInteger(input.amountCents) || input.amountCents < RECHARGE_MIN_CENTS || input.amountCents > RECHARGE_MAX_CENTS) {
        return yield* Effect.fail(
          new InvalidInput({ message: `amountCents: a recharge is ${RECHARGE_MIN_CENTS} to ${RECHARGE_MAX_CENTS} cents, got ${input.amountCents}`, field: "amountCents" })
        )
      }
      const agent = yield* keys.getAgent(input.agentId)
      const checkout = yield* openCheckout({
        purpose: "recharge",
        mode: "payment",
        amountCents: input.amountCents,
        currency: "usd",
        description: `Wallet recharge: ${input.amountCents} credits`,
        accountId: agent.accountId,
        agentId: agent.id,
        credits: input.amountCents,
        scope: `recharge|${agent.id}|${input.amountCents}`
      })
      return RechargeCheckout.make({ checkoutUrl: checkout.checkoutUrl, sessionId: checkout.sessionId, agentId: agent.id, amountCents: cents(input.amountCents) })
    }, traced("Payments.startRecharge"))

    /** The account's current plan (null without a paid plan). */
    const planOf = Effect.fnUntraced(function* (accountId: string) {
      const account = yield* keys.getAccount(accountId)
      if (account.planId === null) return null as Plan | null
      return yield* marketplace.getPlan(account.planId).pipe(Effect.orElseSucceed(() => null as Plan | null))
    })

    // ------------------------------------------------------------------ fulfilment

    const fundWallet = (checkout: CheckoutRecord, reference: string, amount: number, memo: string) =>
      ledger.transfer({ kind: "funding", reference, memo, from: EXTERNAL_PAYMENTS, to: walletAccount(checkout.agentId!), amount })

    /** Marks the checkout paid and does what it was for. Runs inside the webhook's unit of work. */
    const complete = Effect.fnUntraced(function* (checkout: CheckoutRecord, session: ProcessorSession) {
      if (checkout.status !== "pending") return `ignored: checkout already ${checkout.status}`
      const at = yield* nowIso
      const paid: CheckoutRecord = { ...checkout, status: "paid", completedAt: at, subscriptionId: session.subscriptionId ?? checkout.subscriptionId }
      yield* store.updateCheckout(paid)
      const base = { checkoutSessionId: checkout.sessionId, purpose: checkout.purpose, amountCents: checkout.amountCents, currency: checkout.currency }
      switch (checkout.purpose) {
        case "plan": {
          yield* keys.setAccountPlan(checkout.accountId!, checkout.planId)
          const entry = yield* fundWallet(checkout, checkout.sessionId, checkout.credits, `${checkout.planId} plan credits`)
          yield* events.emit(checkout.agentId!, "payment.succeeded", { ...base, planId: checkout.planId, credits: checkout.credits, journalEntryId: entry.id })
          return `fulfilled: plan ${checkout.planId} active, ${checkout.credits} credits`
        }
        case "knowledge": {
          yield* store.insertAccess(
            KnowledgeAccess.make({
              id: yield* ids.make("acc"),
              productId: checkout.productId!,
              // Given at purchaseAccess, or collected by the processor's page.
              customerEmail: checkout.customerEmail ?? session.customerEmail ?? "",
              customerName: checkout.customerName ?? "",
              checkoutSessionId: checkout.sessionId,
              grantedAt: at
            })
          )
          return `fulfilled: access to knowledge product ${checkout.productId}`
        }
        case "acquisition": {
          const acquisition = yield* store.getAcquisition(checkout.acquisitionId!)
          if (acquisition) yield* store.updateAcquisition(Acquisition.make({ ...acquisition, status: "paid", paidAt: at }))
          yield* events.emit(checkout.agentId!, "payment.succeeded", { ...base, acquisitionId: checkout.acquisitionId, projectId: acquisition?.projectId ?? null })
          return `fulfilled: acquisition ${checkout.acquisitionId} paid`
        }
        case "recharge": {
          const entry = yield* fundWallet(checkout, checkout.sessionId, checkout.credits, "wallet recharge")
          const balanceCents = yield* ledger.balance(walletAccount(checkout.agentId!))
          yield* events.emit(checkout.agentId!, "payment.succeeded", { ...base, credits: checkout.credits, journalEntryId: entry.id })
          yield* events.emit(checkout.agentId!, "wallet.recharged", {
            checkoutSessionId: checkout.sessionId,
            amountCents: checkout.credits,
            balanceCents,
            journalEntryId: entry.id
          })
          return `fulfilled: wallet recharged with ${checkout.credits} credits`
        }
      }
    })

    /** A final non-paid outcome (expired or failed); acquisitions follow their checkout. */
    const close = Effect.fnUntraced(function* (checkout: CheckoutRecord, status: Exclude<CheckoutStatus, "pending" | "paid">, reason: string | null) {
      if (checkout.status !== "pending") return `ignored: checkout already ${checkout.status}`
      yield* store.updateCheckout({ ...checkout, status, failureReason: reason, completedAt: yield* nowIso })
      if (checkout.acquisitionId) {
        const acquisition = yield* store.getAcquisition(checkout.acquisitionId)
        if (acquisition && acquisition.status === "pending") yield* store.updateAcquisition(Acquisition.make({ ...acquisition, status }))
      }
      return status
    })

    const fulfil = Effect.fnUntraced(function* (event: ProcessorEvent) {
      const o = event.object
      if (o.kind === "checkout.session") {
        const checkout = yield* store.lockCheckout(o.session.id)
        if (!checkout) return "ignored: not a checkout of this service"
        switch (event.type) {
          case "checkout.session.completed":
            // Delayed payment methods complete unpaid; async_payment_succeeded follows.
            return o.session.paymentStatus === "unpaid" ? "pending: awaiting asynchronous payment" : yield* complete(checkout, o.session)
          case "checkout.session.async_payment_succeeded":
            return yield* complete(checkout, o.session)
          case "checkout.session.async_payment_failed":
            return yield* close(checkout, "failed", "payment_failed")
          case "checkout.session.expired":
            return yield* close(checkout, "expired", null)
          default:
            return `ignored: ${event.type}`
        }
      }
      if (o.kind === "invoice" && (event.type === "invoice.paid" || event.type === "invoice.payment_succeeded")) {
        // Subscription renewals: each later period's invoice credits the plan's credits again.
        if (o.billingReason !== "subscription_cycle" || o.subscriptionId === null) return "ignored: not a renewal"
        const checkout = yield* store.findCheckoutBySubscription(o.subscriptionId)
        if (!checkout || checkout.purpose !== "plan" || checkout.status !== "paid") return "ignored: unknown subscription"
        if ((yield* ledger.entriesByReference(o.invoiceId)).length > 0) return "ignored: renewal already credited"
        yield* keys.setAccountPlan(checkout.accountId!, checkout.planId)
        const entry = yield* fundWallet(checkout, o.invoiceId, checkout.credits, `${checkout.planId} plan renewal credits`)
        yield* events.emit(checkout.agentId!, "payment.succeeded", {
          checkoutSessionId: checkout.sessionId,
          purpose: "plan_renewal",
          invoiceId: o.invoiceId,
          planId: checkout.planId,
          credits: checkout.credits,
          journalEntryId: entry.id
        })
        return `fulfilled: renewal of ${checkout.planId}, ${checkout.credits} credits`
      }
      if (o.kind === "subscription" && event.type === "customer.subscription.deleted") {
        const checkout = yield* store.findCheckoutBySubscription(o.subscriptionId)
        if (!checkout || checkout.accountId === null) return "ignored: unknown subscription"
        const account = yield* keys.getAccount(checkout.accountId).pipe(Effect.option)
        // Only the plan this subscription pays for ends; a newer plan stays.
        if (account._tag === "Some" && account.value.planId === checkout.planId) {
          yield* keys.setAccountPlan(checkout.accountId, null)
          return `plan ${checkout.planId} ended`
        }
        return "ignored: the account has another plan"
      }
      return `ignored: ${event.type}`
    })

    /**
     * The processor webhook (POST /api/payments/webhook, and the fake processor's in-process
     * delivery): verify the signature over the raw body, record the event id once, fulfil — all
     * in one unit of work, so a replay or a crash never grants twice or loses a grant.
     */
    const handleWebhook = Effect.fnUntraced(function* (rawBody: string, signatureHeader: string | undefined) {
      const event = yield* processor.verifyEvent(rawBody, signatureHeader)
      const receivedAt = yield* nowIso
      return yield* atomically(
        Effect.gen(function* () {
          const fresh = yield* store.recordEvent({ id: event.id, type: event.type, receivedAt })
          if (!fresh) return { received: true, eventId: event.id, duplicate: true, outcome: "duplicate: already processed" } satisfies WebhookAck
          // Funding comes from an external account, which may go negative: never InsufficientFunds.
          const outcome = yield* fulfil(event).pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.die(e)))
          yield* store.setEventOutcome(event.id, outcome)
          return { received: true, eventId: event.id, duplicate: false, outcome } satisfies WebhookAck
        })
      )
    }, traced("Payments.handleWebhook"))

    /** A checkout's public view for the return pages (no account or agent ids). */
    const checkoutView = (sessionId: string) =>
      Effect.flatMap(store.getCheckout(sessionId), (c) =>
        c
          ? Effect.succeed({
              sessionId: c.sessionId,
              purpose: c.purpose,
              status: c.status,
              description: c.description,
              amountCents: c.amountCents,
              currency: c.currency,
              failureReason: c.failureReason
            })
          : Effect.fail(new NotFound({ message: `checkout ${sessionId} not found`, resource: "checkout", id: sessionId }))
      )

    return {
      processorKind: processor.kind,
      createSubscriptionCheckout,
      purchaseAccess,
      purchaseStatus,
      accessContent,
      startAcquisition,
      listAcquisitions,
      startRecharge,
      planOf,
      handleWebhook,
      checkoutView,
      getCheckout: store.getCheckout,
      processorSession: processor.retrieveSession
    } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Payments, Payments.make).pipe(Layer.provide([Events.layer, Keys.layer, Knowledge.layer, Ledger.layer, Marketplace.layer]))
}
