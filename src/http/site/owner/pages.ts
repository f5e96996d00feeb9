// The owner's agent page as HTML (wallet and freeze, approvals, refusals, spend, policy,
// transactions, audit trail, reviews, disputes) and a transaction's detail, in the site's layout.
// Parts marked data-live are replaced in place by the page's script when the live stamp changes.
import { type Transaction, TransactionStatus } from "../../../schema/commerce/transactions.js"
import type { Agent } from "../../../schema/keys/keys.js"
import { PLATFORM } from "../../../services/discovery/document.js"
import { type Html, html, type Part } from "../templates/html.js"
import { layout as siteLayout } from "../templates/layout.js"
import { spendChart } from "./chart.js"
import { type AgentPageData, RECENT } from "./data.js"
import { agentPath, APPROVAL_POLL_MS, dollarsField, disputeStatus, moneyStatus, usd, when } from "./format.js"
import { approvalList, auditItem, freezeForm, frozenBadge, refusalList, txRow } from "./sections.js"
import { salesSection } from "./sales.js"

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

export const NOTICES: Readonly<Record<string, string>> = {
  approved: "Approved: the purchase ran and is in the transactions.",
  declined: "Declined: nothing was charged.",
  policy: "Policy saved.",
  paid: "Top-up paid: the credits are in the wallet.",
  frozen: "Frozen: the agent cannot spend until you unfreeze it.",
  unfrozen: "Unfrozen: the agent may spend again within its limits."
}

/** What the owner typed, shown again after a refusal (absent: the stored values). */
type Typed = URLSearchParams | undefined

/** The status line and the error line; the script clears a notice after a while. */
export const messages = (message: {
  readonly notice?: string
  readonly error?: string
}): Html => html`<div class="messages">
<p id="status" class="msg msg-status" role="status" aria-live="polite">${message.notice ?? ""}</p>
<p id="error" class="msg msg-error" role="alert"${message.error ? "" : html` hidden`}>${message.error ?? ""}</p>
</div>`

/** The live stamp's address and the page's own, for the script (data attributes: no inline script). */
export const liveAttrs = (pollUrl: string, stamp: string, pageUrl: string): Html =>
  html` data-live-poll="${pollUrl}" data-live-stamp="${stamp}" data-live-page="${pageUrl}" data-interval="${APPROVAL_POLL_MS}"`

const selected = (on: boolean): Html | "" => (on ? html` selected` : "")
const autonomyText: Readonly<Record<string, string>> = {
  full_auto: "buys alone within the limits",
  semi_auto: "asks you above the threshold",
  manual: "asks you for every purchase"
}
const limitOf = (cents: number | null) => (cents === null ? "no limit" : usd(cents))

const wallet = (d: AgentPageData, typed: Typed): Html => {
  const w = d.wallet
  const p = w.policies
  return html`<div id="wallet-figures" data-live>
<dl class="figures">
<div><dt>Balance</dt><dd id="balance">${usd(w.balanceCents)}</dd></div>
<div><dt>Spent today</dt><dd id="spent-today">${usd(w.spentTodayCents)}${p.dailyLimitCents === null ? "" : ` of ${usd(p.dailyLimitCents)}`}</dd></div>
<div><dt>Spent this month</dt><dd>${usd(w.spentThisMonthCents)}${p.monthlyLimitCents === null ? "" : ` of ${usd(p.monthlyLimitCents)}`}</dd></div>
<div><dt>Per purchase</dt><dd>${limitOf(p.perTransactionLimitCents)}</dd></div>
<div><dt>Autonomy</dt><dd>${p.autonomyLevel} <span class="hint">${autonomyText[p.autonomyLevel] ?? ""}</span></dd></div>
<div><dt>Spending</dt><dd id="frozen-state">${p.frozen ? html`${frozenBadge(true)} <span class="hint">every purchase is refused</span>` : "Allowed"}</dd></div>
</dl>
<div class="freeze-row">${freezeForm(d.agent.id, d.agent.name, p.frozen)}<p class="hint">${p.frozen ? "Unfreezing gives the agent back its limits, unchanged." : "Freezing refuses every purchase at once and tells the agent why; its pending approvals wait."}</p></div>
</div>
<form class="card inline-form" method="post" action="${agentPath(d.agent.id)}/topup">
<h3>Top up ${d.agent.name}'s wallet</h3>
<div class="field"><label for="topup-amount">Amount in dollars</label>
<input id="topup-amount" name="amount" type="text" inputmode="decimal" required value="${typed?.get("amount") ?? "50.00"}" aria-describedby="topup-hint">
<p class="hint" id="topup-hint">$1 to $10,000. Paid at the ${d.payments === "stripe" ? "Stripe" : "test (fake) processor's"} checkout; you come back here with the new balance.</p></div>
<button type="submit" class="primary">Top up</button>
</form>`
}

