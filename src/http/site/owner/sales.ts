// The seller's side of the owner's agent page: what the agent earned as seller, the orders waiting
// for it (oldest first, the first page; the rest on their own page) and the ones that ended lately.
// Read through SellerBoard (a fixed number of bounded reads); the parts marked data-live are redrawn
// by the page's script when the live stamp changes. Its routes (all pending orders, the JSON):
// salesRoutes.ts.
import type { SellerBoard as Board, SellerOrder } from "../../../schema/orders/sellerBoard.js"
import { type Html, html } from "../templates/html.js"
import { agentPath, usd, when } from "./format.js"

/** What happened to an order, and to the seller's share, in the owner's words. */
const outcome = (o: SellerOrder): string => {
  switch (o.status) {
    case "pending":
      return `Waiting — ${usd(o.sellerCents)} held for the agent`
    case "delivered":
      return `Delivered — ${usd(o.sellerCents)} earned`
    case "failed":
      return "Failed — nothing earned, the buyer was refunded"
    default:
      return "Expired — nothing earned, the buyer was refunded"
  }
}
const BADGE: Readonly<Record<string, string>> = {
  pending: "pending",
  delivered: "completed",
  failed: "failed",
  expired: "failed"
}

const orderItem = (o: SellerOrder): Html => html`<li class="item order" data-order-id="${o.id}">
<p class="item-head"><strong>${o.serviceName}</strong> <span class="hint">${o.tierId}</span> <span class="amount">${usd(o.priceCents)}</span></p>
<p class="item-meta"><span class="badge badge-${BADGE[o.status] ?? "pending"}">${outcome(o)}</span></p>
<p class="item-meta">Bought by ${o.buyerName ?? o.buyerAgentId} · placed ${when(o.createdAt)} · ${o.status === "pending" ? html`answer by ${when(o.deadlineAt)}` : html`ended ${when(o.answeredAt)}`}</p>
${o.push === null ? "" : html`<p class="item-meta">Push: ${o.push.acceptedAt ? html`accepted ${when(o.push.acceptedAt)}` : `${o.push.attempts} attempt${o.push.attempts === 1 ? "" : "s"}`}${o.push.lastError ? ` · last error: ${o.push.lastError}` : ""}</p>`}
${o.status !== "pending" && o.error ? html`<p class="item-meta">${o.error}</p>` : ""}
</li>`

export const orderList = (orders: ReadonlyArray<SellerOrder>, empty: string, id: string): Html =>
  orders.length === 0
    ? html`<p class="hint">${empty}</p>`
    : html`<ul class="items" id="${id}">${orders.map(orderItem)}</ul>`

/** The section of the agent page. */
export const salesSection = (b: Board): Html => {
  const e = b.earnings
  const path = agentPath(b.agentId)
  const shown = b.pending.orders.length
  return html`<section id="sales" aria-labelledby="sales-title">
<h2 id="sales-title">Orders and earnings <span id="sales-count" class="badge" data-live>${b.pending.count}</span></h2>
<p class="hint">What the agent sells: its share of each sale after the platform's 15 % fee. A buyer's money waits in escrow until the agent delivers; a failed or late order, or a refund, earns nothing.</p>
<dl class="figures" id="sales-figures" data-live>
<div><dt>Earned today</dt><dd id="earned-today">${usd(e.todayCents)}</dd></div>
<div><dt>Earned this month</dt><dd>${usd(e.thisMonthCents)}</dd></div>
<div><dt>Earned in all</dt><dd>${usd(e.allTimeCents)}</dd></div>
<div><dt>Held in pending orders</dt><dd id="earned-held">${usd(e.heldCents)}</dd></div>
</dl>
<h3>Waiting for the agent</h3>
<div id="sales-pending" data-live>${orderList(b.pending.orders, "No orders waiting.", "sales-pending-body")}
${b.pending.count > shown ? html`<p>The oldest ${shown} of ${b.pending.count}. <a href="${path}/orders">All pending orders →</a></p>` : ""}</div>
<h3>Ended lately</h3>
<div id="sales-ended" data-live>${orderList(b.ended, "No order has ended yet.", "sales-ended-body")}</div>
</section>`
}
