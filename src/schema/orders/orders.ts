// Orders: a purchase of a service its seller fulfils itself (pull or push), waiting for the seller.
// The order's id is the purchase's transaction id; the buyer's money waits in the order's escrow
// until the seller delivers (85/15 settlement) or fails or misses the deadline (refund in full).
import { Schema } from "effect"
import { Cents, cents, Timestamp } from "../platform/common.js"
import { PricingModel, Text } from "../commerce/common.js"

export const OrderStatus = Schema.Literals(["pending", "delivered", "failed", "expired", "cancelled"])
export type OrderStatus = typeof OrderStatus.Type

export const OrderMode = Schema.Literals(["pull", "push"])
export type OrderMode = typeof OrderMode.Type

/** Where a push order's delivery attempts stand (null for pull orders). */
export const PushState = Schema.Struct({
  attempts: Schema.Int,
  /** When the next attempt is due (or the current attempt's lease ends); null once accepted. */
  nextAttemptAt: Schema.NullOr(Timestamp),
  /** When the seller answered 202 (it delivers later through the API). */
  acceptedAt: Schema.NullOr(Timestamp),
  lastError: Schema.NullOr(Schema.String)
})
export type PushState = typeof PushState.Type

/**
 * Who placed the order and so holds its money: a buy (the order's own escrow, settled or refunded
 * by the seller's answer) or a saga's deliver step (the money stays in the saga's escrow; the
 * answer is only recorded, and the saga settles or compensates).
 */
export const OrderOrigin = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("buy") }),
  Schema.Struct({ kind: Schema.Literal("saga"), sagaId: Schema.String }),
  /** A paid call (HTTP 402): its own escrow like a buy's; the challenge that paid it is named. */
  Schema.Struct({ kind: Schema.Literal("paid_call"), challengeId: Schema.String })
])
export type OrderOrigin = typeof OrderOrigin.Type

export const Order = Schema.Struct({
  id: Schema.String,
  transactionId: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tierId: Schema.String,
  listPriceCents: Schema.Int,
  priceCents: Schema.Int,
  sellerAgentId: Schema.String,
  buyerAgentId: Schema.String,
  input: Schema.Unknown,
  mode: OrderMode,
  status: OrderStatus,
  createdAt: Timestamp,
  deadlineAt: Timestamp,
  answeredAt: Schema.NullOr(Timestamp),
  output: Schema.Unknown,
  error: Schema.NullOr(Schema.String),
  latencyMs: Schema.NullOr(Schema.Int),
  /** The handling time the seller reported with its delivery, for its records; never in the platform's figures. */
  reportedLatencyMs: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  negotiationId: Schema.NullOr(Schema.String),
  approvalId: Schema.NullOr(Schema.String),
  idempotencyKey: Schema.NullOr(Schema.String),
  push: Schema.NullOr(PushState),
  /** Absent on orders built without one (a buy's): read it through sagaOf. */
  origin: Schema.optionalKey(OrderOrigin),
  /**
   * When the order reached its seller: a pull seller's first listing of it, the start of the push
   * attempt that got the answer. Its latency is measured from here; null: not yet (an order that
   * expires never having reached its seller is not the seller's).
   */
  offeredAt: Schema.optionalKey(Schema.NullOr(Timestamp)),
  /** The tier's promise at the moment of purchase (the order's deadline and its judgement follow it). */
  promisedP95LatencyMs: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  promisedUptimePct: Schema.optionalKey(Schema.NullOr(Schema.Number))
})
export type Order = typeof Order.Type

/** The error a buyer's cancelled order ends with (its transaction's failed delivery says it). */
export const ORDER_CANCELLED = "cancelled by the buyer before the seller answered"

/** The saga that placed the order (it holds the money), or null for a buy's order. */
export const sagaOf = (o: Pick<Order, "origin">): string | null => (o.origin?.kind === "saga" ? o.origin.sagaId : null)

/**
 * An order as its seller or buyer sees it: no idempotency key, no push internals. Only its seller
 * sees why a push failed (`lastPushError`: the seller's own endpoint's address or answer); the buyer
 * never learns where the seller's endpoint is or what it said.
 */
