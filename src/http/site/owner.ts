// The owner's side of the dashboard: one server-rendered page per agent (/agent-dashboard/agents/:agentId)
// with its wallet and policy, top-up through the payments layer's checkout, pending approvals with
// approve / decline, a 30-day spend chart against the daily limit, transactions (filters, a detail page),
// reviews and disputes. Forms post to this origin with the session cookie; every handler calls the
// domain services (Wallet, Commerce, Payments, Reputation, Disputes, Keys) and re-implements no rule.
// New approvals appear without a reload: the page's script (browser/owner.ts) polls a small JSON endpoint.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Clock, Effect, Schema } from "effect"
import { Forbidden, InvalidInput } from "../../schema/platform/errors.js"
import { type Approval } from "../../schema/commerce/approvals.js"
import { type Dispute } from "../../schema/commerce/disputes.js"
import { type Transaction, TransactionStatus } from "../../schema/commerce/transactions.js"
import { UpdateWalletBody, type WalletView } from "../../schema/commerce/wallets.js"
import type { Agent } from "../../schema/keys/keys.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import type { Caller } from "../../services/keys/Caller.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { Disputes } from "../../services/commerce/Disputes.js"
import { Keys } from "../../services/keys/Keys.js"
import { Payments } from "../../services/payments/Payments.js"
import { requestIdempotency } from "../payments/requestIdempotency.js"
import { Reputation } from "../../services/reputation/Reputation.js"
import { Wallet } from "../../services/wallet/Wallet.js"
import { firstSchemaIssue } from "../errors.js"
import { noteCaller } from "../requestLog.js"
import { SESSION_COOKIE } from "../middleware/auth.js"
import { sessionCaller } from "../middleware/authLive.js"
import { dashboardHeaders } from "./dashboard.js"
import { type Html, html, type Part } from "./templates/html.js"
import { layout as siteLayout } from "./templates/layout.js"
import { pageCsp } from "./templates/csp.js"
import { PLATFORM } from "../../services/discovery/document.js"

export const OWNER_PREFIX = "/agent-dashboard/agents"
/** How often the page asks for new approvals (the script reads it from the page). */
export const APPROVAL_POLL_MS = 2000
const CHART_DAYS = 30

/** Integer cents as dollars ("$1,234.56"); money stays in cents everywhere else. */
export const usd = (cents: number): string =>
  `${cents < 0 ? "-" : ""}$${Math.floor(Math.abs(cents) / 100).toLocaleString("en-US")}.${String(Math.abs(cents) % 100).padStart(2, "0")}`
/** Cents as the dollars an input shows ("12.50"), or "" for no limit. */
const dollarsField = (cents: number | null): string => (cents === null ? "" : `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`)

/**
 * A dollar amount typed by a person, to integer cents without floating point: "12", "12.5", "12.50",
 * "1,200.00"; "" is `empty`. Anything else fails naming the form field.
 */
export const parseDollars = <E>(field: string, raw: string | null, empty: E): Effect.Effect<number | E, InvalidInput> => {
  const text = (raw ?? "").trim().replace(/,/g, "").replace(/^\$/, "")
  if (text === "") return Effect.succeed(empty)
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text)
  if (!m) return Effect.fail(new InvalidInput({ message: `${field}: must be an amount in dollars such as 25 or 25.50`, field }))
  return Effect.succeed(Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0")))
}

const list = (raw: string | null): ReadonlyArray<string> | null => {
  const items = (raw ?? "").split(/[,\n]/).map((s) => s.trim()).filter((s) => s !== "")
  return items.length === 0 ? null : items
}

// ---------------------------------------------------------------------------------------------
// Session and same-origin rules

/** Not signed in: the sign-in page (the existing dashboard), where the owner signs in and comes back. */
class SignedOut extends Schema.TaggedError<SignedOut>()("SignedOut", {}) {}

/** The signed-in owner, from the session cookie (the same session as /agent-dashboard). */
const ownerSession = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const token = request.cookies[SESSION_COOKIE]
  if (token === undefined || token === "") return yield* Effect.fail(new SignedOut())
  // noteCaller: the access log names the account, as for the dashboard's JSON endpoints.
  return yield* sessionCaller(token).pipe(Effect.tap(noteCaller), Effect.catchTag("Unauthorized", () => Effect.fail(new SignedOut())))
})

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * A form post must come from this site's own page: `Origin` (every browser sends it on a form post)
 * equal to BASE_URL's or the Host the request was sent to, and `Sec-Fetch-Site` same-origin when
 * present. The session cookie is SameSite=Strict as well; this refuses what that would miss (an
 * old browser, a same-site sibling). Refused: 403 before any service is called.
 */
