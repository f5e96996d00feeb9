// A purchase's records as they are written, built in one place: the offer snapshot (the service and
// tier as they were when the purchase was made), the purchase a settlement records, its transaction
// and delivery, and the order of a purchase that waits for its seller. Pure: Settlement and Orders
// build every record they write from these, and read a stored snapshot back with `offerOf`.
import type { PricingModel } from "../../schema/commerce/common.js"
import type { DeliveryRecord, TransactionRecord } from "../../schema/commerce/transactions.js"
import type { Order, OrderMode, OrderOrigin } from "../../schema/orders/orders.js"

/** What was bought: the service and tier as they were at the time of the purchase. */
export interface OfferSnapshot {
  readonly serviceId: string
  readonly serviceName: string
  readonly category: string
  readonly pricingModel: PricingModel
  readonly sellerAgentId: string
  readonly tierId: string
  readonly listPriceCents: number
}

/** The snapshot of a service and one of its tiers, as the catalogue shows them now: the quote's. */
export const snapshotOf = (
  service: {
    readonly id: string
    readonly name: string
    readonly category: string
    readonly pricingModel: PricingModel
    readonly sellerAgentId: string
  },
  tier: { readonly id: string; readonly priceCents: number }
): OfferSnapshot => ({
  serviceId: service.id,
  serviceName: service.name,
  category: service.category,
  pricingModel: service.pricingModel,
  sellerAgentId: service.sellerAgentId,
  tierId: tier.id,
  listPriceCents: tier.priceCents
})

/** The snapshot a stored purchase (an order, a transaction) was made under. */
export const offerOf = (r: Pick<Order, keyof OfferSnapshot>): OfferSnapshot => ({
  serviceId: r.serviceId,
  serviceName: r.serviceName,
  category: r.category,
  pricingModel: r.pricingModel,
  sellerAgentId: r.sellerAgentId,
  tierId: r.tierId,
  listPriceCents: r.listPriceCents
})

/** Which way of buying made the purchase (carried in its events and kept for the history). */
export type PurchaseSource = "buy" | "paid_call" | "saga"

/** What the purchase points at; null where a way of buying has none. */
export interface PurchaseReferences {
  readonly negotiationId: string | null
  readonly approvalId: string | null
  readonly idempotencyKey: string | null
  readonly sagaId: string | null
  readonly challengeId: string | null
}

export const noReferences: PurchaseReferences = {
  negotiationId: null,
  approvalId: null,
  idempotencyKey: null,
  sagaId: null,
  challengeId: null
}

/** One purchase: who bought what, at which price, when, by which way, pointing at what. */
export interface PurchaseRecord {
  readonly transactionId: string
  readonly source: PurchaseSource
  readonly buyerAgentId: string
  readonly offer: OfferSnapshot
  readonly priceCents: number
  readonly references: PurchaseReferences
  /** ISO time of the purchase. */
  readonly at: string
}

/** The purchase an order stands for (its id is the purchase's transaction id). */
export const purchaseOfOrder = (o: Order): PurchaseRecord => ({
  transactionId: o.transactionId,
  source: o.origin?.kind ?? "buy",
  buyerAgentId: o.buyerAgentId,
  offer: offerOf(o),
  priceCents: o.priceCents,
  references: {
    negotiationId: o.negotiationId,
    approvalId: o.approvalId,
    idempotencyKey: o.idempotencyKey,
    sagaId: o.origin?.kind === "saga" ? o.origin.sagaId : null,
    challengeId: o.origin?.kind === "paid_call" ? o.origin.challengeId : null
  },
  at: o.createdAt
})

/** The transaction of a purchase, in a given state. */
export const transactionOf = (
  p: PurchaseRecord,
  state: Pick<TransactionRecord, "status" | "sellerCents" | "feeCents" | "ledgerEntryId">
): TransactionRecord => ({
  id: p.transactionId,
  buyerAgentId: p.buyerAgentId,
  sellerAgentId: p.offer.sellerAgentId,
  serviceId: p.offer.serviceId,
  serviceName: p.offer.serviceName,
  category: p.offer.category,
  pricingModel: p.offer.pricingModel,
  tierId: p.offer.tierId,
  listPriceCents: p.offer.listPriceCents,
  priceCents: p.priceCents,
  negotiationId: p.references.negotiationId,
  approvalId: p.references.approvalId,
  idempotencyKey: p.references.idempotencyKey,
  createdAt: p.at,
  refundedAt: null,
  ...state
})

/** The transaction while its order waits for the seller: nothing settled, no delivery yet. */
export const pendingTransactionOf = (p: PurchaseRecord): TransactionRecord =>
  transactionOf(p, { status: "pending", sellerCents: 0, feeCents: 0, ledgerEntryId: null })

/** The delivery record of a purchase: the output, or the error of a delivery that failed. */
export const deliveryOf = (
  p: PurchaseRecord,
  d: { readonly latencyMs: number; readonly output: unknown; readonly deliveredAt: string },
  error: string | null
): DeliveryRecord => ({
  transactionId: p.transactionId,
  serviceId: p.offer.serviceId,
  tierId: p.offer.tierId,
  success: error === null,
  latencyMs: d.latencyMs,
  output: error === null ? d.output : null,
  error,
  deliveredAt: d.deliveredAt
})

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The order of a purchase its seller fulfils: pending until its deadline; a push order's first
 * attempt is due at once. Its origin says who holds the money: the order's own escrow (a buy, a paid
 * call), or the saga that placed it.
 */
export const newOrder = (p: PurchaseRecord, input: unknown, mode: OrderMode, deadlineMs: number): Order => {
  const origin: OrderOrigin =
    p.references.sagaId !== null
      ? { kind: "saga", sagaId: p.references.sagaId }
      : p.source === "paid_call" && p.references.challengeId !== null
        ? { kind: "paid_call", challengeId: p.references.challengeId }
        : { kind: "buy" }
  return {
    id: p.transactionId,
    transactionId: p.transactionId,
    ...p.offer,
    priceCents: p.priceCents,
    buyerAgentId: p.buyerAgentId,
    input: input ?? null,
    mode,
    status: "pending",
    createdAt: p.at,
    deadlineAt: iso(Date.parse(p.at) + deadlineMs),
    answeredAt: null,
    output: null,
    error: null,
    latencyMs: null,
    negotiationId: p.references.negotiationId,
    approvalId: p.references.approvalId,
    idempotencyKey: p.references.idempotencyKey,
    push: mode === "push" ? { attempts: 0, nextAttemptAt: p.at, acceptedAt: null, lastError: null } : null,
    origin
  }
}
