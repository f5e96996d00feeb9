// The owner's pages as HTML: the agent page (wallet, approvals, spend, policy, transactions,
// reviews, disputes) and a transaction's detail, in the site's layout.
import { type Approval } from "../../../schema/commerce/approvals.js"
import { type Transaction } from "../../../schema/commerce/transactions.js"
import type { Agent } from "../../../schema/keys/keys.js"
import { PLATFORM } from "../../../services/discovery/document.js"
import { type Html, html, type Part } from "../templates/html.js"
import { layout as siteLayout } from "../templates/layout.js"
import { spendChart } from "./chart.js"
import type { AgentPageData } from "./data.js"
import { agentPath, APPROVAL_POLL_MS, dollarsField, usd, when } from "./format.js"

/** An owner page in the site's layout: root-relative links (the page stays on the host the owner signed in at). */
export const layout = (title: string, main: Part): string =>
  siteLayout({
    lang: "en",
    title,
    platformName: PLATFORM.name,
    version: PLATFORM.version,
    href: (path) => path,
    langInLinks: false,
    current: "agent-dashboard",
    referrer: "same-origin",
    noindex: true,
    wide: true,
    bodyClass: "dashboard owner",
    scripts: ["/assets/owner.js"],
    main
  })

const approvalRow = (agentId: string, a: Approval) => html`<tr data-id="${a.id}">
<td><code>${a.serviceId}</code> / ${a.tierId}</td>
<td class="nowrap">${usd(a.quotedPriceCents)}</td>
<td>${a.reason === "manual" ? "manual autonomy" : "over the approval threshold"}</td>
<td class="nowrap">${when(a.createdAt)}</td>
<td class="nowrap">${when(a.expiresAt)}</td>
<td class="actions nowrap"><form method="post" action="${agentPath(agentId)}/approvals/${encodeURIComponent(a.id)}/approve"><button type="submit" class="primary">Approve</button></form>
<form method="post" action="${agentPath(agentId)}/approvals/${encodeURIComponent(a.id)}/decline"><button type="submit" class="danger">Decline</button></form></td>
</tr>`

const txRow = (agentId: string, t: Transaction) => html`<tr>
<td class="nowrap"><a href="${agentPath(agentId)}/transactions/${encodeURIComponent(t.id)}">${t.id}</a></td>
<td>${t.serviceName} <span class="hint">(${t.tierId})</span></td>
<td>${t.role}</td>
<td><span class="badge">${t.status}</span></td>
<td class="nowrap">${usd(t.priceCents)}</td>
<td class="nowrap">${when(t.createdAt)}</td>
</tr>`

export const NOTICES: Readonly<Record<string, string>> = {
  approved: "Approved: the purchase ran and is in the transactions below.",
  declined: "Declined: nothing was charged.",
  policy: "Policy saved.",
  paid: "Top-up paid: the credits are in the wallet."
}

const selected = (on: boolean): Html | "" => (on ? html` selected` : "")

