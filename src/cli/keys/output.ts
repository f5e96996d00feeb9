// The keys CLI's answers on stdout: as text for a person, or as JSON (--json).
import type { Agent, ApiKeyView } from "../../schema/keys/keys.js"

export interface Created {
  readonly account: { readonly id: string; readonly email: string; readonly created: boolean }
  readonly agent: { readonly id: string; readonly name: string; readonly created: boolean }
  readonly key: ApiKeyView
  readonly secret: string
  readonly baseUrl: string
}

const out = (line = "") => process.stdout.write(`${line}\n`)

export const printCreated = (c: Created, json: boolean) => {
  if (json) {
    out(
      JSON.stringify({ account: c.account, agent: c.agent, key: c.key, secret: c.secret, baseUrl: c.baseUrl }, null, 2)
    )
    return
  }
  out(`${c.account.created ? "Created" : "Using"} account ${c.account.email} (${c.account.id})`)
  out(`${c.agent.created ? "Created" : "Using"} agent "${c.agent.name}" (${c.agent.id})`)
  out(`Created API key ${c.key.id} "${c.key.name}"`)
  out(`  permissions: ${c.key.permissions.join(", ")}`)
  out(`  expires:     ${c.key.expiresAt ?? "never"}`)
  out()
  out(`  ${c.secret}`)
  out()
  out("This is the only time the key is shown: only its SHA-256 hash is stored. Keep it secret.")
  out("Send it on every request to the Agent API and the commerce protocol:")
  out(`  Authorization: Bearer ${c.secret}`)
  out(`  curl -H "Authorization: Bearer ${c.secret}" ${c.baseUrl}/api/v1/agent/me`)
}

const keyState = (k: ApiKeyView, now: number) =>
  k.revokedAt ? "revoked" : k.expiresAt && Date.parse(k.expiresAt) <= now ? "expired" : "active"

export const printList = (
  email: string,
  agents: ReadonlyArray<Agent>,
  keys: ReadonlyArray<ApiKeyView>,
  json: boolean
) => {
  if (json) {
    out(JSON.stringify({ email, agents, keys }, null, 2))
    return
  }
  const now = Date.now()
  out(`Account ${email}: ${agents.length} agent(s), ${keys.length} key(s)`)
  for (const a of agents) {
    out()
    out(`agent "${a.name}" ${a.id}${a.organization ? ` (${a.organization})` : ""}`)
    const own = keys.filter((k) => k.agentId === a.id)
    if (own.length === 0) out("  (no keys)")
    for (const k of own) {
      out(`  ${k.id}  ${k.prefix}…  ${keyState(k, now).padEnd(7)}  "${k.name}"`)
      out(`      permissions: ${k.permissions.join(", ")}`)
      out(
        `      created ${k.createdAt} · last used ${k.lastUsedAt ?? "never"} · expires ${k.expiresAt ?? "never"}` +
          (k.revokedAt ? ` · revoked ${k.revokedAt}` : "")
      )
    }
  }
}

export const printRevoked = (k: ApiKeyView, json: boolean) => {
  if (json) out(JSON.stringify({ key: k }, null, 2))
  else out(`Revoked ${k.id} (${k.prefix}…) at ${k.revokedAt}; requests with it now get 401.`)
}
