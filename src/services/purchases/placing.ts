// A new order and its pending transaction, as a buy or a saga's deliver step places them (Orders.place).
import type { TransactionRecord } from "../../schema/commerce/transactions.js"
import type { Order } from "../../schema/orders/orders.js"
import type { PlaceOrder } from "./Orders.js"

const iso = (ms: number) => new Date(ms).toISOString()

/** The order of a purchase: pending until its deadline; a push order's first attempt is due at once. */
export const newOrder = (x: PlaceOrder): Order => {
  const p = x.purchase
  return {
    id: p.transactionId,
    transactionId: p.transactionId,
    serviceId: p.offer.serviceId,
    serviceName: p.offer.serviceName,
    category: p.offer.category,
    pricingModel: p.offer.pricingModel,
    tierId: p.offer.tierId,
    listPriceCents: p.offer.listPriceCents,
    priceCents: p.priceCents,
    sellerAgentId: p.offer.sellerAgentId,
    buyerAgentId: p.buyerAgentId,
    input: x.input ?? null,
    mode: x.mode,
    status: "pending",
    createdAt: p.at,
    deadlineAt: iso(Date.parse(p.at) + x.deadlineMs),
    answeredAt: null,
    output: null,
    error: null,
    latencyMs: null,
    negotiationId: p.references.negotiationId,
    approvalId: p.references.approvalId,
    idempotencyKey: p.references.idempotencyKey,
    push: x.mode === "push" ? { attempts: 0, nextAttemptAt: p.at, acceptedAt: null, lastError: null } : null,
    origin:
      x.origin ??
      (p.source === "paid_call" && p.references.challengeId !== null
        ? { kind: "paid_call", challengeId: p.references.challengeId }
        : { kind: "buy" })
  }
}

/** The order's transaction while it waits: nothing settled, no delivery yet. */
export const pendingTransaction = (order: Order): TransactionRecord => ({
  id: order.id,
  buyerAgentId: order.buyerAgentId,
  sellerAgentId: order.sellerAgentId,
  serviceId: order.serviceId,
  serviceName: order.serviceName,
  category: order.category,
  pricingModel: order.pricingModel,
  tierId: order.tierId,
  listPriceCents: order.listPriceCents,
  priceCents: order.priceCents,
  sellerCents: 0,
  feeCents: 0,
  negotiationId: order.negotiationId,
  approvalId: order.approvalId,
  idempotencyKey: order.idempotencyKey,
  status: "pending",
  ledgerEntryId: null,
  createdAt: order.createdAt,
  refundedAt: null
})
