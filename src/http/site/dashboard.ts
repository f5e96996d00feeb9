// The agent dashboard page (/agent-dashboard) and its script (/assets/dashboard.js): sign up or in,
// create agents and API keys, show a new key once, list and revoke keys — over the dashboard JSON API.
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { AppConfig } from "../../services/AppConfig.js"
import { agentPermissions, commercePermissions, type Permission, webhookPermissions } from "../../schema/keys.js"
import { PLATFORM } from "../../services/Discovery.js"
import { html } from "./templates/html.js"
import { layout } from "./templates/layout.js"

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
<div class="table-wrap">
<table id="agents-table">
<caption class="visually-hidden">Your agents</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Organisation</th><th scope="col">Agent id</th><th scope="col">Created</th><th scope="col">Webhook</th></tr></thead>
<tbody id="agents-body"></tbody>
</table>
</div>
<p id="agents-empty" class="hint" hidden>No agents yet — create your first one below.</p>
<form id="agent-form" class="card inline-form" method="post" novalidate>
<h3>Create an agent</h3>
<div class="field"><label for="agent-name">Agent name</label>
<input id="agent-name" name="name" type="text" required maxlength="120"></div>
<div class="field"><label for="agent-org">Organisation <span class="hint">(optional)</span></label>
<input id="agent-org" name="organization" type="text" maxlength="120"></div>
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
<div class="table-wrap">
<table id="keys-table">
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

/**
 * The page's script. Plain ES2020, no dependencies; builds every dynamic element with DOM APIs
 * (textContent, never innerHTML), so nothing from the server is ever parsed as markup.
 */