export const sameOriginForm = (request: HttpServerRequest.HttpServerRequest, baseUrl: string): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return false
  const origin = request.headers.origin
  if (origin === undefined || origin === "null") return false
  const allowed = new Set([originOf(baseUrl)])
  const host = request.headers.host
  if (host) for (const scheme of ["http", "https"]) allowed.add(`${scheme}://${host}`)
  return allowed.has(originOf(origin))
}

const formOf = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig
  if (!sameOriginForm(request, config.baseUrl)) {
    return yield* Effect.fail(new Forbidden({ message: "this form must be sent from the dashboard's own page (same origin)" }))
  }
  const contentType = request.headers["content-type"] ?? ""
  if (!contentType.startsWith("application/x-www-form-urlencoded")) {
    return yield* Effect.fail(new InvalidInput({ message: "send the form as application/x-www-form-urlencoded", field: "Content-Type" }))
  }
  const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
  return new URLSearchParams(text)
})

// ---------------------------------------------------------------------------------------------
// Reading what the page shows (services only)

const TxFilters = Schema.Struct({
  status: Schema.optional(TransactionStatus),
  role: Schema.optional(Schema.Literals(["buyer", "seller"])),
  from: Schema.optional(Schema.String.pipe(Schema.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date (YYYY-MM-DD)" })))),
  to: Schema.optional(Schema.String.pipe(Schema.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date (YYYY-MM-DD)" })))),
  cursor: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(500))))
})
type TxFilters = typeof TxFilters.Type

/** The page's query: empty values are absent (a filter form sends every field); bad values are 400 naming the field. */
const filtersOf = Effect.fnUntraced(function* (url: string) {
  const q = new URL(url, "http://x").searchParams
  const raw: Record<string, string> = {}
  for (const k of ["status", "role", "from", "to", "cursor"]) {
    const v = q.get(k)
    if (v !== null && v !== "") raw[k] = v
  }
  return yield* Schema.decodeUnknownEffect(TxFilters)(raw).pipe(
    Effect.mapError((e) => {
      const { path, message } = firstSchemaIssue(e)
      return new InvalidInput({ message: `${path ?? "query"}: ${message}`, field: path ?? "query" })
    })
  )
})

interface AgentPageData {
  readonly agent: Agent
  readonly wallet: WalletView
  readonly pending: ReadonlyArray<Approval>
  readonly transactions: { readonly data: ReadonlyArray<Transaction>; readonly nextCursor: string | null }
  readonly filters: TxFilters
  readonly byDay: ReadonlyArray<{ readonly day: string; readonly spentCents: number }>
  readonly reputation: { readonly score: number; readonly band: string }
  readonly disputes: ReadonlyArray<Dispute>
  readonly payments: "fake" | "stripe"
}

const pendingFor = (caller: Caller, agentId: string) =>
  Effect.map(
    Effect.flatMap(Commerce, (c) => c.listApprovals(caller, "pending")),
    (r) => r.data.filter((a) => a.agentId === agentId)
  )

const agentPageData = Effect.fnUntraced(function* (caller: Caller, agentId: string, filters: TxFilters) {
  const agent = yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
  const config = yield* AppConfig
  const [wallet, pending, transactions, usage, reputation, disputes] = yield* Effect.all(
    [
      Effect.flatMap(Wallet, (w) => w.view(agentId)),
      pendingFor(caller, agentId),
      Effect.flatMap(Commerce, (c) =>
        c.listTransactions(agentId, {
          ...filters,
          ...(filters.from ? { from: `${filters.from}T00:00:00.000Z` } : {}),
          ...(filters.to ? { to: `${filters.to}T23:59:59.999Z` } : {}),
          limit: 20
        })
      ),
      Effect.flatMap(Reputation, (r) => r.usage(agentId, CHART_DAYS)),
      Effect.flatMap(Reputation, (r) => r.reputationOf(agentId)),
      Effect.flatMap(Disputes, (d) => d.list(agentId))
    ],
    { concurrency: 1 }
  )
  return {
    agent,
    wallet,
    pending,
    transactions,
    filters,
    byDay: usage.byDay,
    reputation: { score: reputation.score, band: reputation.band },
    disputes: disputes.data,
    payments: config.payments
  } satisfies AgentPageData
})

// ---------------------------------------------------------------------------------------------
// Rendering

const when = (iso: string | null): Html | string => (iso ? html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>` : "—")
const agentPath = (agentId: string) => `${OWNER_PREFIX}/${encodeURIComponent(agentId)}`

/** An owner page in the site's layout: root-relative links (the page stays on the host the owner signed in at). */
const layout = (title: string, main: Part): string =>
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

/** Spend per UTC day for the last 30 days as bars, the daily limit as a dashed line (inline SVG, no script). */
export const spendChart = (byDay: ReadonlyArray<{ readonly day: string; readonly spentCents: number }>, dailyLimitCents: number | null, today: number): Html => {
  const days: Array<{ day: string; cents: number }> = []
  const start = Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), new Date(today).getUTCDate()) - (CHART_DAYS - 1) * 86_400_000
  const spent = new Map(byDay.map((d) => [d.day.slice(0, 10), d.spentCents]))
  for (let i = 0; i < CHART_DAYS; i++) {
    const day = new Date(start + i * 86_400_000).toISOString().slice(0, 10)
    days.push({ day, cents: spent.get(day) ?? 0 })
  }
  const width = 600
  const height = 180
  const top = 10
  const bottom = 22
  const left = 4
  const plot = height - top - bottom
  const max = Math.max(1, dailyLimitCents ?? 0, ...days.map((d) => d.cents))
  const barWidth = (width - left) / CHART_DAYS
  const y = (cents: number) => top + plot - (cents / max) * plot
  const total = days.reduce((s, d) => s + d.cents, 0)
  const over = dailyLimitCents === null ? 0 : days.filter((d) => d.cents > dailyLimitCents).length
  const bars = days
    .map((d, i) => {
      const h = Math.max(d.cents > 0 ? 1 : 0, (d.cents / max) * plot)
      const cls = dailyLimitCents !== null && d.cents > dailyLimitCents ? "bar over" : "bar"
      return html`<rect class="${cls}" data-day="${d.day}" data-cents="${d.cents}" x="${(left + i * barWidth + 1).toFixed(1)}" y="${(top + plot - h).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}"><title>${d.day}: ${usd(d.cents)}</title></rect>`
    })
    
  const limit =
    dailyLimitCents === null
      ? ""
      : html`<line class="limit" data-cents="${dailyLimitCents}" x1="${left}" x2="${width}" y1="${y(dailyLimitCents).toFixed(1)}" y2="${y(dailyLimitCents).toFixed(1)}"/><text class="limit-label" x="${width - 4}" y="${(y(dailyLimitCents) - 3).toFixed(1)}" text-anchor="end">daily limit ${usd(dailyLimitCents)}</text>`
  const axis = html`<text class="axis" x="${left}" y="${height - 6}">${days[0]!.day}</text><text class="axis" x="${width}" y="${height - 6}" text-anchor="end">${days[days.length - 1]!.day} (today)</text>`
  const summary = `${usd(total)} spent in the last ${CHART_DAYS} days${dailyLimitCents === null ? "; no daily limit" : `; daily limit ${usd(dailyLimitCents)}, exceeded on ${over} day${over === 1 ? "" : "s"}`}`
  return html`<figure class="chart"><svg id="spend-chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="spend-chart-title spend-chart-desc" preserveAspectRatio="none">
<title id="spend-chart-title">Spend per day, last ${CHART_DAYS} days</title><desc id="spend-chart-desc">${summary}</desc>
${bars}${limit}${axis}</svg>
<figcaption>${summary}</figcaption></figure>`
}

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

const NOTICES: Readonly<Record<string, string>> = {
  approved: "Approved: the purchase ran and is in the transactions below.",
  declined: "Declined: nothing was charged.",
  policy: "Policy saved.",
  paid: "Top-up paid: the credits are in the wallet."
}

const selected = (on: boolean): Html | "" => (on ? html` selected` : "")

export const renderAgentPage = (d: AgentPageData, message: { readonly notice?: string; readonly error?: string }, now: number): string => {
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
    : html`<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Transaction</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Refund</th><th scope="col">Opened</th></tr></thead><tbody>${d.disputes
        .map(
          (x) =>
            html`<tr><td><a href="${path}/transactions/${encodeURIComponent(x.transactionId)}">${x.transactionId}</a></td><td>${x.role}</td><td><span class="badge">${x.status}</span></td><td>${x.reason}</td><td class="nowrap">${usd(x.refundCents)}</td><td class="nowrap">${when(x.createdAt)}</td></tr>`
        )
        }</tbody></table></div>`
}
</section>`
  )
}