const policyForm = (d: AgentPageData, typed: Typed): Html => {
  const p = d.wallet.policies
  const v = (name: string, stored: string) => typed?.get(name) ?? stored
  const level = v("autonomyLevel", p.autonomyLevel)
  const recharge = typed ? typed.get("autoRechargeEnabled") === "on" : p.autoRecharge.enabled
  return html`<form class="card policy-form" method="post" action="${agentPath(d.agent.id)}/policy">
<div class="field"><label for="per-tx">Per purchase limit ($)</label><input id="per-tx" name="perTransactionLimit" type="text" inputmode="decimal" value="${v("perTransactionLimit", dollarsField(p.perTransactionLimitCents))}"></div>
<div class="field"><label for="daily">Daily limit ($)</label><input id="daily" name="dailyLimit" type="text" inputmode="decimal" value="${v("dailyLimit", dollarsField(p.dailyLimitCents))}"></div>
<div class="field"><label for="monthly">Monthly limit ($)</label><input id="monthly" name="monthlyLimit" type="text" inputmode="decimal" value="${v("monthlyLimit", dollarsField(p.monthlyLimitCents))}"></div>
<div class="field"><label for="threshold">Approval threshold ($, semi_auto)</label><input id="threshold" name="approvalThreshold" type="text" inputmode="decimal" required value="${v("approvalThreshold", dollarsField(p.approvalThresholdCents))}"></div>
<div class="field"><label for="autonomy">Autonomy</label><select id="autonomy" name="autonomyLevel">
<option value="full_auto"${selected(level === "full_auto")}>full_auto — buys alone within the limits</option>
<option value="semi_auto"${selected(level === "semi_auto")}>semi_auto — purchases above the approval threshold wait for me</option>
<option value="manual"${selected(level === "manual")}>manual — every purchase waits for me</option>
</select></div>
<div class="field"><label for="categories">Allowed categories</label><input id="categories" name="allowedCategories" type="text" value="${v("allowedCategories", (p.allowedCategories ?? []).join(", "))}"><p class="hint">Comma separated; empty = any.</p></div>
<div class="field"><label for="sellers">Allowed sellers</label><input id="sellers" name="allowedSellers" type="text" value="${v("allowedSellers", (p.allowedSellers ?? []).join(", "))}"><p class="hint">Agent ids, comma separated; empty = any.</p></div>
<fieldset class="field"><legend>Auto-recharge</legend>
<p><input type="checkbox" id="ar-enabled" name="autoRechargeEnabled" value="on"${recharge ? html` checked` : ""}><label for="ar-enabled">Recharge when the balance falls below the threshold</label></p>
<div class="field"><label for="ar-threshold">Below ($)</label><input id="ar-threshold" name="autoRechargeThreshold" type="text" inputmode="decimal" value="${v("autoRechargeThreshold", dollarsField(p.autoRecharge.thresholdCents))}"></div>
<div class="field"><label for="ar-amount">Recharge by ($)</label><input id="ar-amount" name="autoRechargeAmount" type="text" inputmode="decimal" value="${v("autoRechargeAmount", dollarsField(p.autoRecharge.amountCents))}"></div>
</fieldset>
<button type="submit" class="primary">Save policy</button>
</form>`
}

