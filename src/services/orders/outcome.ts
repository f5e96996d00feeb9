// How an order ends, inside the caller's unit of work with the order locked and still pending:
// delivered (settled 85/15 from its escrow, the transaction completed), or failed or expired (the
// escrow back to the buyer in full, the transaction failed with a failed delivery, which counts
// against the seller's SLA as any failed delivery does). The escrow is empty after either.
import { Effect } from "effect"
import { escrowAccount, walletAccount } from "../../schema/ledger/ledger.js"
import type { DeliverBody, Order } from "../../schema/orders/orders.js"
import type { EventsService } from "../events/Events.js"
import type { LedgerService } from "../ledger/Ledger.js"
import type { NegotiatedPricesService } from "../commerce/NegotiatedPrices.js"
import { noReferences, type SettlementInput, type SettlementService } from "../commerce/Settlement.js"
import type { OrderStoreService } from "./OrderStore.js"

const iso = (ms: number) => new Date(ms).toISOString()

/** The purchase an order stands for, as Settlement records it. */
export const purchaseOf = (o: Order): Omit<SettlementInput, "from" | "memo" | "delivery"> => ({
  transactionId: o.transactionId,
  source: "buy",
  buyerAgentId: o.buyerAgentId,
  offer: {
    serviceId: o.serviceId,
    serviceName: o.serviceName,
    category: o.category,
    pricingModel: o.pricingModel,
    sellerAgentId: o.sellerAgentId,
    tierId: o.tierId,
    listPriceCents: o.listPriceCents
  },
  priceCents: o.priceCents,
  references: {
    ...noReferences,
    negotiationId: o.negotiationId,
    approvalId: o.approvalId,
    idempotencyKey: o.idempotencyKey
  },
  at: o.createdAt
})

export interface OutcomeDeps {
  readonly store: OrderStoreService
  readonly settlement: SettlementService
  readonly ledger: LedgerService
  readonly events: EventsService
  readonly negotiated: NegotiatedPricesService
}

export const makeOutcome = ({ store, settlement, ledger, events, negotiated }: OutcomeDeps) => {
  /** Delivered: the seller is paid from the escrow; the latency is the platform's measure unless the seller reports less. */
  const deliver = Effect.fnUntraced(function* (order: Order, body: DeliverBody, nowMs: number) {
    const seen = Math.max(0, nowMs - Date.parse(order.createdAt))
    const latencyMs = body.latencyMs !== undefined ? Math.min(body.latencyMs, seen) : seen
    const answeredAt = iso(nowMs)
    const output = body.output ?? null
    yield* (
      settlement
        .settle({
          ...purchaseOf(order),
          delivery: { latencyMs, output },
          from: { _tag: "escrow", holdId: order.id },
          memo: `${order.serviceId}/${order.tierId}`,
          pending: true,
          deliveredAt: answeredAt
        })
        // The escrow holds exactly the price from the order's placing: short or unbalanced is a defect.
        .pipe(Effect.catchTags({ InsufficientFunds: Effect.die, InvalidInput: Effect.die }))
    )
    const ended: Order = {
      ...order,
      status: "delivered",
      answeredAt,
      output,
      error: null,
      latencyMs,
      push: order.push === null ? null : { ...order.push, nextAttemptAt: null }
    }
    yield* store.close(ended)
    return ended
  })

  /**
   * Failed by the seller or expired: the escrow back to the buyer in full, a redeemed negotiation
   * usable again (nothing was bought with it, as when a simulated delivery fails), both sides told.
   */
  const refund = Effect.fnUntraced(function* (
    order: Order,
    status: "failed" | "expired",
    error: string,
    nowMs: number
  ) {
    const answeredAt = iso(nowMs)
    const latencyMs =
      status === "expired"
        ? Math.max(0, Date.parse(order.deadlineAt) - Date.parse(order.createdAt))
        : Math.max(0, nowMs - Date.parse(order.createdAt))
    if (order.priceCents > 0) {
      yield* ledger
        .transfer({
          kind: "escrow_release",
          reference: order.id,
          memo: `order ${order.id}: ${status}, refunded`,
          from: escrowAccount(order.id),
          to: walletAccount(order.buyerAgentId),
          amount: order.priceCents
        })
        .pipe(Effect.catchTags({ InsufficientFunds: Effect.die, InvalidInput: Effect.die }))
    }
    if (order.negotiationId !== null) yield* negotiated.release(order.negotiationId, order.transactionId)
    yield* settlement.recordFailed(
      { ...purchaseOf(order), delivery: { latencyMs, output: null }, pending: true, deliveredAt: answeredAt },
      error
    )
    const ended: Order = {
      ...order,
      status,
      answeredAt,
      output: null,
      error,
      latencyMs,
      push: order.push === null ? null : { ...order.push, nextAttemptAt: null }
    }
    yield* store.close(ended)
    const failed = {
      transactionId: order.transactionId,
      serviceId: order.serviceId,
      tierId: order.tierId,
      priceCents: order.priceCents,
      error
    }
    yield* events.emitMany([
      { agentId: order.buyerAgentId, type: "transaction.failed", data: failed },
      ...(status === "expired"
        ? [
            {
              agentId: order.sellerAgentId,
              type: "order.expired" as const,
              data: {
                orderId: order.id,
                serviceId: order.serviceId,
                tierId: order.tierId,
                priceCents: order.priceCents,
                deadlineAt: order.deadlineAt
              }
            }
          ]
        : [])
    ])
    return ended
  })

  return { deliver, refund }
}
