// The agent dashboard's script (/assets/dashboard.js): sign up or in, create agents and API keys,
// show a new key once, list and revoke keys, over the dashboard JSON API. Every dynamic element is
// built with DOM APIs (textContent, never innerHTML), so nothing from the server is parsed as markup.

interface Account {
  readonly email: string
  readonly name: string
}
interface Agent {
  readonly id: string
  readonly name: string
  readonly organization: string | null
  readonly createdAt: string
}
interface ApiKey {
  readonly id: string
  readonly agentId: string
  readonly name: string
  readonly prefix: string
  readonly permissions: ReadonlyArray<string>
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly expiresAt: string | null
  readonly revokedAt: string | null
}
interface WebhookView {
  readonly url: string
  readonly status: string
  readonly pendingCount: number
  readonly oldestPendingAgeSeconds: number
  readonly nextAttemptAt: string | null
  readonly disabledReason: string | null
  readonly lastError: string | null
  readonly consecutiveFailures: number
}

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T
const input = (id: string) => $<HTMLInputElement>(id)

let state: { agents: ReadonlyArray<Agent>; keys: ReadonlyArray<ApiKey> } = { agents: [], keys: [] }

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string
  ) {
    super(message)
  }
}

const api = <T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json" }
  // Every write is JSON, an empty one included: the server refuses cookie writes that are not.
  if (method !== "GET") headers["content-type"] = "application/json"
  const init: RequestInit = { method, credentials: "same-origin", headers }
  if (body !== undefined) init.body = JSON.stringify(body)
  return fetch(`/api/dashboard${path}`, init).then((res) => {
    if (res.status === 204) return null as T
    return res
      .json()
      .catch(() => null)
      .then((data: { message?: unknown; field?: string } | null) => {
        if (!res.ok) {
          const message = data && typeof data.message === "string" ? data.message : `request failed (HTTP ${res.status})`
          throw new ApiError(res.status, message, data?.field)
        }
        return data as T
      })
  })
}

const say = (text: string) => {
  $("error").hidden = true
  $("error").textContent = ""
  $("status").textContent = text
}
const fail = (err: unknown) => {
  let text = err instanceof Error ? err.message : String(err)
  if (err instanceof ApiError && err.status === 0 && text === "") text = "network error"
  $("status").textContent = ""
  $("error").textContent = text
  $("error").hidden = false
}

