// Outgoing webhooks, the payload schema of every event type (docs/events.md renders the same
// catalogue as tables). Extra fields may appear; the listed ones are the contract.
import { Schema } from "effect"
import { EventType } from "../events/events.js"

const str = (description: string) => Schema.String.annotate({ description })
const int = (description: string) => Schema.Int.annotate({ description })
const opt = <S extends Schema.Top>(s: S) => Schema.optional(s)
const nullable = <S extends Schema.Top>(s: S) => Schema.NullOr(s)

/** The same payload from every path that sells (src/services/commerce/Settlement.ts writes it). */
export const TransactionCompletedData = Schema.Struct({
  transactionId: str("the transaction"),
  serviceId: str("the service bought"),
  tierId: str("the tier bought"),
  role: Schema.Literals(["buyer", "seller"]).annotate({ description: "the receiving agent's side of the purchase" }),
  priceCents: int("price paid by the buyer, in cents"),
  sellerCents: int("share credited to the seller (the price less the fee)"),
  feeCents: int("platform fee (15 %, to the nearest cent, halves up)"),
  source: Schema.Literals(["buy", "paid_call", "saga"]).annotate({
    description: "how it was bought: POST /buy, a paid call (402 protocol), or a purchase saga"
  }),
  ledgerEntryId: str("the balanced ledger entry that moved the money"),
  negotiationId: nullable(str("the negotiation whose price was used")),
  approvalId: nullable(str("the owner's approval it executed")),
  sagaId: nullable(str("the purchase saga it settled")),
  challengeId: nullable(str("the 402 challenge it paid"))
})

export const TransactionRefundedData = Schema.Struct({
  transactionId: str("the refunded transaction"),
  amountCents: int("amount returned to the buyer, in cents"),
  sellerCents: opt(int("the seller's share taken back, in cents")),
  feeCents: opt(int("the platform fee given back, in cents")),
  disputeId: opt(nullable(str("the dispute that caused the refund"))),
  reason: opt(nullable(str("why")))
})

/** An order ended without a delivery (src/services/orders/outcome.ts): the escrow went back to the buyer. */
export const TransactionFailedData = Schema.Struct({
  transactionId: str("the transaction (= the order id)"),
  serviceId: str("the service bought"),
  tierId: str("the tier bought"),
  priceCents: int("the price held and given back, in cents"),
  error: str("the seller's reason, or that the deadline passed")
})

export const OrderCreatedData = Schema.Struct({
  orderId: str("the order (= the buyer's transaction id)"),
  serviceId: str("the service bought"),
  tierId: str("the tier bought"),
  input: Schema.Unknown.annotate({ description: "the buyer's input" }),
  priceCents: int("the price held in escrow, in cents"),
  buyerAgentId: str("the buying agent"),
  deadlineAt: str("when the order expires unanswered")
})

export const OrderExpiredData = Schema.Struct({
  orderId: str("the order"),
  serviceId: str("the service"),
  tierId: str("the tier"),
  priceCents: int("the price given back to the buyer, in cents"),
  deadlineAt: str("the deadline that passed")
})

export const NegotiationUpdatedData = Schema.Struct({
  negotiationId: str("the negotiation"),
  serviceId: str("the service"),
  tierId: opt(str("the tier")),
  status: str("the negotiation's state after the change"),
  round: opt(int("the round number")),
  by: opt(str("who acted: buyer or seller")),
  action: opt(str("propose, counter, accept, reject, expire")),
  priceCents: opt(nullable(int("price of this move, in cents"))),
  automatic: opt(Schema.Boolean.annotate({ description: "the seller's automatic answer" })),
  agreedPriceCents: opt(nullable(int("the agreed price once accepted")))
})

export const SagaStepChangedData = Schema.Struct({
  sagaId: str("the saga"),
  step: str("the step's name"),
  status: str("the step's state after the change"),
  previousStatus: opt(nullable(str("the step's state before"))),
  sagaStatus: opt(str("the saga's state after the change")),
  error: opt(nullable(str("why the step failed")))
})

export const SagaCompletedData = Schema.Struct({
  sagaId: str("the saga"),
  transactionId: opt(nullable(str("the transaction it settled"))),
  amountCents: int("amount settled, in cents"),
  serviceId: opt(str("the service bought")),
  tierId: opt(str("the tier bought")),
  sellerCents: opt(int("share credited to the seller")),
  feeCents: opt(int("platform fee"))
})

export const SagaCompensatedData = Schema.Struct({
  sagaId: str("the saga"),
  failedStep: str("the step that failed"),
  reason: opt(nullable(str("why"))),
  refundedCents: opt(int("escrow released back to the buyer, in cents"))
})

export const DisputeUpdatedData = Schema.Struct({
  disputeId: str("the dispute"),
  transactionId: str("the disputed transaction"),
  status: str("open, under_review, resolved_refunded or resolved_rejected"),
  previousStatus: opt(nullable(str("the state before"))),
  refundCents: opt(nullable(int("refunded amount when resolved_refunded")))
})

export const BuildStatusChangedData = Schema.Struct({
  projectId: str("the project"),
  status: str("queued, analyzing, generating, building, deploying, live or failed"),
  previousStatus: nullable(str("the state before (null for queued)")),
  progressPercent: int("0–100"),
  failureReason: nullable(str("why the build failed"))
})

