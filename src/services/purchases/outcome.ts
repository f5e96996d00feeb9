// How an order ends, inside the caller's unit of work with the order locked and still pending:
// delivered (settled 85/15 from its escrow, the transaction completed), or failed or expired (the
// escrow back to the buyer in full, the transaction failed with a failed delivery, which counts
// against the seller's SLA as any failed delivery does). The escrow is empty after either.
// A saga's order holds no money: its answer is only recorded, and its saga (told through the
// OrderOwners port in the same unit of work) settles from, or gives back, the saga's own escrow.
import { Effect } from "effect"
import { escrowAccount, walletAccount } from "../../schema/ledger/ledger.js"
import { type DeliverBody, type Order, sagaOf } from "../../schema/orders/orders.js"
import type { NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type { OrderOwnersService } from "./OrderOwners.js"
import type { EventsService } from "../events/Events.js"
import type { LedgerService } from "../ledger/Ledger.js"
import type { NegotiatedPricesService } from "./NegotiatedPrices.js"
import { noReferences, type SettlementInput, type SettlementService } from "./Settlement.js"
import type { OrderStoreService } from "./OrderStore.js"

const iso = (ms: number) => new Date(ms).toISOString()

/** The purchase an order stands for, as Settlement records it. */
export const purchaseOf = (o: Order): Omit<SettlementInput, "from" | "memo" | "delivery"> => ({
  transactionId: o.transactionId,
  source: o.origin?.kind === "paid_call" ? "paid_call" : "buy",
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
    idempotencyKey: o.idempotencyKey,
    challengeId: o.origin?.kind === "paid_call" ? o.origin.challengeId : null
  },
  at: o.createdAt
})

export interface OutcomeDeps {
  readonly store: OrderStoreService
  readonly settlement: SettlementService
  readonly ledger: LedgerService
  readonly events: EventsService
  readonly negotiated: NegotiatedPricesService
  readonly owners: OrderOwnersService
}

/** What a unit of work did to a locked order: ended it (changed), or found it closed to this answer. */
export interface Touched {
  readonly order: Order
  readonly changed: boolean
  readonly closed: boolean
}

export const makeOutcome = ({ store, settlement, ledger, events, negotiated, owners }: OutcomeDeps) => {
  /**
   * Runs `f` on the order locked in the caller's unit of work. When `f` ended the order, its owner (a
   * saga that placed it) is told in the same unit of work, after the order's lock: every unit of
   * work that takes both rows takes the order's first (a saga's step never locks its order).
   */
  const locked = Effect.fnUntraced(function* (
    orderId: string,
    f: (order: Order | undefined) => Effect.Effect<Touched, NotFound | StorageUnavailable>
  ) {
    const touched = yield* f(yield* store.getForUpdate(orderId))
    if (touched.changed) yield* owners.ended(touched.order)
    return touched
  })

  /**
   * Delivered: the seller is paid from the escrow. The latency is the platform's measure (placing to
   * answer), what the buyer waited; the seller's own report is kept beside it and moves no figure.
   */
  const deliver = Effect.fnUntraced(function* (order: Order, body: DeliverBody, nowMs: number) {
    const latencyMs = Math.max(0, nowMs - Date.parse(order.createdAt))
    const answeredAt = iso(nowMs)
    const output = body.output ?? null
    // A saga's order: the saga settles from its own escrow once it sees the delivery.
    if (sagaOf(order) === null) {
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
    }
    const ended: Order = {
      ...order,
      status: "delivered",
      answeredAt,
      output,
      error: null,
      latencyMs,
      reportedLatencyMs: body.latencyMs ?? null,
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
    // A saga's order: the saga gives its escrow back, the negotiation and records the failed purchase.
    const own = sagaOf(order) === null
    if (own && order.priceCents > 0) {
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
    if (own && order.negotiationId !== null) yield* negotiated.release(order.negotiationId, order.transactionId)
    if (own) {
      yield* settlement.recordFailed(
        { ...purchaseOf(order), delivery: { latencyMs, output: null }, pending: true, deliveredAt: answeredAt },
        error
      )
    }
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
      ...(own ? [{ agentId: order.buyerAgentId, type: "transaction.failed" as const, data: failed }] : []),
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

  return { deliver, refund, locked }
}
