// End to end: accounts, agents, keys, /me, 401/403, revocation, expiry and the per-key rate limit.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { MeResponse } from "../../src/http/keys/group.js"
import { createAgentKey, signUp } from "../fixtures/agents.js"
import { asSchemaWrites } from "../fixtures/contract.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ config: { rateLimitPerMinute: 60, rateLimitPerDay: 1000 } })
})
afterAll(async () => {
  await server?.close()
})
// Expiry and the rate limit's windows are read on the wall clock (Date): the tests that depend on
// them set that clock themselves instead of waiting on it.
afterEach(() => {
  vi.useRealTimers()
})
const url = (p: string) => `${server.baseUrl}${p}`
const asMeWrites = asSchemaWrites(MeResponse)

describe("agent API keys", () => {
  it("a key is shown once, has the documented prefix, and /me describes it without the secret", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read", "commerce:*"])
    expect(k.secret).toMatch(/^ak_live_[A-Za-z0-9_-]{43}$/)
    const res = await fetch(url("/api/v1/agent/me"), { headers: k.auth })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain(k.secret)
    const me = JSON.parse(text)
    expect(me.key.id).toBe(k.keyId)
    expect(me.key.prefix).toBe(k.secret.slice(0, 14))
    expect(me.key.permissions).toEqual([
      "catalog:read",
      "commerce:read",
      "commerce:buy",
      "commerce:sell",
      "commerce:negotiate"
    ])
    expect(me.agent.id).toBe(k.agentId)
    expect(me.rateLimit.map((w: { name: string }) => w.name)).toEqual(["minute", "day"])
    expect(res.headers.get("ratelimit-policy")).toBe('"minute";q=60;w=60, "day";q=1000;w=86400')
    expect(res.headers.get("ratelimit")).toMatch(/^"minute";r=59;t=\d+, "day";r=999;t=\d+$/)
  })

  it("/me is the bytes its schema writes, and shows the key's last use and standing as they change", async () => {
    // The clock stands at the start of a minute, so the minute window counts only these requests.
    vi.useFakeTimers({ toFake: ["Date"] })
    const start = Math.ceil((Date.now() + 1) / 60_000) * 60_000
    vi.setSystemTime(start)
    const k = await createAgentKey(server.baseUrl, ["catalog:read"])
    const me = async () => {
      const res = await fetch(url("/api/v1/agent/me"), { headers: k.auth })
      expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/json"])
      const text = await res.text()
      expect(text).toBe(asMeWrites(text))
      return JSON.parse(text) as typeof MeResponse.Type
    }
    const minute = (answer: typeof MeResponse.Type) => answer.rateLimit.find((w) => w.name === "minute")!
    const first = await me()
    expect(first.key.lastUsedAt).toBe(new Date(start).toISOString())
    expect(minute(first)).toMatchObject({ used: 1, remaining: 59 })
    const second = await me()
    expect(second.key).toEqual(first.key)
    expect(minute(second)).toMatchObject({ used: 2, remaining: 58 })
    // A use more than a minute after the last one written is written, and shown on that answer.
    vi.setSystemTime(start + 125_000)
    const later = await me()
    expect(later.key.lastUsedAt).toBe(new Date(start + 125_000).toISOString())
    expect(minute(later)).toMatchObject({ used: 1, remaining: 59 })
    expect(later.agent).toEqual(first.agent)
  })

  it("missing, malformed, unknown keys are 401 with WWW-Authenticate", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: "Basic abc" },
      { authorization: "Bearer ak_live_nope" },
      { authorization: `Bearer ak_live_${"x".repeat(43)}` }
    ]) {
      const res = await fetch(url("/api/v1/agent/me"), { headers })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /)
      const body = await res.json()
      expect(body.type).toBe("Unauthorized")
      expect(body.requestId).toBe(res.headers.get("x-request-id"))
    }
  })

  it("a revoked key is refused on its next request", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read"])
    expect((await fetch(url("/api/v1/agent/me"), { headers: k.auth })).status).toBe(200)
    const revoke = await fetch(url(`/api/dashboard/keys/${k.keyId}/revoke`), {
      method: "POST",
      headers: { cookie: k.cookie, "content-type": "application/json" }
    })
    expect(revoke.status).toBe(200)
    expect((await revoke.json()).revokedAt).toBeTruthy()
    const after = await fetch(url("/api/v1/agent/me"), { headers: k.auth })
    expect(after.status).toBe(401)
    expect((await after.json()).message).toMatch(/revoked/)
  })

  it("keys of another account cannot be revoked (404) and dashboard routes need a session (401)", async () => {
    const a = await createAgentKey(server.baseUrl, ["catalog:read"])
    const other = await signUp(server.baseUrl)
    const res = await fetch(url(`/api/dashboard/keys/${a.keyId}/revoke`), {
      method: "POST",
      headers: { cookie: other.cookie, "content-type": "application/json" }
    })
    expect(res.status).toBe(404)
    expect((await fetch(url("/api/dashboard/keys"))).status).toBe(401)
    const listed = await (await fetch(url("/api/dashboard/keys"), { headers: { cookie: other.cookie } })).json()
    expect(listed).toEqual([])
  })

  it("an expiry in the past is refused; a key past its expiry is 401", async () => {
    const owner = await signUp(server.baseUrl)
    await expect(
      createAgentKey(server.baseUrl, ["catalog:read"], { ...owner, expiresAt: "2001-01-01T00:00:00Z" })
    ).rejects.toThrow(/expiresAt/)
    vi.useFakeTimers({ toFake: ["Date"] })
    const expiresAt = Date.now() + 3_600_000
    const k = await createAgentKey(server.baseUrl, ["catalog:read"], {
      ...owner,
      expiresAt: new Date(expiresAt).toISOString()
    })
    vi.setSystemTime(expiresAt - 1)
    expect((await fetch(url("/api/v1/agent/me"), { headers: k.auth })).status).toBe(200)
    vi.setSystemTime(expiresAt)
    const res = await fetch(url("/api/v1/agent/me"), { headers: k.auth })
    expect(res.status).toBe(401)
    expect((await res.json()).message).toMatch(/expired/)
  })

  it("bad dashboard input is a 400 naming the field", async () => {
    const res = await fetch(url("/api/dashboard/signup"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "not-an-email", password: "correct horse battery", name: "x" })
    })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.field).toBe("email")
    expect(body.type).toBe("InvalidInput")
    const dup = await signUp(server.baseUrl)
    const again = await fetch(url("/api/dashboard/signup"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: dup.email, password: "correct horse battery", name: "x" })
    })
    expect(again.status).toBe(409)
  })

  it("the 61st request in a minute is 429 with Retry-After and RateLimit headers", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read"])
    // Windows are fixed minutes on the wall clock: the clock stands still at the start of the next
    // minute, so all 61 land in one.
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(Math.ceil((Date.now() + 1) / 60_000) * 60_000)
    const statuses: Array<number> = []
    for (let i = 0; i < 60; i++) statuses.push((await fetch(url("/api/v1/agent/me"), { headers: k.auth })).status)
    expect(statuses.every((s) => s === 200)).toBe(true)
    const res = await fetch(url("/api/v1/agent/me"), { headers: k.auth })
    expect(res.status).toBe(429)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(res.headers.get("ratelimit")).toMatch(/"minute";r=0/)
    expect(res.headers.get("ratelimit-policy")).toContain('"minute";q=60;w=60')
    const body = await res.json()
    expect(body).toMatchObject({ type: "RateLimited", window: "minute", limit: 60 })
  })
})
