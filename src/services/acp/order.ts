// An ACP checkout session's order as the 2026-04-17 document's Order (docs/acp.md "What maps to
// what"): the purchases the completion made, a line each, or the approvals they wait for. The ACP domain's own view of
// its order, rendered here so the order events worker (AcpOrderEvents.ts) and the HTTP answers
// (src/http/acp/wire.ts) send the same bytes.
import type { Transaction } from "../../schema/commerce/transactions.js"
import type { AcpLineView, AcpSessionView } from "./AcpCheckout.js"

/** A total line of the spec's `totals`. */
export const money = (type: string, display_text: string, amount: number, description?: string) => ({
  type,
  display_text,
  amount,
  ...(description !== undefined ? { description } : {})
})

/** An `info` message of the spec's `messages`. */
export const info = (content: string) => ({ type: "info", content_type: "plain", content })

/** One line of the order: its purchase's state, or its approval's while the owner decides. */
const lineStateOf = (l: AcpLineView): LineState => {
  if (l.transaction !== null) return { ...orderState(l.transaction), transaction: l.transaction }
  // No purchase (yet): waiting for the owner, or the owner's approval ended without one.
  const ended = l.approval !== null && l.approval.status !== "pending"
  return {
    status: ended ? "canceled" : "manual_review",
    fulfillment: ended ? "canceled" : "pending",
    delivered: false,
    refunded: false,
    description: ended
      ? `The owner's approval ended ${l.approval?.status}: nothing was charged.`
      : "Waiting for the agent's owner to approve the purchase.",
    transaction: null
  }
}

/**
 * The order's status from its lines': in review while any waits for the owner, processing while any
 * is held for its seller, canceled when none was bought or all were given back, completed otherwise.
 */
const orderStatusOf = (states: ReadonlyArray<LineState>) => {
  if (states.some((s) => s.status === "manual_review")) return "manual_review"
  if (states.some((s) => s.status === "processing")) return "processing"
  if (states.every((s) => s.status === "canceled")) return "canceled"
  return "completed"
}

/**
 * The order a completed session made: its purchases, as the spec's Order. Its id is the first line's
 * purchase (its transaction; its approval while the owner decides), so a one-item order is its
 * transaction; each line's transaction is named by its fulfilment.
 */
export const orderOf = (view: AcpSessionView, baseUrl: string) => {
  const { session, lines } = view
  const states = lines.map(lineStateOf)
  const status = orderStatusOf(states)
  const [first] = lines
  const id = first.transaction?.id ?? first.approval?.id ?? session.approvalId ?? session.id
  const permalink_url =
    lines.length > 1
      ? `${baseUrl}/api/v1/agent/commerce/transactions`
      : first.transaction !== null
        ? `${baseUrl}/api/v1/agent/commerce/transactions/${first.transaction.id}`
        : `${baseUrl}/api/v1/agent/commerce/approvals`
  const charged = states.flatMap((s) => (s.transaction !== null ? [s.transaction] : []))
  const refunded = states.flatMap((s) => (s.transaction !== null && s.refunded ? [s.transaction] : []))
  const sum = (txs: ReadonlyArray<Transaction>) => txs.reduce((total, tx) => total + tx.priceCents, 0)
  const totals = [money("total", "Total", sum(charged))]
  if (refunded.length > 0) totals.push(money("amount_refunded", "Refunded", sum(refunded)))
  return {
    type: "order",
    checkout_session_id: session.id,
    id,
    order_number: id,
    permalink_url,
    status,
    line_items: lines.map(({ line }, i) => {
      const s = states[i]
      const removed = s.status === "canceled"
      const unitPrice = s.transaction?.priceCents ?? line.unitAmountCents
      return {
        id: line.id,
        title: `${s.transaction?.serviceName ?? line.serviceName} — ${line.tierName}`,
        product_id: line.serviceId,
        quantity: { ordered: 1, current: removed ? 0 : 1, fulfilled: s.delivered ? 1 : 0 },
        unit_price: unitPrice,
        subtotal: unitPrice,
        status: removed ? "removed" : s.delivered ? "fulfilled" : "processing"
      }
    }),
    fulfillments: lines.flatMap(({ line }, i) => {
      const { transaction: tx, fulfillment, description } = states[i]
      return tx === null
        ? []
        : [
            {
              id: `ful_${tx.id}`,
              type: "digital",
              status: fulfillment,
              line_items: [{ id: line.id, quantity: 1 }],
              description: lines.length > 1 ? `Transaction ${tx.id}. ${description}` : description
            }
          ]
    }),
    adjustments: lines.flatMap(({ line }, i) => {
      const { transaction: tx, refunded: back } = states[i]
      return tx === null || !back
        ? []
        : [
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
    }),
    totals
  }
}

interface LineState {
  readonly status: string
  readonly fulfillment: string
  readonly delivered: boolean
  readonly refunded: boolean
  readonly description: string
  readonly transaction: Transaction | null
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