const transactions = (d: AgentPageData): Html => {
  const f = d.filters
  const path = agentPath(d.agent.id)
  const query = (cursor: string) =>
    new URLSearchParams({
      ...(f.status ? { status: f.status } : {}),
      ...(f.role ? { role: f.role } : {}),
      ...(f.from ? { from: f.from } : {}),
      ...(f.to ? { to: f.to } : {}),
      cursor
    }).toString()
  return html`<form class="inline-form filters" method="get" action="${path}#transactions">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${TransactionStatus.literals.map((s) => html`<option${selected(f.status === s)}>${s}</option>`)}</select></div>
<div class="field"><label for="f-role">Role</label><select id="f-role" name="role"><option value="">any</option>${["buyer", "seller"].map((s) => html`<option${selected(f.role === s)}>${s}</option>`)}</select></div>
<div class="field"><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${f.from ?? ""}"></div>
<div class="field"><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${f.to ?? ""}"></div>
<button type="submit">Filter</button>
</form>
<div id="transactions-list" data-live>
${
  d.transactions.data.length === 0
    ? html`<p class="hint">No transactions${f.status || f.role || f.from || f.to ? " match these filters" : " yet"}.</p>`
    : html`<table id="transactions-table" class="stack">
<caption class="visually-hidden">Transactions, newest first</caption>
<thead><tr><th scope="col">Service</th><th scope="col">What happened</th><th scope="col">Role</th><th scope="col">When</th><th scope="col">Details</th></tr></thead>
<tbody>${d.transactions.data.map((t) => txRow(d.agent.id, t))}</tbody>
</table>`
}
${d.transactions.nextCursor ? html`<p><a href="${path}?${query(d.transactions.nextCursor)}#transactions">Older transactions →</a></p>` : ""}
</div>`
}

/** The page's own address with its filters: what the script fetches again (also after a form's answer). */
const pageUrl = (path: string, f: AgentPageData["filters"]): string => {
  const q = new URLSearchParams(Object.entries(f).filter((e): e is [string, string] => typeof e[1] === "string"))
  return q.size === 0 ? path : `${path}?${q.toString()}`
}

export const renderAgentPage = (
  d: AgentPageData,
  message: { readonly notice?: string; readonly error?: string },
  now: number,
  typed?: Typed
): string => {
  const p = d.wallet.policies
  const a = d.agent
  const path = agentPath(a.id)
  const reviews = d.transactions.data.filter((t) => t.review !== null)
  const prices = new Map(d.transactions.data.map((t) => [t.id, t.priceCents]))
  const csv = (kind: string) => `/api/dashboard/agents/${encodeURIComponent(a.id)}/export.csv?kind=${kind}`
  return layout(
    `${a.name} · owner dashboard`,
    html`<nav class="crumbs" aria-label="Owner pages"><a href="/agent-dashboard/overview">← Overview of all agents</a> · <a href="/agent-dashboard">Agents and keys</a></nav>
<h1>${a.name} <span id="title-frozen" data-live>${frozenBadge(p.frozen)}</span></h1>
<p class="lead">Agent <code>${a.id}</code>${a.organization ? ` · ${a.organization}` : ""} · reputation ${d.reputation.score} (${d.reputation.band})</p>
${messages(message)}
<div id="live"${liveAttrs(`${path}/live.json`, d.stamp, pageUrl(path, d.filters))}>

<section id="wallet" aria-labelledby="wallet-title">
<h2 id="wallet-title">Wallet</h2>
${wallet(d, typed?.has("amount") ? typed : undefined)}
</section>

<section id="approvals" aria-labelledby="approvals-title">
<h2 id="approvals-title">Pending approvals <span id="approvals-count" class="badge" data-live>${d.pending.length}</span></h2>
<p class="hint">${p.autonomyLevel === "full_auto" ? "In full_auto nothing waits: set semi_auto (purchases over the approval threshold) or manual (every purchase) below." : p.autonomyLevel === "semi_auto" ? `Purchases over ${usd(p.approvalThresholdCents)} wait here for you, up to 7 days.` : "Every purchase waits here for you, up to 7 days."} New ones appear without reloading. Approving charges exactly the amount shown; if the seller changed the price or the tier since, nothing is charged and the agent asks again.</p>
<p id="approvals-live" class="live-note" aria-live="polite"></p>
<div id="approvals-list" data-live>${approvalList(d.pending, "Nothing waits for you.")}</div>
</section>

<section id="refusals" aria-labelledby="refusals-title">
<h2 id="refusals-title">Refused purchases</h2>
<p class="hint">What the agent tried and the wallet refused, newest first (the last ${RECENT}).</p>
<div id="refusals-list" data-live>${refusalList(d.refusals)}</div>
</section>

${salesSection(d.sales)}

<section id="spend" aria-labelledby="spend-title">
<h2 id="spend-title">Spend per day</h2>
<div id="spend-chart-box" data-live>${spendChart(d.byDay, p.dailyLimitCents, now)}</div>
</section>

<section id="policy" aria-labelledby="policy-title">
<h2 id="policy-title">Spending policy</h2>
<p class="hint">As the account owner you may loosen or tighten any of these; the agent's own key may only tighten them. Amounts in dollars; an empty limit means no limit.</p>
${policyForm(d, typed?.has("amount") ? undefined : typed)}
</section>

<section id="transactions" aria-labelledby="transactions-title">
<h2 id="transactions-title">Transactions</h2>
<p class="export"><a href="${csv("transactions")}" download>Export transactions (CSV)</a></p>
${transactions(d)}
</section>

<section id="audit" aria-labelledby="audit-title">
<h2 id="audit-title">Audit trail</h2>
<p class="hint">Who decided what about this agent's money, and when (the last ${RECENT}).</p>
<p class="export"><a href="${csv("audit")}" download>Export the audit trail (CSV)</a></p>
<div id="audit-list" data-live>${d.audit.length === 0 ? html`<p class="hint">No decisions yet.</p>` : html`<ul class="items">${d.audit.map((e) => auditItem(e, d.accountId))}</ul>`}</div>
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
    : html`<table class="stack"><caption class="visually-hidden">Disputes</caption><thead><tr><th scope="col">Transaction</th><th scope="col">Role</th><th scope="col">Refund</th><th scope="col">Reason</th><th scope="col">Opened</th></tr></thead><tbody>${d.disputes.map(
        (x) =>
          html`<tr><td data-label="Transaction"><a href="${path}/transactions/${encodeURIComponent(x.transactionId)}">${x.transactionId}</a></td><td data-label="Role">${x.role}</td><td data-label="Refund"><span class="badge">${disputeStatus(x.status, x.refundCents, prices.get(x.transactionId) ?? null)}</span></td><td data-label="Reason">${x.reason}</td><td data-label="Opened" class="nowrap">${when(x.createdAt)}</td></tr>`
      )}</tbody></table>`
}
</section>
</div>`
  )
}