const when = (iso: string | null): string | null => {
  if (!iso) return null
  const d = new Date(iso)
  if (isNaN(d.getTime())) return null
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`
}
const timeCell = (iso: string | null, empty: string) => {
  const td = document.createElement("td")
  const text = when(iso)
  if (iso && text) {
    const t = document.createElement("time")
    t.dateTime = iso
    t.title = iso
    t.textContent = text
    td.appendChild(t)
    td.className = "nowrap"
  } else {
    td.textContent = empty
    td.className = "muted"
  }
  return td
}
const cell = (text: string, className?: string) => {
  const td = document.createElement("td")
  td.textContent = text
  if (className) td.className = className
  return td
}
const codeCell = (text: string) => {
  const td = document.createElement("td")
  td.className = "nowrap"
  const c = document.createElement("code")
  c.textContent = text
  td.appendChild(c)
  return td
}
const clear = (node: Node) => {
  while (node.firstChild) node.removeChild(node.firstChild)
}

const agentName = (id: string) => state.agents.find((a) => a.id === id)?.name ?? id

const keyState = (k: ApiKey) => {
  if (k.revokedAt) return "revoked"
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return "expired"
  return "active"
}

/** The agent's webhook health (GET /webhook's view): state, backlog, last error, next attempt. */
const loadWebhook = (agentId: string, td: HTMLTableCellElement) => {
  api<WebhookView | null>("GET", `/agents/${encodeURIComponent(agentId)}/webhook`).then(
    (w) => {
      if (!w) {
        td.textContent = "none"
        return
      }
      const parts = [w.status]
      if (w.pendingCount > 0) parts.push(`${w.pendingCount} pending, oldest ${w.oldestPendingAgeSeconds} s`)
      if (w.status === "failing" && w.nextAttemptAt) parts.push(`next try ${when(w.nextAttemptAt)}`)
      if (w.status === "disabled" && w.disabledReason) parts.push(w.disabledReason)
      if (w.lastError && w.consecutiveFailures > 0) parts.push(`last error: ${w.lastError}`)
      td.textContent = parts.join(" · ")
      td.className = ""
      td.title = w.url
    },
    () => {
      td.textContent = "—"
    }
  )
}

const renderAgents = () => {
  const body = $("agents-body")
  clear(body)
  for (const a of state.agents) {
    const tr = document.createElement("tr")
    // The name opens the owner's page of the agent: wallet, policy, approvals, spend, transactions.
    const nameCell = document.createElement("td")
    const link = document.createElement("a")
    link.href = `/agent-dashboard/agents/${encodeURIComponent(a.id)}`
    link.textContent = a.name
    nameCell.appendChild(link)
    tr.appendChild(nameCell)
    tr.appendChild(cell(a.organization || "—", a.organization ? "" : "muted"))
    tr.appendChild(codeCell(a.id))
    tr.appendChild(timeCell(a.createdAt, "—"))
    const hook = cell("…", "muted")
    tr.appendChild(hook)
    body.appendChild(tr)
    loadWebhook(a.id, hook)
  }
  $("agents-table").hidden = state.agents.length === 0
  $("agents-empty").hidden = state.agents.length !== 0

  const select = $<HTMLSelectElement>("key-agent")
  const previous = select.value
  clear(select)
  for (const a of state.agents) {
    const o = document.createElement("option")
    o.value = a.id
    o.textContent = a.name + (a.organization ? ` (${a.organization})` : "")
    select.appendChild(o)
  }
  if (previous) select.value = previous
  if (!select.value && state.agents.length > 0) select.value = state.agents[state.agents.length - 1]!.id
  const noAgents = state.agents.length === 0
  for (const el of Array.from($<HTMLFormElement>("key-form").elements)) (el as HTMLInputElement).disabled = noAgents
  if (!noAgents) syncCommerce()
}

const renderKeys = () => {
  const body = $("keys-body")
  clear(body)
  for (const k of state.keys) {
    const st = keyState(k)
    const tr = document.createElement("tr")
    tr.dataset.keyId = k.id
    if (st !== "active") tr.className = "inactive"
    tr.appendChild(cell(k.name))
    tr.appendChild(cell(agentName(k.agentId)))
    tr.appendChild(codeCell(`${k.prefix}…`))
    const perms = document.createElement("td")
    const list = document.createElement("ul")
    list.className = "perm-list"
    for (const p of k.permissions) {
      const li = document.createElement("li")
      const c = document.createElement("code")
      c.textContent = p
      li.appendChild(c)
      list.appendChild(li)
    }
    perms.appendChild(list)
    tr.appendChild(perms)
    tr.appendChild(timeCell(k.createdAt, "—"))
    tr.appendChild(timeCell(k.lastUsedAt, "never"))
    tr.appendChild(timeCell(k.expiresAt, "never"))
    const stateCell = document.createElement("td")
    const badge = document.createElement("span")
    badge.className = `badge badge-${st}`
    badge.textContent = st
    stateCell.appendChild(badge)
    if (k.revokedAt) {
      const small = document.createElement("span")
      small.className = "hint block"
      small.textContent = when(k.revokedAt)
      stateCell.appendChild(small)
    }
    tr.appendChild(stateCell)
    const action = document.createElement("td")
    if (st === "active") {
      const b = document.createElement("button")
      b.type = "button"
      b.className = "danger"
      b.textContent = "Revoke"
      b.setAttribute("aria-label", `Revoke key ${k.name} (${k.prefix}…)`)
      b.addEventListener("click", () => revoke(k, b))
      action.appendChild(b)
    }
    tr.appendChild(action)
    body.appendChild(tr)
  }
  $("keys-table").hidden = state.keys.length === 0
  $("keys-empty").hidden = state.keys.length !== 0
}

const refresh = () =>
  Promise.all([api<ReadonlyArray<Agent>>("GET", "/agents"), api<ReadonlyArray<ApiKey>>("GET", "/keys")]).then(([agents, keys]) => {
    state = { agents, keys: keys.slice().sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)) }
    renderAgents()
    renderKeys()
  })

const showSignedIn = (account: Account) => {
  $("whoami-email").textContent = account.email
  $("whoami").hidden = false
  $("signed-out").hidden = true
  $("signed-in").hidden = false
  return refresh()
}
const showSignedOut = () => {
  state = { agents: [], keys: [] }
  hideNewKey()
  $("whoami").hidden = true
  $("signed-in").hidden = true
  $("signed-out").hidden = false
}

const busy = (form: HTMLFormElement, on: boolean) => {
  const b = form.querySelector<HTMLButtonElement>("button[type=submit]")
  if (b) {
    b.disabled = on
    b.setAttribute("aria-busy", on ? "true" : "false")
  }
}
const onSubmit = (form: HTMLFormElement, handler: () => unknown) => {
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    busy(form, true)
    Promise.resolve()
      .then(handler)
      .catch(fail)
      .then(() => busy(form, false))
  })
}

onSubmit($<HTMLFormElement>("signin-form"), () =>
  api<{ account: Account }>("POST", "/signin", { email: input("signin-email").value.trim(), password: input("signin-password").value }).then((r) => {
    input("signin-password").value = ""
    say(`Signed in as ${r.account.email}.`)
    return showSignedIn(r.account)
  })
)

onSubmit($<HTMLFormElement>("signup-form"), () => {
  const password = input("signup-password").value
  if (password.length < 10) throw new ApiError(400, "The password must have at least 10 characters.", "password")
  return api<{ account: Account }>("POST", "/signup", { name: input("signup-name").value.trim(), email: input("signup-email").value.trim(), password }).then((r) => {
    input("signup-password").value = ""
    say(`Account created. Welcome, ${r.account.name} — now create an agent.`)
    return showSignedIn(r.account).then(() => input("agent-name").focus())
  })
})

$("signout").addEventListener("click", () => {
  api("POST", "/signout")
    .then(() => {
      showSignedOut()
      say("Signed out.")
    })
    .catch(fail)
})

onSubmit($<HTMLFormElement>("agent-form"), () => {
  const org = input("agent-org").value.trim()
  return api<Agent>("POST", "/agents", { name: input("agent-name").value.trim(), organization: org === "" ? null : org }).then((agent) => {
    input("agent-name").value = ""
    input("agent-org").value = ""
    return refresh().then(() => {
      $<HTMLSelectElement>("key-agent").value = agent.id
      say(`Agent ${agent.name} created. Create a key for it below.`)
    })
  })
})

const commerceBoxes = () => document.querySelectorAll<HTMLInputElement>("input[data-group=commerce]")
function syncCommerce() {
  const all = input("perm-commerce-all").checked
  for (const box of Array.from(commerceBoxes())) {
    if (all) box.checked = true
    box.disabled = all
  }
}
input("perm-commerce-all").addEventListener("change", syncCommerce)

const chosenPermissions = (): Array<string> => {
  const checked = (selector: string) => Array.from(document.querySelectorAll<HTMLInputElement>(selector)).map((b) => b.value)
  if (input("perm-commerce-all").checked) return ["commerce:*", ...checked("input[data-group=agent]:checked")]
  return checked("input[data-group]:checked")
}

onSubmit($<HTMLFormElement>("key-form"), () => {
  const permissions = chosenPermissions()
  if (permissions.length === 0) throw new ApiError(400, "Choose at least one permission.", "permissions")
  const expires = input("key-expires").value
  let expiresAt: string | null = null
  if (expires) {
    const at = new Date(expires)
    if (isNaN(at.getTime())) throw new ApiError(400, "The expiry is not a valid date and time.", "expiresAt")
    expiresAt = at.toISOString()
  }
  const agentId = $<HTMLSelectElement>("key-agent").value
  return api<{ secret: string; key: ApiKey }>("POST", `/agents/${encodeURIComponent(agentId)}/keys`, {
    name: input("key-name").value.trim(),
    permissions,
    expiresAt
  }).then((created) => {
    showNewKey(created.secret)
    return refresh().then(() => {
      say(`Key ${created.key.prefix}… created for ${agentName(created.key.agentId)}. Copy it now: it is shown only once.`)
    })
  })
})

const showNewKey = (secret: string) => {
  input("new-key-secret").value = secret
  $("new-key-example").textContent = `curl -H "Authorization: Bearer ${secret}" ${location.origin}/api/v1/agent/me`
  $("new-key").hidden = false
  $("new-key").focus()
  input("new-key-secret").select()
}
function hideNewKey() {
  input("new-key-secret").value = ""
  $("new-key-example").textContent = ""
  $("new-key").hidden = true
}
$("dismiss-key").addEventListener("click", () => {
  hideNewKey()
  say("The key is hidden. It cannot be shown again.")
})

$("copy-key").addEventListener("click", () => {
  const secret = input("new-key-secret")
  const button = $("copy-key")
  const done = () => {
    say("Key copied to the clipboard.")
    button.textContent = "Copied ✓"
    setTimeout(() => {
      button.textContent = "Copy key"
    }, 2500)
  }
  const manual = () => {
    secret.select()
    fail(new ApiError(0, "Could not copy automatically: the key is selected, press Ctrl+C (or Cmd+C)."))
  }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(secret.value).then(done, manual)
  } else {
    secret.select()
    try {
      if (document.execCommand("copy")) {
        done()
        return
      }
    } catch {
      // fall through to the manual copy
    }
    manual()
  }
})

const revoke = (k: ApiKey, button: HTMLButtonElement) => {
  if (!window.confirm(`Revoke key ${k.name} (${k.prefix}…)? Agents using it get 401 on their next request. This cannot be undone.`)) return
  button.disabled = true
  api("POST", `/keys/${encodeURIComponent(k.id)}/revoke`)
    .then(() => refresh().then(() => say(`Key ${k.prefix}… revoked.`)))
    .catch((e: unknown) => {
      button.disabled = false
      fail(e)
    })
}

api<{ account: Account }>("GET", "/session")
  .then(
    (r) => showSignedIn(r.account),
    (e: unknown) => {
      if (e instanceof ApiError && e.status === 401) showSignedOut()
      else fail(e)
    }
  )
  .catch(fail)

export {}