const renderTransactionPage = (agent: Agent, t: Transaction) =>
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

// ---------------------------------------------------------------------------------------------
// Routes

const htmlPage = (body: string, status = 200, formTargets: ReadonlyArray<string> = []) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on the page's own
    // form posts, and the same-origin check needs the real origin. Other sites still get no referrer.
    headers: { ...dashboardHeaders, "content-security-policy": ownerCsp(formTargets), "referrer-policy": "same-origin" }
  })

/**
 * The page's CSP: the dashboard's (scripts, styles, fetches from this origin only), with form-action
 * widened to where a form's answer redirects: this origin, BASE_URL's (the page may be open at
 * another host name) and the checkout's (top-up answers with a 303 to it; browsers apply form-action
 * to that redirect too).
 */
const ownerCsp = (formTargets: ReadonlyArray<string>) => pageCsp({ connect: true, formAction: ["'self'", ...formTargets] })

const formTargetsOf = Effect.map(AppConfig, (config) =>
  [originOf(config.baseUrl), config.payments === "stripe" ? "https://checkout.stripe.com" : undefined].filter((o): o is string => o !== undefined)
)

const statusOf = (e: { readonly _tag: string }): number =>
  e._tag === "NotFound" ? 404 : e._tag === "Forbidden" || e._tag === "PolicyViolation" ? 403 : e._tag === "Conflict" || e._tag === "NegotiationUnusable" ? 409 : e._tag === "InsufficientCredits" ? 402 : e._tag === "StorageUnavailable" ? 503 : 400