export const dashboardScript = String.raw`"use strict";
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var state = { agents: [], keys: [] };

  function ApiError(status, message, field) { this.status = status; this.message = message; this.field = field; }

  function api(method, path, body) {
    var init = { method: method, credentials: "same-origin", headers: { accept: "application/json" } };
    // Every write is JSON, an empty one included: the server refuses cookie writes that are not.
    if (method !== "GET") init.headers["content-type"] = "application/json";
    if (body !== undefined) init.body = JSON.stringify(body);
    return fetch("/api/dashboard" + path, init).then(function (res) {
      if (res.status === 204) return null;
      return res.json().catch(function () { return null; }).then(function (data) {
        if (!res.ok) {
          var message = data && typeof data.message === "string" ? data.message : "request failed (HTTP " + res.status + ")";
          throw new ApiError(res.status, message, data && data.field);
        }
        return data;
      });
    });
  }

  function say(text) { $("error").hidden = true; $("error").textContent = ""; $("status").textContent = text; }
  function fail(err) {
    var text = err && err.message ? err.message : String(err);
    if (err && err.status === 0) text = "network error";
    $("status").textContent = "";
    $("error").textContent = text;
    $("error").hidden = false;
  }

  function when(iso) {
    if (!iso) return null;
    var d = new Date(iso);
    if (isNaN(d.getTime())) return null;
    return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }
  function timeCell(iso, empty) {
    var td = document.createElement("td");
    var text = when(iso);
    if (text) {
      var t = document.createElement("time");
      t.dateTime = iso;
      t.title = iso;
      t.textContent = text;
      td.appendChild(t);
      td.className = "nowrap";
    } else {
      td.textContent = empty;
      td.className = "muted";
    }
    return td;
  }
  function cell(text, className) {
    var td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }
  function codeCell(text) {
    var td = document.createElement("td");
    td.className = "nowrap";
    var c = document.createElement("code");
    c.textContent = text;
    td.appendChild(c);
    return td;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function agentName(id) {
    for (var i = 0; i < state.agents.length; i++) if (state.agents[i].id === id) return state.agents[i].name;
    return id;
  }

  function keyState(k) {
    if (k.revokedAt) return "revoked";
    if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return "expired";
    return "active";
  }

  function renderAgents() {
    var body = $("agents-body");
    clear(body);
    state.agents.forEach(function (a) {
      var tr = document.createElement("tr");
      // The name opens the owner's page of the agent: wallet, policy, approvals, spend, transactions.
      var nameCell = document.createElement("td");
      var link = document.createElement("a");
      link.href = "/agent-dashboard/agents/" + encodeURIComponent(a.id);
      link.textContent = a.name;
      nameCell.appendChild(link);
      tr.appendChild(nameCell);
      tr.appendChild(cell(a.organization || "—", a.organization ? "" : "muted"));
      tr.appendChild(codeCell(a.id));
      tr.appendChild(timeCell(a.createdAt, "—"));
      var hook = cell("…", "muted");
      tr.appendChild(hook);
      body.appendChild(tr);
      loadWebhook(a.id, hook);
    });
    $("agents-table").hidden = state.agents.length === 0;
    $("agents-empty").hidden = state.agents.length !== 0;

    var select = $("key-agent");
    var previous = select.value;
    clear(select);
    state.agents.forEach(function (a) {
      var o = document.createElement("option");
      o.value = a.id;
      o.textContent = a.name + (a.organization ? " (" + a.organization + ")" : "");
      select.appendChild(o);
    });
    if (previous) select.value = previous;
    if (!select.value && state.agents.length > 0) select.value = state.agents[state.agents.length - 1].id;
    var noAgents = state.agents.length === 0;
    Array.prototype.forEach.call($("key-form").elements, function (el) { el.disabled = noAgents; });
    if (!noAgents) syncCommerce();
  }

  /** The agent's webhook health (GET /webhook's view): state, backlog, last error, next attempt. */
  function loadWebhook(agentId, td) {
    api("GET", "/agents/" + encodeURIComponent(agentId) + "/webhook").then(function (w) {
      if (!w) { td.textContent = "none"; return; }
      var parts = [w.status];
      if (w.pendingCount > 0) parts.push(w.pendingCount + " pending, oldest " + w.oldestPendingAgeSeconds + " s");
      if (w.status === "failing" && w.nextAttemptAt) parts.push("next try " + when(w.nextAttemptAt));
      if (w.status === "disabled" && w.disabledReason) parts.push(w.disabledReason);
      if (w.lastError && w.consecutiveFailures > 0) parts.push("last error: " + w.lastError);
      td.textContent = parts.join(" · ");
      td.className = "";
      td.title = w.url;
    }, function () { td.textContent = "—"; });
  }

  function renderKeys() {
    var body = $("keys-body");
    clear(body);
    state.keys.forEach(function (k) {
      var st = keyState(k);
      var tr = document.createElement("tr");
      tr.dataset.keyId = k.id;
      if (st !== "active") tr.className = "inactive";
      tr.appendChild(cell(k.name));
      tr.appendChild(cell(agentName(k.agentId)));
      tr.appendChild(codeCell(k.prefix + "…"));
      var perms = document.createElement("td");
      var list = document.createElement("ul");
      list.className = "perm-list";
      k.permissions.forEach(function (p) {
        var li = document.createElement("li");
        var c = document.createElement("code");
        c.textContent = p;
        li.appendChild(c);
        list.appendChild(li);
      });
      perms.appendChild(list);
      tr.appendChild(perms);
      tr.appendChild(timeCell(k.createdAt, "—"));
      tr.appendChild(timeCell(k.lastUsedAt, "never"));
      tr.appendChild(timeCell(k.expiresAt, "never"));
      var stateCell = document.createElement("td");
      var badge = document.createElement("span");
      badge.className = "badge badge-" + st;
      badge.textContent = st;
      stateCell.appendChild(badge);
      if (k.revokedAt) {
        var small = document.createElement("span");
        small.className = "hint block";
        small.textContent = when(k.revokedAt);
        stateCell.appendChild(small);
      }
      tr.appendChild(stateCell);
      var action = document.createElement("td");
      if (st === "active") {
        var b = document.createElement("button");
        b.type = "button";
        b.className = "danger";
        b.textContent = "Revoke";
        b.setAttribute("aria-label", "Revoke key " + k.name + " (" + k.prefix + "…)");
        b.addEventListener("click", function () { revoke(k, b); });
        action.appendChild(b);
      }
      tr.appendChild(action);
      body.appendChild(tr);
    });
    $("keys-table").hidden = state.keys.length === 0;
    $("keys-empty").hidden = state.keys.length !== 0;
  }

  function refresh() {
    return Promise.all([api("GET", "/agents"), api("GET", "/keys")]).then(function (r) {
      state.agents = r[0];
      state.keys = r[1].slice().sort(function (a, b) { return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0; });
      renderAgents();
      renderKeys();
    });
  }

  function showSignedIn(account) {
    $("whoami-email").textContent = account.email;
    $("whoami").hidden = false;
    $("signed-out").hidden = true;
    $("signed-in").hidden = false;
    return refresh();
  }
  function showSignedOut() {
    state = { agents: [], keys: [] };
    hideNewKey();
    $("whoami").hidden = true;
    $("signed-in").hidden = true;
    $("signed-out").hidden = false;
  }

  function busy(form, on) {
    var b = form.querySelector("button[type=submit]");
    if (b) { b.disabled = on; b.setAttribute("aria-busy", on ? "true" : "false"); }
  }
  function onSubmit(form, handler) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      busy(form, true);
      Promise.resolve().then(handler).catch(fail).then(function () { busy(form, false); });
    });
  }

  onSubmit($("signin-form"), function () {
    return api("POST", "/signin", { email: $("signin-email").value.trim(), password: $("signin-password").value }).then(function (r) {
      $("signin-password").value = "";
      say("Signed in as " + r.account.email + ".");
      return showSignedIn(r.account);
    });
  });

  onSubmit($("signup-form"), function () {
    var password = $("signup-password").value;
    if (password.length < 10) throw new ApiError(400, "The password must have at least 10 characters.", "password");
    return api("POST", "/signup", { name: $("signup-name").value.trim(), email: $("signup-email").value.trim(), password: password }).then(function (r) {
      $("signup-password").value = "";
      say("Account created. Welcome, " + r.account.name + " — now create an agent.");
      return showSignedIn(r.account).then(function () { $("agent-name").focus(); });
    });
  });

  $("signout").addEventListener("click", function () {
    api("POST", "/signout").then(function () { showSignedOut(); say("Signed out."); }).catch(fail);
  });

  onSubmit($("agent-form"), function () {
    var org = $("agent-org").value.trim();
    return api("POST", "/agents", { name: $("agent-name").value.trim(), organization: org === "" ? null : org }).then(function (agent) {
      $("agent-name").value = "";
      $("agent-org").value = "";
      return refresh().then(function () {
        $("key-agent").value = agent.id;
        say("Agent " + agent.name + " created. Create a key for it below.");
      });
    });
  });

  function commerceBoxes() { return document.querySelectorAll("input[data-group=commerce]"); }
  function syncCommerce() {
    var all = $("perm-commerce-all").checked;
    Array.prototype.forEach.call(commerceBoxes(), function (box) {
      if (all) box.checked = true;
      box.disabled = all;
    });
  }
  $("perm-commerce-all").addEventListener("change", syncCommerce);

  function chosenPermissions() {
    if ($("perm-commerce-all").checked) {
      var out = ["commerce:*"];
      document.querySelectorAll("input[data-group=agent]:checked").forEach(function (b) { out.push(b.value); });
      return out;
    }
    var list = [];
    document.querySelectorAll("input[data-group]:checked").forEach(function (b) { list.push(b.value); });
    return list;
  }

  onSubmit($("key-form"), function () {
    var permissions = chosenPermissions();
    if (permissions.length === 0) throw new ApiError(400, "Choose at least one permission.", "permissions");
    var expires = $("key-expires").value;
    var expiresAt = null;
    if (expires) {
      var at = new Date(expires);
      if (isNaN(at.getTime())) throw new ApiError(400, "The expiry is not a valid date and time.", "expiresAt");
      expiresAt = at.toISOString();
    }
    var agentId = $("key-agent").value;
    return api("POST", "/agents/" + encodeURIComponent(agentId) + "/keys", { name: $("key-name").value.trim(), permissions: permissions, expiresAt: expiresAt })
      .then(function (created) {
        showNewKey(created.secret);
        return refresh().then(function () {
          say("Key " + created.key.prefix + "… created for " + agentName(created.key.agentId) + ". Copy it now: it is shown only once.");
        });
      });
  });

  function showNewKey(secret) {
    $("new-key-secret").value = secret;
    $("new-key-example").textContent = "curl -H \"Authorization: Bearer " + secret + "\" " + location.origin + "/api/v1/agent/me";
    $("new-key").hidden = false;
    $("new-key").focus();
    $("new-key-secret").select();
  }
  function hideNewKey() {
    $("new-key-secret").value = "";
    $("new-key-example").textContent = "";
    $("new-key").hidden = true;
  }
  $("dismiss-key").addEventListener("click", function () { hideNewKey(); say("The key is hidden. It cannot be shown again."); });

  $("copy-key").addEventListener("click", function () {
    var input = $("new-key-secret");
    var button = $("copy-key");
    var done = function () {
      say("Key copied to the clipboard.");
      button.textContent = "Copied ✓";
      setTimeout(function () { button.textContent = "Copy key"; }, 2500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () {
        input.select();
        fail(new ApiError(0, "Could not copy automatically: the key is selected, press Ctrl+C (or Cmd+C)."));
      });
    } else {
      input.select();
      try { if (document.execCommand("copy")) { done(); return; } } catch (e) { /* fall through */ }
      fail(new ApiError(0, "Could not copy automatically: the key is selected, press Ctrl+C (or Cmd+C)."));
    }
  });

  function revoke(k, button) {
    if (!window.confirm("Revoke key " + k.name + " (" + k.prefix + "…)? Agents using it get 401 on their next request. This cannot be undone.")) return;
    button.disabled = true;
    api("POST", "/keys/" + encodeURIComponent(k.id) + "/revoke").then(function () {
      return refresh().then(function () { say("Key " + k.prefix + "… revoked."); });
    }).catch(function (e) { button.disabled = false; fail(e); });
  }

  api("GET", "/session").then(function (r) { return showSignedIn(r.account); }, function (e) {
    if (e.status === 401) showSignedOut(); else fail(e);
  }).catch(fail);
})();
`

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")

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
  ),
  HttpRouter.route(
    "GET",
    "/assets/dashboard.js",
    Effect.succeed(
      HttpServerResponse.text(dashboardScript, {
        contentType: "text/javascript; charset=utf-8",
        headers: { "cache-control": "no-cache" }
      })
    )
  )
])
