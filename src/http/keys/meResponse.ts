// GET /me's answer written as the bytes MeResponse's encoding writes for it, without running that
// encoding per request: the key and agent part is made once per key view (Keys.describeKey gives
// the same view object for a cached key record until the record is replaced, as its last use is
// written), and only the rate-limit standing, which changes with every request, is written each
// time. Every field of MeResponse encodes as itself (strings, integers, literals, nulls), so the
// bytes are JSON.stringify of the fields in the schema's order (test/http/keys.test.ts holds them
// to the schema's own writing); the document still declares MeResponse.
import { HttpServerResponse } from "effect/http"
import type { Agent, ApiKeyView } from "../../schema/keys/keys.js"
import type { WindowStanding } from "../../services/keys/rateLimitPolicy.js"

interface Head {
  readonly agent: Agent
  readonly accountId: string
  /** `{"key":…,"agent":…,"accountId":…` — the answer up to its rate-limit standing. */
  readonly text: string
}

/** Per key view: the answer's head, as long as the same agent and account come with it. */
const heads = new WeakMap<ApiKeyView, Head>()

const headOf = (key: ApiKeyView, agent: Agent, accountId: string): string => {
  const kept = heads.get(key)
  if (kept !== undefined && kept.agent === agent && kept.accountId === accountId) return kept.text
  const whole = JSON.stringify({
    key: {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      permissions: key.permissions,
      createdAt: key.createdAt,
      expiresAt: key.expiresAt,
      lastUsedAt: key.lastUsedAt
    },
    agent: { id: agent.id, name: agent.name, organization: agent.organization },
    accountId
  })
  const text = whole.slice(0, -1)
  heads.set(key, { agent, accountId, text })
  return text
}

const windowText = (w: WindowStanding) =>
  JSON.stringify({
    name: w.name,
    limit: w.limit,
    used: w.used,
    remaining: w.remaining,
    resetSeconds: w.resetSeconds,
    windowSeconds: w.windowSeconds
  })

/** GET /me's 200, with the JSON HttpApi would have written for MeResponse. */
export const meResponse = (me: {
  readonly key: ApiKeyView
  readonly agent: Agent
  readonly accountId: string
  readonly rateLimit: ReadonlyArray<WindowStanding>
}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(
    `${headOf(me.key, me.agent, me.accountId)},"rateLimit":[${me.rateLimit.map(windowText).join(",")}]}`,
    { contentType: "application/json" }
  )
