// The agent dashboard page (/agent-dashboard; its script is browser/dashboard.ts): sign up or in,
// create agents and API keys, show a new key once, list and revoke keys — over the dashboard JSON API.
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { agentPermissions, commercePermissions, type Permission, webhookPermissions } from "../../schema/keys/keys.js"
import { PLATFORM } from "../../services/discovery/document.js"
import { html } from "./templates/html.js"
import { layout } from "./templates/layout.js"
import { pageCsp } from "./templates/csp.js"
import { DEFAULT_POLICY } from "../../schema/wallet/policy.js"
import { dollarsField as dollars } from "./owner/format.js"

/** What each permission lets a key do (shown beside its checkbox). */
const permissionHelp: Readonly<Record<Permission, string>> = {
  "catalog:read": "browse the marketplace catalog and project details",
  evaluate: "request AI evaluations of projects",
  acquire: "acquire projects",
  invest: "invest utility tokens and vote",
  create: "create projects and follow their builds",
  "commerce:read": "read services, wallet, transactions, reputation",
  "commerce:buy": "buy services (spends wallet credits)",
  "commerce:sell": "sell services to other agents",
  "commerce:negotiate": "propose prices and answer negotiations",
  "webhooks:manage": "set where this agent's events are sent, rotate the signing secret, read the delivery log"
}

const checkbox = (p: Permission, group: "agent" | "commerce") => {
  const id = `perm-${p.replace(/[^a-z]/g, "-")}`
  return html`<li><input type="checkbox" id="${id}" name="permission" value="${p}" data-group="${group}">
<label for="${id}"><code>${p}</code> <span class="hint">— ${permissionHelp[p]}</span></label></li>\n`
}

