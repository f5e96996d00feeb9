// Payments: hosted checkouts through the PaymentProcessor port (fake or Stripe) and their
// fulfilment from the processor's signed events — plans, knowledge access, acquisitions, recharges.
// Ports beside it: PaymentProcessor, PaymentsStore, FakeProcessorStore, FakeCheckout; pure parts
// in checkout.ts; opening a checkout in openCheckout.ts; knowledge purchases, acquisitions and
// what each processor event does in their own modules.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { InvalidInput, NotFound, type Conflict, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { Plan } from "../../schema/marketplace/marketplace.js"
import {
  type Acquisition,
  type AcquisitionCheckout,
  type CheckoutRecord,
  type InvalidSignature,
  type ProcessorSession,
  type ProcessorUnavailable,
  type PurchaseStatus,
  RechargeCheckout,
  SubscriptionCheckout,
  type WebhookAck
} from "../../schema/payments/payments.js"
import { cents } from "../../schema/platform/common.js"
import type { KnowledgeContent } from "../../schema/knowledge/knowledge.js"
import type { Caller } from "../keys/Caller.js"
import { Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Keys } from "../keys/Keys.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { Ledger } from "../ledger/Ledger.js"
import { Marketplace } from "../marketplace/Marketplace.js"
import { makeAcquisitions } from "./acquisitions.js"
import {
  type CheckoutIdempotency,
  planDescription,
  publicCheckoutView,
  type PublicCheckoutView,
  rechargeAmountProblem
} from "./checkout.js"
import { makeFulfilment } from "./fulfilment.js"
import { makeKnowledgePurchases } from "./knowledgePurchases.js"
import { makeOpenCheckout } from "./openCheckout.js"
import { PaymentProcessor } from "./PaymentProcessor.js"
import { PaymentsStore } from "./PaymentsStore.js"

type Opening = ProcessorUnavailable | StorageUnavailable

/**
 * The checkout-opening methods take the request's idempotency (key and scope) as their last
 * argument; without it they read the request's Reference (for callers not yet passing it).
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

const make = Effect.gen(function* () {
  const store = yield* PaymentsStore
  const processor = yield* PaymentProcessor
  const { atomically } = yield* Transactor
  const keys = yield* Keys
  const marketplace = yield* Marketplace
  const { fulfil } = yield* makeFulfilment
  const openCheckout = yield* makeOpenCheckout
  const { purchaseAccess, purchaseStatus, accessContent } = yield* makeKnowledgePurchases(openCheckout)
  const { startAcquisition, listAcquisitions } = yield* makeAcquisitions(openCheckout)

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
    Layer.provide([Events.layer, Keys.layer, Knowledge.layer, Ledger.layer, Marketplace.layer])
  )
}
