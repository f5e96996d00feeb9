// Outgoing webhooks: the endpoint configuration, delivery attempts, the delivery envelope and the
// payload schema of every event type (docs/events.md renders the same catalogue as tables).
import { Schema } from "effect"
import { EventType } from "../events/events.js"
import { Cursor, QueryInt } from "../platform/common.js"

// ---------------------------------------------------------------------------------------------
// Configuration

/** An event type, or "*" for every type. */
export const EventFilter = Schema.Union([EventType, Schema.Literal("*")])
export type EventFilter = typeof EventFilter.Type

export const MAX_URL_LENGTH = 2048
export const MAX_EVENT_FILTERS = 50

export const WebhookUrl = Schema.String.pipe(
  Schema.check(Schema.isMinCodePoints(1, { message: "url is required" })),
  Schema.check(Schema.isMaxCodePoints(MAX_URL_LENGTH, { message: `url must be at most ${MAX_URL_LENGTH} characters` }))
)

/** PUT /webhook: the whole configuration (omitted `events` = every type; omitted `enabled` = true). */
export const PutWebhookBody = Schema.Struct({
  url: WebhookUrl,
  events: Schema.optional(
    Schema.Array(EventFilter).pipe(
      Schema.check(Schema.isMinLength(1, { message: "events must name at least one event type, or [\"*\"]" })),
      Schema.check(Schema.isMaxLength(MAX_EVENT_FILTERS))
    )
  ),
  enabled: Schema.optional(Schema.Boolean)
})
export type PutWebhookBody = typeof PutWebhookBody.Type

/**
 * active: receives events; failing: consecutive failures, its backlog waits while single probes are
 * retried with growing delays; paused: enabled=false by its owner; disabled: turned off after
 * sustained failure (its backlog kept).
 */
export const WebhookStatus = Schema.Literals(["active", "failing", "paused", "disabled"])
export type WebhookStatus = typeof WebhookStatus.Type

/** The endpoint as its owner sees it. Never carries the secret. */
export class WebhookConfig extends Schema.Class<WebhookConfig>("WebhookConfig")({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventFilter),
  enabled: Schema.Boolean,
  status: WebhookStatus,
  /** Why the platform disabled the endpoint (status "disabled"); cleared by PUT with enabled=true. */
  disabledReason: Schema.NullOr(Schema.String),
  disabledAt: Schema.NullOr(Schema.String),
  /** First failed attempt since the last successful one (null when the last attempt succeeded). */
  failingSince: Schema.NullOr(Schema.String),
  /** After a rotation the previous secret still signs (a second v1 signature) until this time. */
  previousSecretExpiresAt: Schema.NullOr(Schema.String),
  /** Failed attempts in a row (reset by any 2xx); at FAILING_AFTER the status becomes "failing". */
  consecutiveFailures: Schema.Int,
  /** The last failed attempt's error (kept after a success, for the record) and when it happened. */
  lastError: Schema.NullOr(Schema.String),
  lastErrorAt: Schema.NullOr(Schema.String),
  /** Deliveries not yet succeeded nor given up (pending or being sent). */
  pendingCount: Schema.Int,
  /** When the oldest of them was queued, and how long ago (seconds); null when none. */
  oldestPendingAt: Schema.NullOr(Schema.String),
  oldestPendingAgeSeconds: Schema.NullOr(Schema.Int),
  /** When the next attempt is due: the next probe while failing; null when nothing waits or the endpoint is paused or disabled. */
  nextAttemptAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}) {}

export const PutWebhookResponse = Schema.Struct({
  webhook: WebhookConfig,
  created: Schema.Boolean,
  /** The signing secret (`whsec_` + base64), present only when the endpoint was created: store it now. */
  secret: Schema.optional(Schema.String)
})
export type PutWebhookResponse = typeof PutWebhookResponse.Type

export const RotateSecretResponse = Schema.Struct({
  webhook: WebhookConfig,
  /** The new signing secret, shown this once. */
  secret: Schema.String
})

export const WebhookTestResponse = Schema.Struct({
  eventId: Schema.String,
  type: Schema.Literal("webhook.test")
})

// ---------------------------------------------------------------------------------------------
// Deliveries

export const AttemptStatus = Schema.Literals(["succeeded", "failed"])
export type AttemptStatus = typeof AttemptStatus.Type

/** One attempt to deliver one event to the endpoint. */
export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  id: Schema.String,
  deliveryId: Schema.String,
  /** The event id, which is also the `webhook-id` header (stable across retries). */
  eventId: Schema.String,
  eventType: EventType,
  /** 1 for the first try; at most MAX_ATTEMPTS. */
  attempt: Schema.Int,
  status: AttemptStatus,
  /** The receiver's HTTP status (null when no response: refused address, connection error, timeout). */
  responseStatus: Schema.NullOr(Schema.Int),
  durationMs: Schema.Int,
  error: Schema.NullOr(Schema.String),
  attemptedAt: Schema.String,
  /** When the next attempt is due (null after a success or the last attempt). */
  nextRetryAt: Schema.NullOr(Schema.String)
}) {}

export const DeliveriesUrlParams = Schema.Struct({
  limit: Schema.optional(QueryInt(1, 100)),
  eventId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  /** The previous page's `nextCursor`: the page after it (older attempts). */
  cursor: Schema.optional(Cursor)
})

