// The agent dashboard's script (/assets/dashboard.js): sign up or in, create agents and API keys,
// show a new key once, list and revoke keys, over the dashboard JSON API. Every dynamic element is
// built with DOM APIs (textContent, never innerHTML), so nothing from the server is parsed as markup.
import { $, type Account, type Agent, api, ApiError, type ApiKey, input } from "./dashboard/api.js"
import { agentName, clearState, refresh } from "./dashboard/lists.js"
import { bindNewKeyButtons, hideNewKey, showNewKey } from "./dashboard/newKey.js"
import { chosenPermissions, syncCommerce } from "./dashboard/permissions.js"
import { fail, onSubmit, say } from "./dashboard/ui.js"

const showSignedIn = (account: Account) => {
  $("whoami-email").textContent = account.email
  $("whoami").hidden = false
  $("signed-out").hidden = true
  $("signed-in").hidden = false
  return refresh()
}
const showSignedOut = () => {
  clearState()
  hideNewKey()
  $("whoami").hidden = true
  $("signed-in").hidden = true
  $("signed-out").hidden = false
}

onSubmit($<HTMLFormElement>("signin-form"), () =>
  api<{ account: Account }>("POST", "/signin", {
    email: input("signin-email").value.trim(),
    password: input("signin-password").value
  }).then((r) => {
    input("signin-password").value = ""
    say(`Signed in as ${r.account.email}.`)
    return showSignedIn(r.account)
  })
)

onSubmit($<HTMLFormElement>("signup-form"), () => {
  const password = input("signup-password").value
  if (password.length < 10) throw new ApiError(400, "The password must have at least 10 characters.", "password")
  return api<{ account: Account }>("POST", "/signup", {
    name: input("signup-name").value.trim(),
    email: input("signup-email").value.trim(),
    password
  }).then((r) => {
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

/** Dollars typed by a person to integer cents, without floating point; "" is null (no limit). */
const cents = (id: string, label: string): number | null => {
  const raw = input(id).value.trim()
  const text = raw.replace(/,/g, "").replace(/^\$/, "")
  if (text === "") return null
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text)
  if (!m) throw new ApiError(400, `${label}: “${raw}” is not an amount in dollars (such as 25 or 25.50)`, id)
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"))
}

/** The API's field names in a refusal, as the form's labels. */
const LABELS: Readonly<Record<string, string>> = {
  perTransactionLimitCents: "Per purchase",
  dailyLimitCents: "Per day",
  monthlyLimitCents: "Per month",
  approvalThresholdCents: "Ask me above"
}
const inWords = (e: unknown) => {
  if (!(e instanceof ApiError)) throw e
  const m = /^(?:wallet\.)?([A-Za-z]+): (.*)$/s.exec(e.message)
  const label = m ? LABELS[m[1]!] : undefined
  throw label
    ? new ApiError(
        e.status,
        `${label}: ${m![2]!.replace(/\b(\d+) cents\b/g, (_, c: string) => `$${(Number(c) / 100).toFixed(2)}`)}`,
        e.field
      )
    : e
}

onSubmit($<HTMLFormElement>("agent-form"), () => {
  const org = input("agent-org").value.trim()
  const wallet = {
    perTransactionLimitCents: cents("agent-per-tx", "Per purchase"),
    dailyLimitCents: cents("agent-daily", "Per day"),
    monthlyLimitCents: cents("agent-monthly", "Per month"),
    approvalThresholdCents: cents("agent-threshold", "Ask me above") ?? 0,
    autonomyLevel: $<HTMLSelectElement>("agent-autonomy").value
  }
  return api<Agent>("POST", "/agents", {
    name: input("agent-name").value.trim(),
    organization: org === "" ? null : org,
    wallet
  })
    .catch(inWords)
    .then((agent) => {
      input("agent-name").value = ""
      input("agent-org").value = ""
      return refresh().then(() => {
        $<HTMLSelectElement>("key-agent").value = agent.id
        say(`Agent ${agent.name} created with its limits. Create a key for it below.`)
      })
    })
})

input("perm-commerce-all").addEventListener("change", syncCommerce)

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
      say(
        `Key ${created.key.prefix}… created for ${agentName(created.key.agentId)}. ` +
          "Copy it now: it is shown only once."
      )
    })
  })
})

bindNewKeyButtons()

api<{ account: Account }>("GET", "/session")
  .then(
    (r) => showSignedIn(r.account),
    (e: unknown) => {
      if (e instanceof ApiError && e.status === 401) showSignedOut()
      else fail(e)
    }
  )
  .catch(fail)
