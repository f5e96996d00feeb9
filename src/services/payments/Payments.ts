// Payments: hosted checkouts through the PaymentProcessor port (fake or Stripe) — plans, knowledge
// purchases (spec §4.5), acquisitions of catalog projects, wallet recharges — and the processor's
// signed events that fulfil them. Opening a checkout: the processor session (outside any unit of
// work, with an idempotency key derived from the request's), then our pending record in one unit
// of work. What each event does to its checkout is CheckoutFulfilment's (CheckoutFulfilment.ts).
// Ports beside it: PaymentProcessor, PaymentsStore, FakeProcessorStore, FakeCheckout; pure parts in
// checkout.ts.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { Conflict, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { Plan } from "../../schema/marketplace/marketplace.js"
import {
  Acquisition,
  AcquisitionCheckout,
  type CheckoutRecord,
  type InvalidSignature,
  type ProcessorSession,
  type ProcessorUnavailable,
  PurchaseStatus,
  RechargeCheckout,
  SubscriptionCheckout,
  type WebhookAck
} from "../../schema/payments/payments.js"
import { cents, decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import { KnowledgeContent } from "../../schema/knowledge/knowledge.js"
import type { Caller } from "../keys/Caller.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Keys } from "../keys/Keys.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { Ledger } from "../ledger/Ledger.js"
import { Marketplace } from "../marketplace/Marketplace.js"
import {
  checkoutMetadata,
  type CheckoutIdempotency,
  DEFAULT_ACQUISITIONS_LIMIT,
  type NewCheckout,
  pendingCheckout,
  planDescription,
  processorIdempotencyKey,
  publicCheckoutView,
  type PublicCheckoutView,
  rechargeAmountProblem
} from "./checkout.js"
import { CheckoutFulfilment } from "./CheckoutFulfilment.js"
import { PaymentProcessor } from "./PaymentProcessor.js"
import { PaymentsStore } from "./PaymentsStore.js"

type Opening = ProcessorUnavailable | StorageUnavailable

/**
 * The checkout-opening methods take the request's idempotency (key and scope) as their last
 * argument; without it each call opens a fresh processor session.
 */
export interface PaymentsService {
  readonly processorKind: "fake" | "stripe"
  /** subscription.createCheckout: a monthly subscription checkout for a plan (spec §2.3, §4.2). */
  readonly createSubscriptionCheckout: (
    caller: Caller,
    input: { readonly planId: string; readonly agentId?: string },
    idempotency?: CheckoutIdempotency
  ) => Effect.Effect<SubscriptionCheckout, InvalidInput | NotFound | Opening>
  /** publicApi.purchaseAccess: a one-off checkout for a knowledge product (spec §4.5). */
  readonly purchaseAccess: (
    input: {
      readonly serviceId: number
      readonly customerEmail?: string | undefined
      readonly customerName?: string | undefined
    },
    idempotency?: CheckoutIdempotency
  ) => Effect.Effect<{ checkoutUrl: string; sessionId: string }, InvalidInput | NotFound | Opening>
  /** publicApi.purchaseStatus: where a knowledge purchase stands (the session id is the secret). */
  readonly purchaseStatus: (sessionId: string) => Effect.Effect<PurchaseStatus, NotFound | StorageUnavailable>
  /**
   * The content of a paid knowledge purchase, to its buyer only: the access id must be the one
   * granted for this checkout session. Both come only to whoever started the checkout (the
   * session id from purchaseAccess, the access id from purchaseStatus once paid), so the pair
   * proves the buyer; any mismatch, an unpaid or unknown purchase is the same 404 (no oracle of
   * which half was wrong).
   */
  readonly accessContent: (
    accessId: string,
    sessionId: string
  ) => Effect.Effect<KnowledgeContent, NotFound | StorageUnavailable>
  /**
   * Starts the purchase of a catalog project (POST /api/v1/agent/acquire): a checkout and a
   * pending acquisition, which becomes paid when the processor reports the payment.
   */
  readonly startAcquisition: (
    input: { readonly caller: Caller; readonly projectId: string; readonly priceCents: number; readonly title: string },
    idempotency?: CheckoutIdempotency
  ) => Effect.Effect<AcquisitionCheckout, Conflict | InvalidInput | Opening>
  /** The agent's acquisitions, newest first, a keyset page: `nextCursor` names the page's last one. */
  readonly listAcquisitions: (
    agentId: string,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<{ data: Array<Acquisition>; nextCursor: string | null }, InvalidInput | StorageUnavailable>
  /** A wallet recharge through the processor: the credits arrive when the payment does. */
  readonly startRecharge: (
    input: { readonly agentId: string; readonly amountCents: number },
    idempotency?: CheckoutIdempotency
  ) => Effect.Effect<RechargeCheckout, InvalidInput | NotFound | Opening>
  /** The account's current plan (null without a paid plan). */
  readonly planOf: (accountId: string) => Effect.Effect<Plan | null, NotFound | StorageUnavailable>
  /**
   * The processor webhook (POST /api/payments/webhook, and the fake processor's in-process
   * delivery): verify the signature over the raw body, record the event id once, fulfil — all
   * in one unit of work, so a replay or a crash never grants twice or loses a grant.
   */
  readonly handleWebhook: (
    rawBody: string,
    signatureHeader: string | undefined
  ) => Effect.Effect<WebhookAck, InvalidInput | InvalidSignature | StorageUnavailable>
  /** A checkout's public view for the return pages (no account or agent ids). */
  readonly checkoutView: (sessionId: string) => Effect.Effect<PublicCheckoutView, NotFound | StorageUnavailable>
  readonly getCheckout: (sessionId: string) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
  readonly processorSession: (
    sessionId: string
  ) => Effect.Effect<ProcessorSession, NotFound | ProcessorUnavailable | StorageUnavailable>
}

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** A call without a request key opens a fresh processor session each time. */
const NO_IDEMPOTENCY: CheckoutIdempotency = { key: undefined, scope: "" }

const make = Effect.gen(function* () {
  const store = yield* PaymentsStore
  const processor = yield* PaymentProcessor
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const config = yield* AppConfig
  const keys = yield* Keys
  const knowledge = yield* Knowledge
  const marketplace = yield* Marketplace
  const { fulfil } = yield* CheckoutFulfilment
  const successUrl = `${config.baseUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`
  const cancelUrl = `${config.baseUrl}/checkout/cancelled?session_id={CHECKOUT_SESSION_ID}`

  /**
   * Opens a processor session and records it. The processor call happens outside any unit of
   * work; a retry with the same Idempotency-Key gets the same processor session back. `extra` is
   * written with the record in its unit of work, when this call inserted it.
   */
  const openCheckout = Effect.fnUntraced(function* (
    input: NewCheckout,
    idempotency: CheckoutIdempotency = NO_IDEMPOTENCY,
    extra?: (checkout: CheckoutRecord) => Effect.Effect<void, StorageUnavailable>
  ) {
    const idempotencyKey = processorIdempotencyKey(input, idempotency) ?? (yield* ids.uuid)
    const session = yield* processor.createCheckoutSession({
      mode: input.mode,
      amountCents: input.amountCents,
      currency: input.currency,
      description: input.description,
      successUrl,
      cancelUrl,
      metadata: checkoutMetadata(input),
      customerEmail: input.customerEmail,
      idempotencyKey
    })
    const record = pendingCheckout(input, session, new Date(yield* Clock.currentTimeMillis).toISOString())
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
        const message = "agentId: a key credits only its own agent's wallet"
        return yield* Effect.fail(new InvalidInput({ message, field: "agentId" }))
      }
      return caller.agentId
    }
    if (agentId === undefined) {
      const message = "agentId: a dashboard session must name the agent whose wallet receives the plan's credits"
      return yield* Effect.fail(new InvalidInput({ message, field: "agentId" }))
    }
    return (yield* keys.ownedAgent(caller.accountId, agentId)).id
  })

  const createSubscriptionCheckout = Effect.fnUntraced(function* (
    caller: Caller,
    input: { readonly planId: string; readonly agentId?: string },
    idempotency?: CheckoutIdempotency
  ) {
    const agentId = yield* creditedAgent(caller, input.agentId)
    const plan = yield* marketplace.getPlan(input.planId)
    const checkout = yield* openCheckout(
      {
        purpose: "plan",
        mode: "subscription",
        amountCents: plan.priceCents,
        currency: plan.currency,
        description: planDescription(plan),
        accountId: caller.accountId,
        agentId,
        planId: plan.id,
        credits: plan.credits,
        scope: `${caller.accountId}|${caller.keyId ?? "session"}`
      },
      idempotency
    )
    return SubscriptionCheckout.make({
      checkoutUrl: checkout.checkoutUrl,
      sessionId: checkout.sessionId,
      planId: plan.id,
      amountCents: cents(plan.priceCents),
      credits: plan.credits,
      agentId
    })
  }, traced("Payments.createSubscriptionCheckout"))

  const purchaseAccess = Effect.fnUntraced(function* (
    input: {
      readonly serviceId: number
      readonly customerEmail?: string | undefined
      readonly customerName?: string | undefined
    },
    idempotency?: CheckoutIdempotency
  ) {
    const product = yield* knowledge.getProduct(input.serviceId).pipe(
      Effect.catchTag("NotFound", (e) =>
        Effect.fail(
          new NotFound({
            resource: e.resource,
            id: e.id,
            message: `serviceId: knowledge product ${input.serviceId} not found`
          })
        )
      )
    )
    if (!product.isActive) {
      const message = `serviceId: knowledge product ${product.id} is not available for purchase`
      return yield* Effect.fail(new InvalidInput({ message, field: "serviceId" }))
    }
    const email = input.customerEmail?.toLowerCase()
    const checkout = yield* openCheckout(
      {
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
      },
      idempotency
    )
    return { checkoutUrl: checkout.checkoutUrl, sessionId: checkout.sessionId }
  }, traced("Payments.purchaseAccess"))

  const purchaseStatus = Effect.fnUntraced(function* (sessionId: string) {
    const checkout = yield* store.getCheckout(sessionId)
    if (!checkout || checkout.purpose !== "knowledge" || checkout.productId === null) {
      return yield* Effect.fail(
        new NotFound({ message: `purchase ${sessionId} not found`, resource: "purchase", id: sessionId })
      )
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

  const accessContent = Effect.fnUntraced(function* (accessId: string, sessionId: string) {
    const notFound = new NotFound({
      message: `access ${accessId} not found for this checkout session`,
      resource: "knowledgeAccess",
      id: accessId
    })
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

  const startAcquisition = Effect.fnUntraced(function* (
    input: {
      readonly caller: Caller
      readonly projectId: string
      readonly priceCents: number
      readonly title: string
    },
    idempotency?: CheckoutIdempotency
  ) {
    const agentId = input.caller.agentId
    if (agentId === undefined) {
      const message = "agentId: projects are acquired by an agent (use its API key)"
      return yield* Effect.fail(new InvalidInput({ message, field: "agentId" }))
    }
    if (!Number.isSafeInteger(input.priceCents) || input.priceCents < 1) {
      const message = `priceCents: must be a positive integer, got ${input.priceCents}`
      return yield* Effect.fail(new InvalidInput({ message, field: "priceCents" }))
    }
    const owned = yield* store.findPaidAcquisition(agentId, input.projectId)
    if (owned) {
      const message = `project ${input.projectId} is already in this agent's portfolio (acquisition ${owned.id})`
      return yield* Effect.fail(new Conflict({ message, state: "paid" }))
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
      idempotency,
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

  const listAcquisitions = Effect.fnUntraced(function* (
    agentId: string,
    options: { readonly limit?: number; readonly cursor?: string } = {}
  ) {
    const limit = options.limit ?? DEFAULT_ACQUISITIONS_LIMIT
    let beforeId: string | undefined
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor) as { q?: unknown } | undefined
      if (!c || typeof c.q !== "string") {
        return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
      }
      beforeId = c.q
    }
    const rows = yield* store.listAcquisitions(agentId, { limit: limit + 1, beforeId })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return { data: page, nextCursor: rows.length > limit && last ? encodeCursor({ q: last.id }) : null }
  })

  const startRecharge = Effect.fnUntraced(function* (
    input: { readonly agentId: string; readonly amountCents: number },
    idempotency?: CheckoutIdempotency
  ) {
    const refused = rechargeAmountProblem(input.amountCents)
    if (refused) return yield* Effect.fail(refused)
    const agent = yield* keys.getAgent(input.agentId)
    const checkout = yield* openCheckout(
      {
        purpose: "recharge",
        mode: "payment",
        amountCents: input.amountCents,
        currency: "usd",
        description: `Wallet recharge: ${input.amountCents} credits`,
        accountId: agent.accountId,
        agentId: agent.id,
        credits: input.amountCents,
        scope: `recharge|${agent.id}|${input.amountCents}`
      },
      idempotency
    )
    return RechargeCheckout.make({
      checkoutUrl: checkout.checkoutUrl,
      sessionId: checkout.sessionId,
      agentId: agent.id,
      amountCents: cents(input.amountCents)
    })
  }, traced("Payments.startRecharge"))

  const planOf = Effect.fnUntraced(function* (accountId: string) {
    const account = yield* keys.getAccount(accountId)
    if (account.planId === null) return null as Plan | null
    return yield* marketplace.getPlan(account.planId).pipe(Effect.orElseSucceed(() => null as Plan | null))
  })

  const handleWebhook = Effect.fnUntraced(function* (rawBody: string, signatureHeader: string | undefined) {
    const event = yield* processor.verifyEvent(rawBody, signatureHeader)
    const receivedAt = yield* nowIso
    return yield* atomically(
      Effect.gen(function* () {
        const fresh = yield* store.recordEvent({ id: event.id, type: event.type, receivedAt })
        if (!fresh) {
          const outcome = "duplicate: already processed"
          return { received: true, eventId: event.id, duplicate: true, outcome } satisfies WebhookAck
        }
        // Funding comes from an external account, which may go negative: never InsufficientFunds.
        const outcome = yield* fulfil(event).pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.die(e)))
        yield* store.setEventOutcome(event.id, outcome)
        return { received: true, eventId: event.id, duplicate: false, outcome } satisfies WebhookAck
      })
    )
  }, traced("Payments.handleWebhook"))

  const checkoutView = (sessionId: string) =>
    Effect.flatMap(store.getCheckout(sessionId), (c) =>
      c
        ? Effect.succeed(publicCheckoutView(c))
        : Effect.fail(new NotFound({ message: `checkout ${sessionId} not found`, resource: "checkout", id: sessionId }))
    )

  const service: PaymentsService = {
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
  }
  return service
})

export class Payments extends Context.Service<Payments, PaymentsService>()("agent-commerce/Payments") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Payments, make).pipe(
    Layer.provide([
      CheckoutFulfilment.layer,
      Events.layer,
      Keys.layer,
      Knowledge.layer,
      Ledger.layer,
      Marketplace.layer
    ])
  )
}