/** A keyset page of the delivery log; `nextCursor` is null on the last page. */
export const DeliveriesResponse = Schema.Struct({ data: Schema.Array(DeliveryAttempt), nextCursor: Schema.NullOr(Schema.String) })

/** The JSON body of every delivery (Standard Webhooks envelope plus the event id). */
export const WebhookEnvelope = Schema.Struct({
  id: Schema.String,
  type: EventType,
  timestamp: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown)
})

// ---------------------------------------------------------------------------------------------
// Event payloads (the `data` of each type). Extra fields may appear; the listed ones are the contract.

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
  source: Schema.Literals(["buy", "paid_call", "saga"]).annotate({ description: "how it was bought: POST /buy, a paid call (402 protocol), or a purchase saga" }),
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
  rating: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 5 }))).annotate({ description: "1–5 stars" }),
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
  "transaction.completed": { description: "A purchase settled (sent to buyer and seller).", schema: TransactionCompletedData },
  "transaction.refunded": { description: "A transaction was refunded.", schema: TransactionRefundedData },
  "negotiation.updated": { description: "A negotiation moved (proposal, counter, accept, reject, expiry).", schema: NegotiationUpdatedData },
  "saga.step_changed": { description: "A saga step changed state.", schema: SagaStepChangedData },
  "saga.completed": { description: "A saga finished every step.", schema: SagaCompletedData },
  "saga.compensated": { description: "A saga failed and was compensated (escrow released, nothing charged).", schema: SagaCompensatedData },
  "dispute.updated": { description: "A dispute opened or changed state.", schema: DisputeUpdatedData },
  "build.status_changed": { description: "A project build moved to another state.", schema: BuildStatusChangedData },
  "payment.succeeded": { description: "A payment-processor checkout or renewal was paid and fulfilled.", schema: PaymentSucceededData },
  "wallet.low_balance": { description: "The wallet balance fell below its threshold.", schema: WalletLowBalanceData },
  "wallet.recharged": { description: "Credits were added by a recharge.", schema: WalletRechargedData },
  "approval.requested": { description: "A purchase waits for the account owner's approval.", schema: ApprovalRequestedData },
  "review.created": { description: "A review was left on a transaction.", schema: ReviewCreatedData },
  "webhook.disabled": {
    description: "The platform disabled the endpoint after sustained failure (recorded for the owner; never delivered to the endpoint it disables).",
    schema: WebhookDisabledData
  },
  "webhook.test": { description: "A test ping requested with POST /webhook/test (delivered whatever the filter).", schema: WebhookTestData }
}

/** GET /webhook/events: the catalogue with a JSON Schema per payload. */
export const EventCatalogueResponse = Schema.Struct({
  envelope: Schema.Unknown,
  events: Schema.Array(Schema.Struct({ type: EventType, description: Schema.String, dataSchema: Schema.Unknown }))
})

// ---------------------------------------------------------------------------------------------
// Stored rows (what the WebhookStore port reads and writes)

/** The endpoint row: one per agent. `secret` leaves the store only to sign and, once, to its owner. */
export interface EndpointRecord {
  readonly id: string
  readonly agentId: string
  readonly url: string
  readonly events: ReadonlyArray<EventFilter>
  readonly enabled: boolean
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: string | null
  readonly failingSince: string | null
  readonly disabledAt: string | null
  readonly disabledReason: string | null
  /** Failed attempts in a row; reset by a 2xx. */
  readonly consecutiveFailures: number
  /** Set while the endpoint is failing: when its next single probe may be claimed (null: healthy). */
  readonly retryAt: string | null
  readonly lastError: string | null
  readonly lastErrorAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** One endpoint's open deliveries, as GET /webhook shows them (read through indexes, never the history). */
export interface BacklogSummary {
  readonly pending: number
  readonly oldestCreatedAt: string | null
  /** The earliest due time among them (a lease's end for one being sent). */
  readonly nextDueAt: string | null
}

/** pending → delivering (leased) → succeeded | pending (retry) | failed (retries exhausted) | cancelled. */
export type DeliveryStatus = "pending" | "delivering" | "succeeded" | "failed" | "cancelled"

/** One event for one endpoint. `body` is fixed at fan-out so every retry sends the same bytes. */
export interface DeliveryRecord {
  readonly id: string
  readonly endpointId: string
  readonly agentId: string
  readonly eventId: string
  readonly eventType: EventType
  readonly body: string
  readonly status: DeliveryStatus
  /** Attempts started so far (incremented when a worker claims the row). */
  readonly attempts: number
  /** pending: when the next attempt is due; delivering: when the lease expires; terminal: null. */
  readonly dueAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** A claimed row; `leaseExpired` when it was taken back from a worker that never reported. */
export interface ClaimedDelivery extends DeliveryRecord {
  readonly leaseExpired: boolean
}

export interface AttemptRecord {
  readonly id: string
  readonly deliveryId: string
  readonly agentId: string
  readonly eventId: string
  readonly eventType: EventType
  readonly attempt: number
  readonly status: AttemptStatus
  readonly responseStatus: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly attemptedAt: string
  readonly nextRetryAt: string | null
}