const errorPage = (status: number, message: string) =>
  htmlPage(layout("Agent dashboard", html`<h1>Something is not right</h1><p class="msg msg-error" role="alert">${message}</p><p><a href="/agent-dashboard">Back to the dashboard</a></p>`), status)

const toSignIn = HttpServerResponse.empty({ status: 303, headers: { location: "/agent-dashboard", "cache-control": "no-store" } })

/** Renders the agent page (status and message given), or an error page when even that cannot be read. */
const agentPage = Effect.fnUntraced(function* (caller: Caller, agentId: string, filters: TxFilters, message: { readonly notice?: string; readonly error?: string }, status = 200) {
  const data = yield* agentPageData(caller, agentId, filters)
  const now = yield* Clock.currentTimeMillis
  return htmlPage(renderAgentPage(data, message, now), status, yield* formTargetsOf)
})

/** Runs a page handler: signed-out → the sign-in page; a typed failure → a page with its status and message. */
const page = <E extends { readonly _tag: string; readonly message?: string }, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E | SignedOut, R>
) =>
  handler.pipe(
    Effect.catch((e: E | SignedOut) =>
      e._tag === "SignedOut" ? Effect.succeed(toSignIn) : Effect.succeed(errorPage(statusOf(e), (e as { message?: string }).message ?? e._tag))
    )
  )

const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

