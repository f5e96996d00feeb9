// Payments: hosted checkouts (plans, knowledge products, acquisitions, recharges), their
// fulfilment records, and the processor's signed events (spec §1, §2.3, §4.2, §4.3, §4.5).
import { Schema } from "effect"
import { Cents, Email } from "../platform/common.js"

/** What a checkout pays for; fulfilment is chosen by it. */
export const CheckoutPurpose = Schema.Literals(["plan", "knowledge", "acquisition", "recharge"])
export type CheckoutPurpose = typeof CheckoutPurpose.Type

/** pending → paid | expired | failed; the three outcomes are final. */
export const CheckoutStatus = Schema.Literals(["pending", "paid", "expired", "failed"])
export type CheckoutStatus = typeof CheckoutStatus.Type

export const CheckoutMode = Schema.Literals(["payment", "subscription"])
export type CheckoutMode = typeof CheckoutMode.Type

/** Our record of one processor checkout session (keyed by the processor's session id). */
export interface CheckoutRecord {
  readonly sessionId: string
  readonly purpose: CheckoutPurpose
  readonly mode: CheckoutMode
  readonly status: CheckoutStatus
  readonly amountCents: number
  readonly currency: string
  readonly description: string
  readonly checkoutUrl: string
  /** Account and agent the checkout is for (null for anonymous knowledge purchases). */
  readonly accountId: string | null
  readonly agentId: string | null
  readonly planId: string | null
  readonly productId: number | null
  readonly acquisitionId: string | null
  /** Credits the wallet receives on payment (plans, recharges); 0 otherwise. */
  readonly credits: number
  readonly customerEmail: string | null
  readonly customerName: string | null
  /** The processor's subscription id, once a subscription checkout is paid. */
  readonly subscriptionId: string | null
  readonly failureReason: string | null
  readonly createdAt: string
  readonly completedAt: string | null
}

