// An ACP checkout session's order as the 2026-04-17 document's Order (docs/acp.md "What maps to
// what"): the purchase the completion made, or the approval it waits for. The ACP domain's own view of
// its order, rendered here so the order events worker (AcpOrderEvents.ts) and the HTTP answers
// (src/http/acp/wire.ts) send the same bytes.
import type { Transaction } from "../../schema/commerce/transactions.js"
import type { AcpSessionView } from "./AcpCheckout.js"

/** A total line of the spec's `totals`. */
export const money = (type: string, display_text: string, amount: number, description?: string) => ({
  type,
  display_text,
  amount,
  ...(description !== undefined ? { description } : {})
})

/** An `info` message of the spec's `messages`. */
export const info = (content: string) => ({ type: "info", content_type: "plain", content })

/** The order a completed session made: its purchase, as the spec's Order. */
export const orderOf = (view: AcpSessionView, baseUrl: string) => {
  const { session, transaction: tx, approval } = view
  const [line] = session.lines
  const common = { type: "order", checkout_session_id: session.id }
  if (tx === null) {
    // Waiting for the owner: the order is the approval, in review.
    const id = approval?.id ?? session.approvalId ?? session.id
    return {
      ...common,
      id,
      order_number: id,
      permalink_url: `${baseUrl}/api/v1/agent/commerce/approvals`,
      status: approval !== null && approval.status !== "pending" ? "canceled" : "manual_review"
    }
  }
  const state = orderState(tx)
  const totals = [money("total", "Total", tx.priceCents)]
  if (state.refunded) totals.push(money("amount_refunded", "Refunded", tx.priceCents))
  return {
    ...common,
    id: tx.id,
    order_number: tx.id,
    permalink_url: `${baseUrl}/api/v1/agent/commerce/transactions/${tx.id}`,
    status: state.status,
    line_items: [
      {
        id: line.id,
        title: `${tx.serviceName} — ${line.tierName}`,
        product_id: tx.serviceId,
        quantity: { ordered: 1, current: state.status === "canceled" ? 0 : 1, fulfilled: state.delivered ? 1 : 0 },
        unit_price: tx.priceCents,
        subtotal: tx.priceCents,
        status: state.status === "canceled" ? "removed" : state.delivered ? "fulfilled" : "processing"
      }
    ],
    fulfillments: [
      {
        id: `ful_${tx.id}`,
        type: "digital",
        status: state.fulfillment,
        line_items: [{ id: line.id, quantity: 1 }],
        description: state.description
      }
    ],
    adjustments: state.refunded
      ? [
          {
            id: `adj_${tx.id}`,
            type: "refund",
            occurred_at: tx.refundedAt ?? tx.delivery?.deliveredAt ?? tx.createdAt,
            status: "completed",
            line_items: [{ id: line.id, quantity: 1 }],
            amount: tx.priceCents,
            currency: tx.currency,
            description: "the price held for the seller, returned in full"
          }
        ]
      : [],
    totals
  }
}

/** The purchase's state as the order's: status, fulfilment and whether money went back. */
const orderState = (tx: Transaction) => {
  if (tx.status === "pending")
    return {
      status: "processing",
      fulfillment: "processing",
      delivered: false,
      refunded: false,
      description:
        "Held in escrow while the seller works; paid to the seller (85 %) on delivery, refunded in full otherwise."
    }
  if (tx.status === "failed") {
    // An agent seller's failure returns the held price; a simulated seller's failure charged nothing.
    const refunded = tx.ledgerEntryId !== null
    return {
      status: "canceled",
      fulfillment: "failed",
      delivered: false,
      refunded,
      description: tx.delivery?.error ?? "the seller did not deliver"
    }
  }
  const refunded = tx.refundedAt !== null
  return {
    status: "completed",
    fulfillment: "delivered",
    delivered: true,
    refunded,
    description: "Delivered: the seller's output is on the transaction."
  }
}
