// The owner's overview (/agent-dashboard/overview): every agent at a glance (balance, spend today
// against its limits, what waits, the last refusal, the freeze switch), one approvals inbox across
// the agents, and the refused purchases with their reasons. Cards, not tables: it is read on phones.
import type { OverviewAgent } from "../../../schema/audit/overview.js"
import { type Html, html } from "../templates/html.js"
import type { OverviewPageData } from "./data.js"
import { agentPath, refusalReason, usd, when } from "./format.js"
import { layout, liveAttrs, messages } from "./pages.js"
import { approvalList, freezeForm, frozenBadge, refusalList } from "./sections.js"

export const OVERVIEW_PATH = "/agent-dashboard/overview"

const limit = (cents: number | null) => (cents === null ? "no limit" : usd(cents))

const agentCard = (a: OverviewAgent): Html => {
  const r = a.lastRefusal
  return html`<li class="item agent${a.frozen ? " is-frozen" : ""}" data-agent-id="${a.id}">
<p class="item-head"><a href="${agentPath(a.id)}"><strong>${a.name}</strong></a> ${frozenBadge(a.frozen)} <span class="amount" title="Balance">${usd(a.balanceCents)}</span></p>
<dl class="mini">
<div><dt>Spent today</dt><dd>${usd(a.spentTodayCents)} of ${limit(a.limits.dailyCents)}</dd></div>
<div><dt>This month</dt><dd>${usd(a.spentThisMonthCents)} of ${limit(a.limits.monthlyCents)}</dd></div>
<div><dt>Per purchase</dt><dd>${limit(a.limits.perPurchaseCents)}</dd></div>
<div><dt>Waiting for you</dt><dd>${a.pendingApprovals === 0 ? "nothing" : html`<a href="#inbox">${a.pendingApprovals} approval${a.pendingApprovals === 1 ? "" : "s"}</a>`}</dd></div>
</dl>
<p class="item-meta">Last refusal: ${r ? html`<strong>${refusalReason(r.reason)}</strong> — ${r.serviceName ?? r.path} ${usd(r.priceCents)}, ${when(r.createdAt)}` : "none"}</p>
<div class="actions">${freezeForm(a.id, a.name, a.frozen, "overview")}<a class="button-link" href="${agentPath(a.id)}">Wallet, policy and history</a></div>
</li>`
}

export const renderOverviewPage = (
  d: OverviewPageData,
  message: { readonly notice?: string; readonly error?: string }
): string => {
  const agents = d.overview.agents
  const names = new Map(agents.map((a) => [a.id, a.name]))
  return layout(
    "Overview · owner dashboard",
    html`<nav class="crumbs" aria-label="Owner pages"><a href="/agent-dashboard">← Agents and keys</a></nav>
<h1>Overview</h1>
<p class="lead">Every agent's money at a glance, what waits for you, and what was refused. It updates by itself.</p>
${messages(message)}
<div id="live"${liveAttrs(`${OVERVIEW_PATH}/live.json`, d.stamp, OVERVIEW_PATH)}>
<section id="agents" aria-labelledby="agents-title">
<h2 id="agents-title">Agents</h2>
<div id="agents-list" data-live>${
      agents.length === 0
        ? html`<p class="hint">No agents yet: <a href="/agent-dashboard">create one</a>.</p>`
        : html`<ul class="items cards">${agents.map(agentCard)}</ul>`
    }</div>
</section>
<section id="inbox" aria-labelledby="inbox-title">
<h2 id="inbox-title">Approvals inbox <span id="approvals-count" class="badge" data-live>${d.inbox.length}</span></h2>
<p class="hint">Every agent's purchases that wait for you. Approving charges exactly the amount shown.</p>
<p id="approvals-live" class="live-note" aria-live="polite"></p>
<div id="approvals-list" data-live>${approvalList(d.inbox, "Nothing waits for you.", "overview")}</div>
</section>
<section id="refusals" aria-labelledby="refusals-title">
<h2 id="refusals-title">Refused purchases</h2>
<p class="hint">What your agents tried and their wallets refused, newest first, with the reason.</p>
<div id="refusals-list" data-live>${refusalList(d.refusals, names)}</div>
</section>
</div>`
  )
}