export const PaymentSucceededData = Schema.Struct({
  checkoutSessionId: str("the processor checkout session"),
  purpose: str("plan, plan_renewal, recharge, knowledge or acquisition"),
  amountCents: opt(int("amount charged, in cents")),
  currency: opt(str("ISO currency code")),
  planId: opt(nullable(str("the plan paid for"))),
  credits: opt(int("credits added to the wallet")),
  journalEntryId: opt(str("the ledger entry that credited the wallet")),
  acquisitionId: opt(nullable(str("the acquisition paid for"))),
  projectId: opt(nullable(str("the acquired project"))),
  invoiceId: opt(str("the renewal invoice"))
})

export const WalletLowBalanceData = Schema.Struct({
  balanceCents: int("balance after the movement"),
  thresholdCents: int("the configured low-balance threshold"),
  autoRecharge: opt(Schema.Boolean.annotate({ description: "whether an automatic recharge follows" }))
})

export const WalletRechargedData = Schema.Struct({
  amountCents: int("credits added, in cents"),
  balanceCents: int("balance after the recharge"),
  checkoutSessionId: opt(str("the recharge checkout (paid recharges)")),
  rechargeId: opt(str("the recharge request (automatic recharges)")),
  automatic: opt(Schema.Boolean.annotate({ description: "an automatic recharge" })),
  journalEntryId: opt(str("the ledger entry"))
})

export const ApprovalRequestedData = Schema.Struct({
  approvalId: str("the pending approval"),
  serviceId: str("the service to buy"),
  tierId: opt(str("the tier")),
  priceCents: int("the purchase price, in cents"),
  reason: opt(str("why approval is needed (autonomy level, threshold)")),
  expiresAt: opt(str("when the approval request lapses"))
})

export const ReviewCreatedData = Schema.Struct({
  reviewId: str("the review"),
  transactionId: str("the reviewed transaction"),
  rating: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 5 }))).annotate({
    description: "1–5 stars"
  }),
  serviceId: opt(str("the reviewed service"))
})

export const WebhookDisabledData = Schema.Struct({
  endpointId: str("the disabled endpoint"),
  url: str("its URL"),
  reason: str("why it was disabled"),
  failingSince: str("first failed attempt of the failing period"),
  disabledAt: str("when")
})

export const WebhookTestData = Schema.Struct({
  endpointId: str("the endpoint pinged"),
  message: str("a fixed text")
})

export interface PayloadEntry {
  readonly description: string
  readonly schema: Schema.Top
}

/** Every event type with what it means and the schema of its `data`. */
export const eventCatalogue: { readonly [K in EventType]: PayloadEntry } = {
  "transaction.completed": {
    description: "A purchase settled (sent to buyer and seller).",
    schema: TransactionCompletedData
  },
  "transaction.refunded": { description: "A transaction was refunded.", schema: TransactionRefundedData },
  "transaction.failed": {
    description: "An order ended without a delivery: failed by its seller or expired; the buyer was refunded in full.",
    schema: TransactionFailedData
  },
  "order.created": {
    description: "An order for one of your services waits for your answer (sent to the seller).",
    schema: OrderCreatedData
  },
  "order.expired": {
    description: "An order's deadline passed unanswered; the buyer was refunded (sent to the seller).",
    schema: OrderExpiredData
  },
  "negotiation.updated": {
    description: "A negotiation moved (proposal, counter, accept, reject, expiry).",
    schema: NegotiationUpdatedData
  },
  "saga.step_changed": { description: "A saga step changed state.", schema: SagaStepChangedData },
  "saga.completed": { description: "A saga finished every step.", schema: SagaCompletedData },
  "saga.compensated": {
    description: "A saga failed and was compensated (escrow released, nothing charged).",
    schema: SagaCompensatedData
  },
  "dispute.updated": { description: "A dispute opened or changed state.", schema: DisputeUpdatedData },
  "build.status_changed": { description: "A project build moved to another state.", schema: BuildStatusChangedData },
  "payment.succeeded": {
    description: "A payment-processor checkout or renewal was paid and fulfilled.",
    schema: PaymentSucceededData
  },
  "wallet.low_balance": { description: "The wallet balance fell below its threshold.", schema: WalletLowBalanceData },
  "wallet.recharged": { description: "Credits were added by a recharge.", schema: WalletRechargedData },
  "approval.requested": {
    description: "A purchase waits for the account owner's approval.",
    schema: ApprovalRequestedData
  },
  "review.created": { description: "A review was left on a transaction.", schema: ReviewCreatedData },
  "webhook.disabled": {
    description:
      "The platform disabled the endpoint after sustained failure " +
      "(recorded for the owner; never delivered to the endpoint it disables).",
    schema: WebhookDisabledData
  },
  "webhook.test": {
    description: "A test ping requested with POST /webhook/test (delivered whatever the filter).",
    schema: WebhookTestData
  }
}

/** GET /webhook/events: the catalogue with a JSON Schema per payload. */
export const EventCatalogueResponse = Schema.Struct({
  envelope: Schema.Unknown,
  events: Schema.Array(Schema.Struct({ type: EventType, description: Schema.String, dataSchema: Schema.Unknown }))
})