interface Decision {
  readonly by: string
  readonly at: string
}

export const renderTransactionPage = (agent: Agent, t: Transaction, decision: Decision | undefined) =>
  layout(
    `Transaction ${t.id}`,
    html`<nav class="crumbs" aria-label="Owner pages"><a href="${agentPath(agent.id)}#transactions">← ${agent.name}</a></nav>
<h1>${t.serviceName} <span class="hint">${t.tierId}</span></h1>
<p class="lead"><span class="badge badge-${t.status}">${moneyStatus(t.status, t.priceCents, t.role)}</span></p>
<dl class="figures detail">
<div><dt>Transaction</dt><dd><code>${t.id}</code></dd></div>
<div><dt>Service</dt><dd>${t.serviceName} (<code>${t.serviceId}</code>, tier ${t.tierId})</dd></div>
<div><dt>Role</dt><dd>${t.role === "buyer" ? `${agent.name} bought` : `${agent.name} sold`}</dd></div>
<div><dt>Price</dt><dd>${usd(t.priceCents)}${t.listPriceCents !== t.priceCents ? ` (list ${usd(t.listPriceCents)})` : ""}</dd></div>
<div><dt>Seller's share / fee</dt><dd>${usd(t.sellerCents)} / ${usd(t.feeCents)}</dd></div>
<div><dt>Buyer / seller</dt><dd><code>${t.buyerAgentId}</code> / <code>${t.sellerAgentId}</code></dd></div>
<div><dt>Created</dt><dd>${when(t.createdAt)}</dd></div>
<div><dt>Approval</dt><dd>${t.approvalId ? html`${decision ? html`Approved by ${decision.by}, ${when(decision.at)}` : "Approved"} <span class="hint">(<code>${t.approvalId}</code>)</span>` : "Not needed"}</dd></div>
<div><dt>Delivery</dt><dd>${t.delivery ? html`${t.delivery.success ? "delivered" : `failed: ${t.delivery.error ?? ""}`} · ${when(t.delivery.deliveredAt)}` : "—"}</dd></div>
<div><dt>Review</dt><dd>${t.review ? `${t.review.rating}/5${t.review.text ? ` — “${t.review.text}”` : ""}` : "—"}</dd></div>
<div><dt>Dispute</dt><dd>${t.disputeId ? html`<code>${t.disputeId}</code> (see the agent's disputes)` : "—"}</dd></div>
<div><dt>Refunded</dt><dd>${when(t.refundedAt)}</dd></div>
</dl>`
  )
