// The signed-in owner's agents and keys: the two tables, each agent's webhook health, revoking a key.
import { $, api, type Agent, type ApiKey, type WebhookView } from "./api.js"
import { syncCommerce } from "./permissions.js"
import { cell, clear, codeCell, fail, say, timeCell, when } from "./ui.js"

let state: { agents: ReadonlyArray<Agent>; keys: ReadonlyArray<ApiKey> } = { agents: [], keys: [] }

/** Forgets the lists (signed out). */
export const clearState = () => {
  state = { agents: [], keys: [] }
}

export const agentName = (id: string) => state.agents.find((a) => a.id === id)?.name ?? id

/** Each cell labelled with its column's heading: on a phone the table shows as cards (site.css, table.stack). */
const labelCells = (tableId: string) => {
  const heads = Array.from($(tableId).querySelectorAll("thead th"), (th) => th.textContent?.trim() ?? "")
  for (const tr of Array.from($(tableId).querySelectorAll("tbody tr")))
    Array.from(tr.children).forEach((td, i) => {
      if (heads[i]) td.setAttribute("data-label", heads[i]!)
    })
}

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
  labelCells("agents-table")
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
  labelCells("keys-table")
  $("keys-table").hidden = state.keys.length === 0
  $("keys-empty").hidden = state.keys.length !== 0
}

export const refresh = () =>
  Promise.all([api<ReadonlyArray<Agent>>("GET", "/agents"), api<ReadonlyArray<ApiKey>>("GET", "/keys")]).then(
    ([agents, keys]) => {
      state = {
        agents,
        keys: keys.slice().sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
      }
      renderAgents()
      renderKeys()
    }
  )

const revoke = (k: ApiKey, button: HTMLButtonElement) => {
  if (
    !window.confirm(
      `Revoke key ${k.name} (${k.prefix}…)? Agents using it get 401 on their next request. This cannot be undone.`
    )
  )
    return
  button.disabled = true
  api("POST", `/keys/${encodeURIComponent(k.id)}/revoke`)
    .then(() => refresh().then(() => say(`Key ${k.prefix}… revoked.`)))
    .catch((e: unknown) => {
      button.disabled = false
      fail(e)
    })
}
