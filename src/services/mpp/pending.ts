// A paid call whose seller has not answered within the call's wait: what the caller is told, the same
// whichever way it paid (MPP credits or x402).
import { PendingInvokeResult, type Receipt } from "../../schema/mpp/challenge.js"
import type { Order } from "../../schema/orders/orders.js"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"

/** What the buyer is told to follow while the seller has not answered. */
export const followOf = (transactionId: string) => ({
  transaction: `${COMMERCE_PREFIX}/transactions/${transactionId}`,
  order: `${COMMERCE_PREFIX}/orders/${transactionId}`,
  events: ["transaction.completed", "transaction.failed"]
})

/** The 202 of a paid call held in escrow until its seller answers. */
export const pendingResult = (order: Order, receipt: Receipt) =>
  PendingInvokeResult.make({
    status: "pending",
    serviceId: order.serviceId,
    tierId: order.tierId,
    transactionId: order.id,
    heldCents: order.priceCents as PendingInvokeResult["heldCents"],
    deadlineAt: order.deadlineAt,
    output: null,
    receipt,
    follow: followOf(order.id)
  })