export const OrderView = Schema.Struct({
  id: Schema.String,
  transactionId: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  tierId: Schema.String,
  priceCents: Cents,
  currency: Schema.Literal("USD"),
  sellerAgentId: Schema.String,
  buyerAgentId: Schema.String,
  input: Schema.Unknown,
  mode: OrderMode,
  status: OrderStatus,
  createdAt: Timestamp,
  deadlineAt: Timestamp,
  /** When the order reached its seller (its first listing, or the push attempt that got the answer); null: not yet. */
  offeredAt: Schema.NullOr(Timestamp),
  answeredAt: Schema.NullOr(Timestamp),
  output: Schema.Unknown,
  error: Schema.NullOr(Schema.String),
  /** The platform's measure, from when the order reached the seller to its answer: what the SLA report and disputes read. */
  latencyMs: Schema.NullOr(Schema.Int),
  /** The handling time the seller reported with its delivery (null when it reported none): informational only. */
  reportedLatencyMs: Schema.NullOr(Schema.Int),
  /** For push orders: when the seller accepted it for later delivery. */
  acceptedAt: Schema.NullOr(Timestamp),
  /** For push orders, to their seller only: the last attempt's error (null for the buyer, and when none). */
  lastPushError: Schema.NullOr(Schema.String)
})
export type OrderView = typeof OrderView.Type

/** The order as `viewer` (its seller or its buyer) sees it. */
export const toOrderView =
  (viewer: string) =>
  (o: Order): OrderView => ({
    id: o.id,
    transactionId: o.transactionId,
    serviceId: o.serviceId,
    serviceName: o.serviceName,
    tierId: o.tierId,
    priceCents: cents(o.priceCents),
    currency: "USD",
    sellerAgentId: o.sellerAgentId,
    buyerAgentId: o.buyerAgentId,
    input: o.input,
    mode: o.mode,
    status: o.status,
    createdAt: o.createdAt,
    deadlineAt: o.deadlineAt,
    offeredAt: o.offeredAt ?? null,
    answeredAt: o.answeredAt,
    output: o.output,
    error: o.error,
    latencyMs: o.latencyMs,
    reportedLatencyMs: o.reportedLatencyMs ?? null,
    acceptedAt: o.push?.acceptedAt ?? null,
    lastPushError: viewer === o.sellerAgentId ? (o.push?.lastError ?? null) : null
  })

/**
 * The seller's delivery: its output, and optionally the time it reports spending. The report is kept on
 * the order for the seller's records; the SLA report and reputation read the platform's own measure, so a
 * seller cannot improve its figures by what it says.
 */
export const DeliverBody = Schema.Struct({
  output: Schema.Unknown,
  latencyMs: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 3_600_000 }))))
})
export type DeliverBody = typeof DeliverBody.Type

/** The seller's failure: why, in words the buyer reads. */
export const FailBody = Schema.Struct({
  error: Text(2000)
})
export type FailBody = typeof FailBody.Type

export const OrdersPage = Schema.Struct({ orders: Schema.Array(OrderView), nextCursor: Schema.NullOr(Schema.String) })
export type OrdersPage = typeof OrdersPage.Type

/** 409: an answer to an order that has already ended otherwise (or expired). */
export class OrderClosed extends Schema.TaggedError<OrderClosed>()(
  "OrderClosed",
  { message: Schema.String, orderId: Schema.String, status: OrderStatus },
  { httpApiStatus: 409, description: "The order has already ended otherwise; its outcome stands." }
) {}

export const ORDER_DEADLINE_MIN_MS = 10_000
export const ORDER_DEADLINE_MAX_MS = 3_600_000

/** How long a seller has to answer: twice the tier's p95 latency, within 10 s and 1 h. */
export const orderDeadlineMs = (tier: { readonly sla: { readonly p95LatencyMs: number } }): number =>
  Math.min(ORDER_DEADLINE_MAX_MS, Math.max(ORDER_DEADLINE_MIN_MS, 2 * tier.sla.p95LatencyMs))

/** The longest a list call may wait for the next order. */
export const ORDER_LIST_MAX_WAIT_MS = 25_000