export class CheckoutStarted extends Schema.Class<CheckoutStarted>("CheckoutStarted")({
  /** Address of the hosted checkout page (the fake page, or Stripe's). */
  checkoutUrl: Schema.String,
  sessionId: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------
// Knowledge purchases (spec §4.5)
// ---------------------------------------------------------------------------------------------

export const CustomerName = Schema.String.pipe(
  Schema.check(Schema.isTrimmed({ message: "must not have surrounding spaces" })),
  Schema.check(Schema.isMinCodePoints(1, { message: "must not be empty" })),
  Schema.check(Schema.isMaxCodePoints(120, { message: "must have at most 120 characters" }))
)

/** Spec §4.5: serviceId is required; the e-mail and name are optional (the processor's page asks for what is missing). */
export const PurchaseAccessInput = Schema.Struct({
  serviceId: Schema.Int.pipe(
    Schema.check(Schema.isGreaterThan(0, { message: "must be a positive integer product id" }))
  ),
  customerEmail: Schema.optional(Email),
  customerName: Schema.optional(CustomerName)
})
export type PurchaseAccessInput = typeof PurchaseAccessInput.Type

export const CheckoutSessionId = Schema.String.pipe(
  Schema.check(Schema.isMinCodePoints(3)),
  Schema.check(Schema.isMaxCodePoints(255)),
  Schema.check(Schema.isPattern(/^[A-Za-z0-9_-]+$/u, { message: "must be a checkout session id" }))
)

export const PurchaseStatusInput = Schema.Struct({ sessionId: CheckoutSessionId })

/** An access grant: the buyer of a knowledge product, once paid. */
export class KnowledgeAccess extends Schema.Class<KnowledgeAccess>("KnowledgeAccess")({
  id: Schema.String,
  productId: Schema.Int,
  customerEmail: Schema.String,
  customerName: Schema.String,
  checkoutSessionId: Schema.String,
  grantedAt: Schema.String
}) {}

export class PurchaseStatus extends Schema.Class<PurchaseStatus>("PurchaseStatus")({
  sessionId: Schema.String,
  status: CheckoutStatus,
  productId: Schema.Int,
  productName: Schema.String,
  amountCents: Cents,
  currency: Schema.String,
  grantedAt: Schema.optional(Schema.String),
  accessId: Schema.optional(Schema.String),
  failureReason: Schema.optional(Schema.String)
}) {}

// ---------------------------------------------------------------------------------------------
// Subscriptions (spec §2.3, §4.2)
// ---------------------------------------------------------------------------------------------

export const CreateSubscriptionCheckoutInput = Schema.Struct({
  planId: Schema.Literals(["starter", "pro", "scale"]),
  /** Dashboard sessions name the agent whose wallet receives the credits; a key uses its own agent. */
  agentId: Schema.optional(
    Schema.String.pipe(Schema.check(Schema.isPattern(/^agt_[A-Za-z0-9_-]+$/u, { message: "must be an agent id" })))
  )
})

export class SubscriptionCheckout extends Schema.Class<SubscriptionCheckout>("SubscriptionCheckout")({
  checkoutUrl: Schema.String,
  sessionId: Schema.String,
  planId: Schema.String,
  amountCents: Cents,
  credits: Schema.Int,
  agentId: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------
// Acquisitions (spec §4.3 /acquire, /portfolio)
// ---------------------------------------------------------------------------------------------

export const AcquisitionStatus = Schema.Literals(CheckoutStatus.literals)
export type AcquisitionStatus = CheckoutStatus

export class Acquisition extends Schema.Class<Acquisition>("Acquisition")({
  id: Schema.String,
  agentId: Schema.String,
  accountId: Schema.String,
  projectId: Schema.String,
  title: Schema.String,
  priceCents: Cents,
  currency: Schema.String,
  status: AcquisitionStatus,
  checkoutSessionId: Schema.String,
  checkoutUrl: Schema.String,
  createdAt: Schema.String,
  paidAt: Schema.NullOr(Schema.String)
}) {}

export class AcquisitionCheckout extends Schema.Class<AcquisitionCheckout>("AcquisitionCheckout")({
  acquisitionId: Schema.String,
  projectId: Schema.String,
  priceCents: Cents,
  checkoutUrl: Schema.String,
  sessionId: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------
// Wallet recharges
// ---------------------------------------------------------------------------------------------

/** Smallest and largest recharge through the processor, in cents (docs/payments.md). */
export const RECHARGE_MIN_CENTS = 100
export const RECHARGE_MAX_CENTS = 1_000_000

export class RechargeCheckout extends Schema.Class<RechargeCheckout>("RechargeCheckout")({
  checkoutUrl: Schema.String,
  sessionId: Schema.String,
  agentId: Schema.String,
  amountCents: Cents
}) {}

// ---------------------------------------------------------------------------------------------
// Processor events (Stripe's event format; the fake processor emits the same)
// ---------------------------------------------------------------------------------------------

/** A checkout session as the processor describes it. */
export interface ProcessorSession {
  readonly id: string
  readonly mode: CheckoutMode
  /** open → complete | expired */
  readonly status: "open" | "complete" | "expired"
  readonly paymentStatus: "paid" | "unpaid" | "no_payment_required"
  readonly amountTotal: number | null
  readonly currency: string | null
  readonly metadata: Readonly<Record<string, string>>
  readonly url: string | null
  readonly subscriptionId: string | null
  readonly customerEmail: string | null
}

/** A verified, parsed processor event: what fulfilment reads. */
export interface ProcessorEvent {
  readonly id: string
  readonly type: string
  /** Unix seconds. */
  readonly created: number
  readonly object:
    | { readonly kind: "checkout.session"; readonly session: ProcessorSession }
    | {
        readonly kind: "invoice"
        readonly invoiceId: string
        readonly subscriptionId: string | null
        readonly billingReason: string | null
        readonly amountPaid: number
      }
    | { readonly kind: "subscription"; readonly subscriptionId: string }
    | { readonly kind: "other"; readonly object: string }
}

/** A Stripe object: the fields read here, and any others the processor sends (kept, never refused). */
const open = <S extends Schema.Struct<Schema.Struct.Fields>>(struct: S) =>
  Schema.StructWithRest(struct, [Schema.Record(Schema.String, Schema.Unknown)])

/**
 * The raw event envelope, decoded (as JSON: a null `object` is an absent one) after the signature is
 * verified. Open: Stripe's events carry more (`livemode`, `api_version`, `pending_webhooks`,
 * `request`, `data.previous_attributes`), and the document says so.
 */
export const StripeEventEnvelope = open(
  Schema.Struct({
    id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(255))),
    object: Schema.optional(Schema.Literal("event")),
    type: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(255))),
    created: Schema.Finite,
    data: open(Schema.Struct({ object: Schema.Record(Schema.String, Schema.Unknown) }))
  })
)

export const WebhookAck = Schema.Struct({
  received: Schema.Literal(true),
  eventId: Schema.String,
  /** True when this event id was seen before: acknowledged and ignored. */
  duplicate: Schema.Boolean,
  /** What the event did: fulfilled, expired, failed, ignored. */
  outcome: Schema.String
})
export type WebhookAck = typeof WebhookAck.Type

/** 400 — the Stripe-Signature header is missing, malformed, stale or does not match the body. */
export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()(
  "InvalidSignature",
  { message: Schema.String },
  { httpApiStatus: 400, description: "The Stripe-Signature header is missing, stale, or does not match the raw body." }
) {}

/** 502 — the payment processor did not answer, or refused the request. */
export class ProcessorUnavailable extends Schema.TaggedError<ProcessorUnavailable>()(
  "ProcessorUnavailable",
  { message: Schema.String },
  { httpApiStatus: 502, description: "The payment processor did not answer or refused the request; retry later." }
) {}

/** Test cards on the hosted page: number → the decline code it produces (absent: it pays). */
export const FAKE_TEST_CARDS: ReadonlyArray<{
  readonly number: string
  readonly label: string
  readonly failure?: string
}> = [
  { number: "4242424242424242", label: "4242 4242 4242 4242 — succeeds" },
  { number: "4000000000000002", label: "4000 0000 0000 0002 — card_declined", failure: "card_declined" },
  { number: "4000000000009995", label: "4000 0000 0000 9995 — insufficient_funds", failure: "insufficient_funds" },
  { number: "4000000000000069", label: "4000 0000 0000 0069 — expired_card", failure: "expired_card" }
]

/** 402 — a delegated payment token (an ACP Shared Payment Token) was declined by the processor. */
export class CardDeclined extends Schema.TaggedError<CardDeclined>()(
  "CardDeclined",
  { message: Schema.String },
  { httpApiStatus: 402, description: "The delegated card payment was declined; nothing was charged." }
) {}
