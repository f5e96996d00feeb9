// Parts of the owner's pages shared by the agent page and the overview: an approval waiting for the
// owner (Approve / Decline), a refusal, an audit entry, a transaction row and the freeze switch.
// Lists are cards (one per item), readable on a phone without scrolling sideways.
import { type Transaction } from "../../../schema/commerce/transactions.js"
import type { AuditEntry } from "../../../schema/audit/audit.js"
import type { RefusalView } from "../../../schema/refusals/refusals.js"
import { type Html, html } from "../templates/html.js"
import { agentPath, deciderText, FIELD_LABELS, moneyStatus, ownerMessage, refusalReason, usd, when } from "./format.js"
import type { NamedApproval } from "./names.js"

/** Where a form's answer returns: the overview, or (absent) the agent's page. */
const returnField = (to: "overview" | undefined): Html | "" =>
  to ? html`<input type="hidden" name="return" value="${to}">` : ""

const approvalItem = (a: NamedApproval, options: { readonly from?: "overview" } = {}): Html => {
  const action = `${agentPath(a.agentId)}/approvals/${encodeURIComponent(a.id)}`
  const what = `${a.serviceName} (${a.tierName})`
  return html`<li class="item approval" data-approval-id="${a.id}">
<p class="item-head"><strong>${a.serviceName}</strong> <span class="hint">${a.tierName}</span> <span class="amount">${usd(a.quotedPriceCents)}</span></p>
<p class="item-meta">${options.from ? html`Agent <a href="${agentPath(a.agentId)}">${a.agentName}</a> · ` : ""}${a.sellerName ? `sold by ${a.sellerName} · ` : ""}${a.reasonText}</p>
<p class="item-meta">Asked ${when(a.createdAt)} · expires ${when(a.expiresAt)}</p>
<div class="actions"><form method="post" action="${action}/approve">${returnField(options.from)}<button type="submit" class="primary" aria-label="Approve ${what} for ${usd(a.quotedPriceCents)}">Approve</button></form>
<form method="post" action="${action}/decline">${returnField(options.from)}<button type="submit" class="danger" aria-label="Decline ${what}">Decline</button></form></div>
</li>`
}

export const approvalList = (items: ReadonlyArray<NamedApproval>, empty: string, from?: "overview"): Html =>
  items.length === 0
    ? html`<p class="hint">${empty}</p>`
    : html`<ul class="items" id="approvals-body">${items.map((a) => approvalItem(a, from ? { from } : {}))}</ul>`

const refusalItem = (
  r: RefusalView,
  agentName?: string
): Html => html`<li class="item refusal" data-refusal-id="${r.id}">
<p class="item-head"><strong>${refusalReason(r.reason)}</strong> <span class="amount">${usd(r.priceCents)}</span></p>
<p class="item-meta">${agentName ? html`Agent <a href="${agentPath(r.agentId)}">${agentName}</a> · ` : ""}${r.serviceName ?? r.path}${r.tierId ? ` (${r.tierId})` : ""} · ${when(r.createdAt)}</p>
<p class="item-meta">${ownerMessage(r.message)}</p>
</li>`

export const refusalList = (items: ReadonlyArray<RefusalView>, names?: ReadonlyMap<string, string>): Html =>
  items.length === 0
    ? html`<p class="hint">No refused purchases.</p>`
    : html`<ul class="items" id="refusals-body">${items.map((r) => refusalItem(r, names?.get(r.agentId) ?? (names ? r.agentId : undefined)))}</ul>`

/** A policy field's value as the owner reads it (cents in dollars, null as no limit). */
const fieldValue = (key: string, v: unknown): string => {
  if (v === null || v === undefined) return key.endsWith("Cents") ? "no limit" : "none"
  if (typeof v === "number" && key.endsWith("Cents")) return usd(v)
  if (Array.isArray(v)) return v.join(", ")
  if (typeof v === "object") return JSON.stringify(v)
  return String(v)
}

const ACTIONS: Readonly<Record<string, string>> = {
  "approval.approved": "Purchase approved",
  "approval.declined": "Purchase declined",
  "approval.void": "Approved, but the quote had changed: nothing charged",
  "approval.withdrawn": "Purchase request withdrawn by the agent: nothing charged",
  "policy.changed": "Spending policy changed",
  "agent.frozen": "Agent frozen",
  "agent.unfrozen": "Agent unfrozen"
}

export const auditItem = (e: AuditEntry, accountId: string): Html => {
  const who =
    e.actor.kind === "owner"
      ? deciderText(e.actor.id === null ? null : `account:${e.actor.id}`, accountId)
      : `the agent's key ${e.actor.id ?? ""}`
  const changes =
    e.action.startsWith("approval.") || e.after === null
      ? []
      : Object.keys(e.after)
          .filter((k) => k !== "frozen")
          .map((k) => `${FIELD_LABELS[k] ?? k}: ${fieldValue(k, e.before?.[k])} → ${fieldValue(k, e.after?.[k])}`)
  const price = e.before?.quotedPriceCents
  const service = e.before?.serviceId
  return html`<li class="item audit" data-audit-id="${e.id}">
<p class="item-head"><strong>${ACTIONS[e.action] ?? e.action}</strong>${typeof price === "number" ? html` <span class="amount">${usd(price)}</span>` : ""}</p>
<p class="item-meta">By ${who} · ${when(e.createdAt)}${typeof service === "string" ? ` · ${service}` : ""}</p>
${changes.length > 0 ? html`<ul class="changes">${changes.map((c) => html`<li>${c}</li>`)}</ul>` : ""}
</li>`
}

export const txRow = (agentId: string, t: Transaction): Html => html`<tr>
<td data-label="Service">${t.serviceName} <span class="hint">(${t.tierId})</span></td>
<td data-label="What happened"><span class="badge badge-${t.status}">${moneyStatus(t.status, t.priceCents, t.role)}</span>${t.refundedAt ? html` <span class="hint">refunded ${when(t.refundedAt)}</span>` : ""}</td>
<td data-label="Role">${t.role === "buyer" ? "bought" : "sold"}</td>
<td data-label="When" class="nowrap">${when(t.createdAt)}</td>
<td data-label="Details"><a href="${agentPath(agentId)}/transactions/${encodeURIComponent(t.id)}">${t.id}</a></td>
</tr>`

/** The freeze switch: one button that says what it does; the answer returns to the page it was on. */
export const freezeForm = (agentId: string, agentName: string, frozen: boolean, from?: "overview"): Html =>
  html`<form class="freeze" method="post" action="${agentPath(agentId)}/freeze">${returnField(from)}<input type="hidden" name="frozen" value="${frozen ? "false" : "true"}"><button type="submit" class="${frozen ? "primary" : "danger"}" aria-label="${frozen ? "Unfreeze" : "Freeze spending of"} ${agentName}">${frozen ? "Unfreeze" : "Freeze spending"}</button></form>`

export const frozenBadge = (frozen: boolean): Html | "" =>
  frozen ? html`<span class="badge badge-frozen">Frozen</span>` : ""