/** The page. Static apart from the base URL: all account data is fetched by the script. */
export const renderDashboard = (baseUrl: string, platformName: string): string => {
  const base = baseUrl.replace(/\/+$/, "")
  return layout({
    lang: "en",
    title: `Agent dashboard · ${platformName}`,
    description: `Create agents and API keys for ${platformName}, choose their permissions, and revoke them.`,
    platformName,
    version: PLATFORM.version,
    href: (path) => path,
    langInLinks: false,
    current: "agent-dashboard",
    referrer: "no-referrer",
    wide: true,
    bodyClass: "dashboard",
    scripts: ["/assets/dashboard.js"],
    headerExtra: html`<p id="whoami" class="whoami" hidden>Signed in as <strong id="whoami-email"></strong> <button type="button" id="signout" class="link-button">Sign out</button></p>`,
    main: html`<h1>Agent dashboard</h1>
<p class="lead">Create agents and the API keys they use on the Agent API (<code>${base}/api/v1/agent</code>) and the commerce protocol. Each key carries only the permissions you choose, and can be revoked at any time.</p>
<noscript><p class="msg msg-error">This dashboard needs JavaScript. Without it, create keys with <code>npm run keys -- create --url ${base} …</code> or the JSON endpoints under <code>${base}/api/dashboard</code> (see ${base}/docs).</p></noscript>
<div class="messages">
<p id="status" class="msg msg-status" role="status" aria-live="polite"></p>
<p id="error" class="msg msg-error" role="alert" aria-live="assertive" hidden></p>
</div>

<section id="signed-out" aria-labelledby="signed-out-title">
<h2 id="signed-out-title" class="visually-hidden">Sign in or create an account</h2>
<div class="auth-grid">
<form id="signin-form" class="card" method="post" novalidate>
<h3>Sign in</h3>
<div class="field"><label for="signin-email">E-mail</label>
<input id="signin-email" name="email" type="email" autocomplete="username" required maxlength="254"></div>
<div class="field"><label for="signin-password">Password</label>
<input id="signin-password" name="password" type="password" autocomplete="current-password" required maxlength="200"></div>
<button type="submit" class="primary">Sign in</button>
</form>
<form id="signup-form" class="card" method="post" novalidate>
<h3>Create an account</h3>
<p class="hint">An account is the person or organisation responsible for its agents and everything done with their keys.</p>
<div class="field"><label for="signup-name">Your name or organisation</label>
<input id="signup-name" name="name" type="text" autocomplete="name" required maxlength="120"></div>
<div class="field"><label for="signup-email">E-mail</label>
<input id="signup-email" name="email" type="email" autocomplete="email" required maxlength="254"></div>
<div class="field"><label for="signup-password">Password</label>
<input id="signup-password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="200" aria-describedby="signup-password-hint">
<p class="hint" id="signup-password-hint">At least 10 characters.</p></div>
<button type="submit" class="primary">Create account</button>
</form>
</div>
</section>

<div id="signed-in" hidden>
<section aria-labelledby="agents-title">
<h2 id="agents-title">Agents</h2>
<p>An agent owns its keys, wallet, reputation and projects. Create one per autonomous agent you run. Open an agent (its name) to see its wallet, top it up, set its spending policy, approve its purchases and read its spending and transactions.</p>
<div class="table-wrap" tabindex="0">
<table id="agents-table" class="stack">
<caption class="visually-hidden">Your agents</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Organisation</th><th scope="col">Agent id</th><th scope="col">Created</th><th scope="col">Webhook</th></tr></thead>
<tbody id="agents-body"></tbody>
</table>
</div>
<p id="agents-empty" class="hint" hidden>No agents yet — create your first one below.</p>
<p><a href="/agent-dashboard/overview">Overview: every agent's balance, spend today, approvals waiting and refused purchases →</a></p>
<form id="agent-form" class="card inline-form" method="post" novalidate>
<h3>Create an agent</h3>
<div class="field"><label for="agent-name">Agent name</label>
<input id="agent-name" name="name" type="text" required maxlength="120"></div>
<div class="field"><label for="agent-org">Organisation <span class="hint">(optional)</span></label>
<input id="agent-org" name="organization" type="text" maxlength="120"></div>
<fieldset class="field limits">
<legend>Its first limits <span class="hint">(in dollars; empty = no limit; change them any time on the agent's page)</span></legend>
<div class="limits-grid">
<div class="field"><label for="agent-per-tx">Per purchase</label><input id="agent-per-tx" name="perTransactionLimit" type="text" inputmode="decimal" value="${dollars(DEFAULT_POLICY.perTransactionLimitCents)}"></div>
<div class="field"><label for="agent-daily">Per day</label><input id="agent-daily" name="dailyLimit" type="text" inputmode="decimal" value="${dollars(DEFAULT_POLICY.dailyLimitCents)}"></div>
<div class="field"><label for="agent-monthly">Per month</label><input id="agent-monthly" name="monthlyLimit" type="text" inputmode="decimal" value="${dollars(DEFAULT_POLICY.monthlyLimitCents)}"></div>
<div class="field"><label for="agent-threshold">Ask me above</label><input id="agent-threshold" name="approvalThreshold" type="text" inputmode="decimal" required value="${dollars(DEFAULT_POLICY.approvalThresholdCents)}"></div>
<div class="field"><label for="agent-autonomy">Autonomy</label><select id="agent-autonomy" name="autonomyLevel">
<option value="semi_auto" selected>semi_auto — purchases above “Ask me above” wait for me</option>
<option value="manual">manual — every purchase waits for me</option>
<option value="full_auto">full_auto — buys alone within the limits</option>
</select></div>
</div>
</fieldset>
<button type="submit" class="primary">Create agent</button>
</form>
</section>

<section aria-labelledby="newkey-form-title">
<h2 id="newkey-form-title">Create an API key</h2>
<form id="key-form" class="card" method="post" novalidate>
<div class="field"><label for="key-agent">For agent</label>
<select id="key-agent" name="agent" required></select></div>
<div class="field"><label for="key-name">Key name</label>
<input id="key-name" name="name" type="text" required maxlength="120" value="default" aria-describedby="key-name-hint">
<p class="hint" id="key-name-hint">A label for you, such as where the key is used.</p></div>
<fieldset class="field permissions">
<legend>Permissions <span class="hint">(choose at least one; grant only what the agent needs)</span></legend>
<ul class="checks">
${agentPermissions.map((p) => checkbox(p, "agent"))}
</ul>
<p class="checks-all"><input type="checkbox" id="perm-commerce-all" name="permission" value="commerce:*">
<label for="perm-commerce-all"><code>commerce:*</code> <span class="hint">— all four commerce permissions</span></label></p>
<ul class="checks">
${commercePermissions.map((p) => checkbox(p, "commerce"))}
</ul>
<ul class="checks">
${webhookPermissions.map((p) => checkbox(p, "agent"))}
</ul>
</fieldset>
<div class="field"><label for="key-expires">Expires <span class="hint">(optional)</span></label>
<input id="key-expires" name="expires" type="datetime-local" aria-describedby="key-expires-hint">
<p class="hint" id="key-expires-hint">In your local time zone. Leave empty for a key that does not expire.</p></div>
<button type="submit" class="primary">Create key</button>
</form>

<section id="new-key" class="new-key" hidden aria-labelledby="new-key-title" tabindex="-1">
<h3 id="new-key-title">Your new API key</h3>
<p class="warning"><strong>Copy it now: you will not see it again.</strong> Only a hash of the key is stored, so nobody — not even the operators — can show it to you later. If you lose it, revoke it and create another.</p>
<div class="secret-row">
<label for="new-key-secret" class="visually-hidden">New API key</label>
<input id="new-key-secret" class="secret" type="text" readonly spellcheck="false" autocomplete="off">
<button type="button" id="copy-key" class="primary">Copy key</button>
</div>
<p>Send it on every request as <code>Authorization: Bearer &lt;key&gt;</code>. Try it:</p>
<pre><code id="new-key-example"></code></pre>
<button type="button" id="dismiss-key">I have saved it — hide the key</button>
</section>
</section>

<section aria-labelledby="keys-title">
<h2 id="keys-title">API keys</h2>
<div class="table-wrap" tabindex="0">
<table id="keys-table" class="stack">
<caption class="visually-hidden">Your API keys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Agent</th><th scope="col">Prefix</th><th scope="col">Permissions</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="keys-body"></tbody>
</table>
</div>
<p id="keys-empty" class="hint" hidden>No keys yet.</p>
</section>
</div>
`
  })
}

const CSP = pageCsp({ connect: true, formAction: ["'self'"] })

/** Headers of the page: a strict CSP (scripts and styles from this origin only), no caching, no framing. */
export const dashboardHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": CSP,
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin"
}

export const DashboardRoutesLive = HttpRouter.addAll([
  HttpRouter.route(
    "GET",
    "/agent-dashboard",
    Effect.map(AppConfig, (config) =>
      HttpServerResponse.text(renderDashboard(config.baseUrl, "Agent Commerce"), {
        contentType: "text/html; charset=utf-8",
        headers: dashboardHeaders
      })
    )
  )
])