export const renderAgentPage = (
  d: AgentPageData,
  message: { readonly notice?: string; readonly error?: string },
  now: number
): string => {
  const w = d.wallet
  const p = w.policies
  const a = d.agent
  const path = agentPath(a.id)
  const f = d.filters
  const reviews = d.transactions.data.filter((t) => t.review !== null)
  const older = d.transactions.nextCursor
    ? html`<p><a href="${path}?${new URLSearchParams({ ...(f.status ? { status: f.status } : {}), ...(f.role ? { role: f.role } : {}), ...(f.from ? { from: f.from } : {}), ...(f.to ? { to: f.to } : {}), cursor: d.transactions.nextCursor }).toString()}#transactions">Older transactions →</a></p>`
    : ""
  return layout(
    `${a.name} · owner dashboard`,
    html`<p><a href="/agent-dashboard">← All agents and keys</a></p>
<h1>${a.name}</h1>
<p class="lead">Agent <code>${a.id}</code>${a.organization ? ` · ${a.organization}` : ""} · reputation ${d.reputation.score} (${d.reputation.band})</p>
<div class="messages">
<p id="status" class="msg msg-status" role="status" aria-live="polite">${message.notice ? message.notice : ""}</p>
<p id="error" class="msg msg-error" role="alert"${message.error ? "" : " hidden"}>${message.error ? message.error : ""}</p>
</div>

<section id="wallet" aria-labelledby="wallet-title">
<h2 id="wallet-title">Wallet</h2>
<dl class="figures">
<div><dt>Balance</dt><dd id="balance">${usd(w.balanceCents)}</dd></div>
<div><dt>Spent today</dt><dd id="spent-today">${usd(w.spentTodayCents)}${p.dailyLimitCents === null ? "" : ` of ${usd(p.dailyLimitCents)}`}</dd></div>
<div><dt>Spent this month</dt><dd>${usd(w.spentThisMonthCents)}${p.monthlyLimitCents === null ? "" : ` of ${usd(p.monthlyLimitCents)}`}</dd></div>
<div><dt>Autonomy</dt><dd>${p.autonomyLevel}</dd></div>
</dl>
<form class="card inline-form" method="post" action="${path}/topup">
<h3>Top up</h3>
<div class="field"><label for="topup-amount">Amount in dollars</label>
<input id="topup-amount" name="amount" type="text" inputmode="decimal" required value="50.00" aria-describedby="topup-hint">
<p class="hint" id="topup-hint">$1 to $10,000. Paid at the ${d.payments === "stripe" ? "Stripe" : "test (fake) processor's"} checkout; 1 credit = 1 cent.</p></div>
<button type="submit" class="primary">Top up</button>
</form>
</section>

<section id="approvals" aria-labelledby="approvals-title" data-poll="${path}/approvals.json" data-interval="${APPROVAL_POLL_MS}">
<h2 id="approvals-title">Pending approvals <span id="approvals-count" class="badge">${d.pending.length}</span></h2>
<p id="approvals-live" class="hint" aria-live="polite">${p.autonomyLevel === "full_auto" ? "In full_auto nothing waits: set semi_auto (purchases over the approval threshold) or manual (every purchase) below." : p.autonomyLevel === "semi_auto" ? `Purchases over ${usd(p.approvalThresholdCents)} wait here for you, up to 7 days.` : "Every purchase waits here for you, up to 7 days."} New ones appear without reloading.</p>
<p class="hint">Approving charges exactly the amount shown. If the seller changed the price or the tier since the agent asked, the approval is void and nothing is charged: the agent asks again.</p>
<div class="table-wrap" tabindex="0"><table>
<thead><tr><th scope="col">Service / tier</th><th scope="col">Approving charges</th><th scope="col">Why</th><th scope="col">Asked</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Decide</span></th></tr></thead>
<tbody id="approvals-body">${d.pending.map((x) => approvalRow(a.id, x))}</tbody>
</table></div>
</section>

<section id="spend" aria-labelledby="spend-title">
<h2 id="spend-title">Spend per day</h2>
${spendChart(d.byDay, p.dailyLimitCents, now)}
</section>

<section id="policy" aria-labelledby="policy-title">
<h2 id="policy-title">Spending policy</h2>
<p class="hint">As the account owner you may loosen or tighten any of these; the agent's own key may only tighten them (<code>PATCH /wallet</code>). Empty limit = no limit.</p>
<form class="card policy-form" method="post" action="${path}/policy">
<div class="field"><label for="per-tx">Per purchase limit ($)</label><input id="per-tx" name="perTransactionLimit" type="text" inputmode="decimal" value="${dollarsField(p.perTransactionLimitCents)}"></div>
<div class="field"><label for="daily">Daily limit ($)</label><input id="daily" name="dailyLimit" type="text" inputmode="decimal" value="${dollarsField(p.dailyLimitCents)}"></div>
<div class="field"><label for="monthly">Monthly limit ($)</label><input id="monthly" name="monthlyLimit" type="text" inputmode="decimal" value="${dollarsField(p.monthlyLimitCents)}"></div>
<div class="field"><label for="threshold">Approval threshold ($, semi_auto)</label><input id="threshold" name="approvalThreshold" type="text" inputmode="decimal" required value="${dollarsField(p.approvalThresholdCents)}"></div>
<div class="field"><label for="autonomy">Autonomy</label><select id="autonomy" name="autonomyLevel">
<option value="full_auto"${selected(p.autonomyLevel === "full_auto")}>full_auto — buys alone within the limits</option>
<option value="semi_auto"${selected(p.autonomyLevel === "semi_auto")}>semi_auto — purchases above the approval threshold wait for me</option>
<option value="manual"${selected(p.autonomyLevel === "manual")}>manual — every purchase waits for me</option>
</select></div>
<div class="field"><label for="categories">Allowed categories</label><input id="categories" name="allowedCategories" type="text" value="${(p.allowedCategories ?? []).join(", ")}"><p class="hint">Comma separated; empty = any.</p></div>
<div class="field"><label for="sellers">Allowed sellers</label><input id="sellers" name="allowedSellers" type="text" value="${(p.allowedSellers ?? []).join(", ")}"><p class="hint">Agent ids, comma separated; empty = any.</p></div>
<fieldset class="field"><legend>Auto-recharge</legend>
<p><input type="checkbox" id="ar-enabled" name="autoRechargeEnabled" value="on"${p.autoRecharge.enabled ? " checked" : ""}><label for="ar-enabled">Recharge when the balance falls below the threshold</label></p>
<div class="field"><label for="ar-threshold">Below ($)</label><input id="ar-threshold" name="autoRechargeThreshold" type="text" inputmode="decimal" value="${dollarsField(p.autoRecharge.thresholdCents)}"></div>
<div class="field"><label for="ar-amount">Recharge by ($)</label><input id="ar-amount" name="autoRechargeAmount" type="text" inputmode="decimal" value="${dollarsField(p.autoRecharge.amountCents)}"></div>
</fieldset>
<button type="submit" class="primary">Save policy</button>
</form>
</section>

<section id="transactions" aria-labelledby="transactions-title">
<h2 id="transactions-title">Transactions</h2>
<form class="inline-form filters" method="get" action="${path}#transactions">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${["completed", "failed", "refunded"].map((s) => html`<option${selected(f.status === s)}>${s}</option>`)}</select></div>
<div class="field"><label for="f-role">Role</label><select id="f-role" name="role"><option value="">any</option>${["buyer", "seller"].map((s) => html`<option${selected(f.role === s)}>${s}</option>`)}</select></div>
<div class="field"><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${f.from ?? ""}"></div>
<div class="field"><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${f.to ?? ""}"></div>
<button type="submit">Filter</button>
</form>
<div class="table-wrap" tabindex="0"><table id="transactions-table">
<thead><tr><th scope="col">Id</th><th scope="col">Service</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Price</th><th scope="col">When</th></tr></thead>
<tbody>${d.transactions.data.map((t) => txRow(a.id, t))}</tbody>
</table></div>
${d.transactions.data.length === 0 ? html`<p class="hint">No transactions${f.status || f.role || f.from || f.to ? " match these filters" : " yet"}.</p>` : ""}
${older}
</section>

<section id="reviews" aria-labelledby="reviews-title">
<h2 id="reviews-title">Reviews</h2>
${
  reviews.length === 0
    ? html`<p class="hint">No reviews on the transactions above.</p>`
    : html`<ul>${reviews.map((t) => html`<li>${"★".repeat(t.review!.rating)}${"☆".repeat(5 - t.review!.rating)} on <a href="${path}/transactions/${encodeURIComponent(t.id)}">${t.serviceName}</a>${t.review!.text ? ` — “${t.review!.text}”` : ""}</li>`)}</ul>`
}
</section>

<section id="disputes" aria-labelledby="disputes-title">
<h2 id="disputes-title">Disputes</h2>
${
  d.disputes.length === 0
    ? html`<p class="hint">No disputes.</p>`
    : html`<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Transaction</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Refund</th><th scope="col">Opened</th></tr></thead><tbody>${d.disputes.map(
        (x) =>
          html`<tr><td><a href="${path}/transactions/${encodeURIComponent(x.transactionId)}">${x.transactionId}</a></td><td>${x.role}</td><td><span class="badge">${x.status}</span></td><td>${x.reason}</td><td class="nowrap">${usd(x.refundCents)}</td><td class="nowrap">${when(x.createdAt)}</td></tr>`
      )}</tbody></table></div>`
}
</section>`
  )
}