/** A form that changes something: same origin, then the service call; its failure re-renders the agent page with the message and status. */
const formAction = <E extends { readonly _tag: string; readonly message?: string }, R>(
  act: (caller: Caller, agentId: string, form: URLSearchParams) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  page(
    Effect.gen(function* () {
      const caller = yield* ownerSession
      const agentId = yield* param("agentId")
      yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
      const result = yield* Effect.result(Effect.flatMap(formOf, (form) => act(caller, agentId, form)))
      if (result._tag === "Success") return result.success
      const e = result.failure as { readonly _tag: string; readonly message?: string }
      return yield* agentPage(caller, agentId, {}, { error: e.message ?? e._tag }, statusOf(e))
    })
  )

const backTo = (agentId: string, done: keyof typeof NOTICES, anchor: string) =>
  HttpServerResponse.empty({ status: 303, headers: { location: `${agentPath(agentId)}?done=${done}#${anchor}`, "cache-control": "no-store" } })

/** The policy form, decoded into the same body `PATCH /api/dashboard/commerce/wallets/:agentId` takes. */
const policyBody = Effect.fnUntraced(function* (form: URLSearchParams) {
  const body = {
    perTransactionLimitCents: yield* parseDollars("perTransactionLimit", form.get("perTransactionLimit"), null),
    dailyLimitCents: yield* parseDollars("dailyLimit", form.get("dailyLimit"), null),
    monthlyLimitCents: yield* parseDollars("monthlyLimit", form.get("monthlyLimit"), null),
    approvalThresholdCents: yield* parseDollars("approvalThreshold", form.get("approvalThreshold"), undefined),
    autonomyLevel: form.get("autonomyLevel") ?? undefined,
    allowedCategories: list(form.get("allowedCategories")),
    allowedSellers: list(form.get("allowedSellers")),
    autoRecharge: {
      enabled: form.get("autoRechargeEnabled") === "on",
      thresholdCents: yield* parseDollars("autoRechargeThreshold", form.get("autoRechargeThreshold"), undefined),
      amountCents: yield* parseDollars("autoRechargeAmount", form.get("autoRechargeAmount"), undefined)
    }
  }
  return yield* Schema.decodeUnknownEffect(UpdateWalletBody)(body).pipe(
    Effect.mapError((e) => {
      const { path, message } = firstSchemaIssue(e)
      return new InvalidInput({ message: `${path ?? "policy"}: ${message}`, field: path ?? "policy" })
    })
  )
})

export const OwnerRoutesLive = HttpRouter.addAll([
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId`,
    page(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agentId = yield* param("agentId")
        const request = yield* HttpServerRequest.HttpServerRequest
        const done = new URL(request.url, "http://x").searchParams.get("done")
        // Only fixed texts: nothing from the address is echoed into the page.
        const notice = done !== null && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined
        return yield* agentPage(caller, agentId, yield* filtersOf(request.url), notice ? { notice } : {})
      })
    )
  ),
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/transactions/:transactionId`,
    page(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agent = yield* Effect.flatMap(Keys, (k) => Effect.flatMap(param("agentId"), (id) => k.ownedAgent(caller.accountId, id)))
        const tx = yield* Effect.flatMap(Commerce, (c) => Effect.flatMap(param("transactionId"), (id) => c.getTransaction(agent.id, id)))
        return htmlPage(renderTransactionPage(agent, tx))
      })
    )
  ),
  // Polled by /assets/owner.js: the agent's pending approvals, nothing else (JSON; 401 when signed out).
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/approvals.json`,
    Effect.gen(function* () {
      const caller = yield* ownerSession
      const agentId = yield* param("agentId")
      yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
      const pending = yield* pendingFor(caller, agentId)
      return HttpServerResponse.jsonUnsafe(
        { pending: pending.map((a) => ({ id: a.id, serviceId: a.serviceId, tierId: a.tierId, quotedPriceCents: a.quotedPriceCents, reason: a.reason, createdAt: a.createdAt, expiresAt: a.expiresAt })) },
        { headers: { "cache-control": "no-store" } }
      )
    }).pipe(
      Effect.catch((e: { readonly _tag: string; readonly message?: string }) =>
        Effect.succeed(HttpServerResponse.jsonUnsafe({ type: e._tag === "SignedOut" ? "Unauthorized" : e._tag, message: e.message ?? "sign in again" }, { status: e._tag === "SignedOut" ? 401 : statusOf(e) }))
      )
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/policy`,
    formAction(Effect.fnUntraced(function* (_caller, agentId, form) {
      const body = yield* policyBody(form)
      yield* Effect.flatMap(Wallet, (w) => w.updatePolicy(agentId, body, { byOwner: true }))
      return backTo(agentId, "policy", "policy")
    })
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/topup`,
    formAction(Effect.fnUntraced(function* (_caller, agentId, form) {
      const amountCents = yield* parseDollars("amount", form.get("amount"), 0)
      const idempotency = yield* requestIdempotency
      const checkout = yield* Effect.flatMap(Payments, (p) => p.startRecharge({ agentId, amountCents }, idempotency))
      // To the processor's page (the fake's, or Stripe's); it returns to /checkout/success.
      return HttpServerResponse.empty({ status: 303, headers: { location: checkout.checkoutUrl, "cache-control": "no-store" } })
    })
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/approvals/:approvalId/:decision`,
    formAction(Effect.fnUntraced(function* (caller, agentId, _form) {
      const decision = yield* param("decision")
      const approvalId = yield* param("approvalId")
      if (decision !== "approve" && decision !== "decline") {
        return yield* Effect.fail(new InvalidInput({ message: "decision: must be approve or decline", field: "decision" }))
      }
      const decided = yield* Effect.flatMap(Commerce, (c) => (decision === "approve" ? c.approve(caller, approvalId) : c.decline(caller, approvalId)))
      return backTo(decided.approval.agentId, decision === "approve" ? "approved" : "declined", decision === "approve" ? "transactions" : "approvals")
    })
    )
  )
])

