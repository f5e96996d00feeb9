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

onSubmit($<HTMLFormElement>("agent-form"), () => {
  const org = input("agent-org").value.trim()
  return api<Agent>("POST", "/agents", {
    name: input("agent-name").value.trim(),
    organization: org === "" ? null : org
  }).then((agent) => {
    input("agent-name").value = ""
    input("agent-org").value = ""
    return refresh().then(() => {
      $<HTMLSelectElement>("key-agent").value = agent.id
      say(`Agent ${agent.name} created. Create a key for it below.`)
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