export const renderTransactionPage = (agent: Agent, t: Transaction) =>
  layout(
    `Transaction ${t.id}`,
    html`<p><a href="${agentPath(agent.id)}#transactions">← ${agent.name}</a></p>
<h1>Transaction <code>${t.id}</code></h1>
<dl class="figures detail">
<div><dt>Service</dt><dd>${t.serviceName} (<code>${t.serviceId}</code>, tier ${t.tierId})</dd></div>
<div><dt>Status</dt><dd><span class="badge">${t.status}</span></dd></div>
<div><dt>Role</dt><dd>${t.role}</dd></div>
<div><dt>Price</dt><dd>${usd(t.priceCents)}${t.listPriceCents !== t.priceCents ? ` (list ${usd(t.listPriceCents)})` : ""}</dd></div>
<div><dt>Seller's share / fee</dt><dd>${usd(t.sellerCents)} / ${usd(t.feeCents)}</dd></div>
<div><dt>Buyer / seller</dt><dd><code>${t.buyerAgentId}</code> / <code>${t.sellerAgentId}</code></dd></div>
<div><dt>Created</dt><dd>${when(t.createdAt)}</dd></div>
<div><dt>Approval</dt><dd>${t.approvalId ? html`<code>${t.approvalId}</code>` : "—"}</dd></div>
<div><dt>Delivery</dt><dd>${t.delivery ? html`${t.delivery.success ? "delivered" : `failed: ${t.delivery.error ?? ""}`} · ${when(t.delivery.deliveredAt)}` : "—"}</dd></div>
<div><dt>Review</dt><dd>${t.review ? `${t.review.rating}/5${t.review.text ? ` — “${t.review.text}”` : ""}` : "—"}</dd></div>
<div><dt>Dispute</dt><dd>${t.disputeId ? html`<code>${t.disputeId}</code> (see the agent's disputes)` : "—"}</dd></div>
<div><dt>Refunded</dt><dd>${when(t.refundedAt)}</dd></div>
</dl>`
  )
