// Purchases, deliveries and transactions: the buy request, the stored rows and the transaction as
// buyers and sellers see it.
import { Effect, Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"
import { CURRENCY, PricingModel, Text } from "./common.js"
import { type ReviewRecord, ReviewView } from "./reviews.js"

export const BuyBody = Schema.Struct({
  serviceId: Text(100),
  tierId: Text(60),
  input: Schema.Unknown.pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
  negotiationId: Schema.optional(Text(100))
})
export type BuyBody = typeof BuyBody.Type

/** `pending`: an order waits for its seller, the price held in escrow (docs/fulfilment.md). */
export const TransactionStatus = Schema.Literals(["pending", "completed", "failed", "refunded"])
export type TransactionStatus = typeof TransactionStatus.Type

export interface TransactionRecord {
  readonly id: string
  readonly buyerAgentId: string
  readonly sellerAgentId: string
  readonly serviceId: string
  readonly serviceName: string
  readonly category: string
  readonly pricingModel: PricingModel
  readonly tierId: string
  readonly listPriceCents: number
  readonly priceCents: number
  readonly sellerCents: number
  readonly feeCents: number
  readonly negotiationId: string | null
  readonly approvalId: string | null
  readonly idempotencyKey: string | null
  readonly status: TransactionStatus
  readonly ledgerEntryId: string | null
  readonly createdAt: string
  readonly refundedAt: string | null
  /**
   * The tier's promise at the moment of purchase (its p95 latency and uptime): the delivery is judged
   * by it, whatever the seller sets later. Null only for a purchase whose tier was gone when it was
   * first kept (migration 0036).
   */
  readonly promisedP95LatencyMs: number | null
  readonly promisedUptimePct: number | null
}

export interface DeliveryRecord {
  readonly transactionId: string
  readonly serviceId: string
  readonly tierId: string
  readonly success: boolean
  readonly latencyMs: number
  readonly output: unknown
  readonly error: string | null
  readonly deliveredAt: string
  /**
   * Whether the delivery counts in its seller's record (SLA report, disputes): false for an order that
   * expired before it ever reached its seller (nothing was asked of it). Absent: true.
   */
  readonly accountable?: boolean
}

/** A transaction with its delivery, review and dispute, as the stores return it. */
export interface TransactionRow {
  readonly tx: TransactionRecord
  readonly delivery: DeliveryRecord | undefined
  readonly review: ReviewRecord | undefined
  readonly disputeId: string | null
}

export const Delivery = Schema.Struct({
  success: Schema.Boolean,
  /** Simulated latency of the seeded services (docs/commerce.md), in milliseconds. */
  latencyMs: Schema.Int,
  output: Schema.Unknown,
  error: Schema.NullOr(Schema.String),
  deliveredAt: Timestamp
})

/**
 * A transaction from its viewer's side. A struct, not a class (as CommerceService: a page of them is
 * built and encoded as plain objects); its identifier keeps the OpenAPI component's name.
 */
export const Transaction = Schema.Struct({
  id: Schema.String,
  role: Schema.Literals(["buyer", "seller"]),
  status: TransactionStatus,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tierId: Schema.String,
  currency: Schema.Literal(CURRENCY),
  listPriceCents: Cents,
  priceCents: Cents,
  sellerCents: Cents,
  feeCents: Cents,
  negotiationId: Schema.NullOr(Schema.String),
  approvalId: Schema.NullOr(Schema.String),
  ledgerEntryId: Schema.NullOr(Schema.String),
  /** The service level sold with this purchase (the tier's at the moment of purchase): the delivery is judged by it. */
  sla: Schema.NullOr(Schema.Struct({ p95LatencyMs: Schema.Int, uptimePct: Schema.Number })),
  delivery: Schema.NullOr(Delivery),
  review: Schema.NullOr(ReviewView),
  disputeId: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  refundedAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "TransactionEncoded" })
export type Transaction = typeof Transaction.Type
