// Every request gets an answer, whatever its Content-Type: media types that merely contain "json"
// (the hang found on the 3.x line) are refused at once with 415 on a public, a key-authenticated
// and a dashboard write ("at once": answered while half the body is still unsent), application/json with any charset is read, and a flood of odd ones leaves
// memory flat.
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isJsonMediaType, mediaTypeOf } from "../../src/http/middleware/mediaType.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const ODD = [
  "application/vnd.api+json",
  "application/merge-patch+json",
  "application/problem+json",
  "application/octet-stream; json",
  "multipart/form-data; boundary=json",
  "application/jsonx",
  "text/json-ish",
  "json"
]

describe("media types", () => {
  it("only application/json (any parameters, any case) is JSON", () => {
    expect(isJsonMediaType("application/json")).toBe(true)
    expect(isJsonMediaType("Application/JSON; charset=UTF-8")).toBe(true)
    expect(isJsonMediaType(" application/json ;charset=utf-8")).toBe(true)
    for (const t of [...ODD, undefined, "", "application/", "/json"]) expect(isJsonMediaType(t), String(t)).toBe(false)
    expect(mediaTypeOf("multipart/form-data; boundary=json")).toBe("multipart/form-data")
  })
})

describe("every request is answered, whatever its Content-Type", () => {
  let server: TestServer
  let agent: AgentKey
  beforeAll(async () => {
    server = await startServer({ config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
    agent = await createAgentKey(server.baseUrl, ["catalog:read", "commerce:*"])
  })
  afterAll(() => server.close())

  const targets = (): ReadonlyArray<{ name: string; path: string; headers: Record<string, string>; body: unknown }> => [
    {
      name: "public sign-in",
      path: "/api/dashboard/signin",
      headers: {},
      body: { email: "x@example.com", password: "wrong password" }
    },
    {
      name: "key-authenticated buy",
      path: "/api/v1/agent/commerce/buy",
      headers: agent.auth,
      body: { serviceId: "svc_code_review", tierId: "starter" }
    },
    {
      name: "dashboard write",
      path: "/api/dashboard/agents",
      headers: { cookie: agent.cookie },
      body: { name: "another agent" }
    }
  ]

  // Bounds no answer should come near: a request still unanswered then is a hang, reported as one.
  const NEVER_A_HANG_MS = 15_000

  const post = async (path: string, headers: Record<string, string>, contentType: string, body: unknown) => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": contentType },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(NEVER_A_HANG_MS)
    })
    const text = await res.text()
    return { status: res.status, text }
  }

  /**
   * Sends the headers and half of the body, and keeps the rest: resolves with the answer, which can
   * only come from a server that decided without waiting for the body.
   */
  const postHalf = (path: string, headers: Record<string, string>, contentType: string, body: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const bytes = Buffer.from(JSON.stringify(body))
      const req = httpRequest(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": contentType, "content-length": String(bytes.length) }
      })
      const hang = setTimeout(() => {
        req.destroy()
        reject(new Error(`no answer within ${NEVER_A_HANG_MS} ms while the body was still being sent`))
      }, NEVER_A_HANG_MS)
      req.on("response", (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (d: string) => (text += d))
        res.on("end", () => {
          clearTimeout(hang)
          req.destroy()
          resolve({ status: res.statusCode ?? 0, text })
        })
      })
      req.on("error", (e) => {
        clearTimeout(hang)
        reject(e)
      })
      req.write(bytes.subarray(0, Math.floor(bytes.length / 2)))
    })

  it("each odd media type is refused at once on every kind of write, before the body has arrived: 415 naming Content-Type, 403 for a cookie write", async () => {
    for (const t of targets()) {
      for (const contentType of ODD) {
        const r = await postHalf(t.path, t.headers, contentType, t.body)
        // A cookie-authenticated write that is not JSON is refused as a possible cross-site form.
        const expected =
          "cookie" in t.headers ? { status: 403, type: "Forbidden" } : { status: 415, type: "UnsupportedMediaType" }
        expect(r.status, `${t.name} with ${contentType}: ${r.text}`).toBe(expected.status)
        expect(JSON.parse(r.text)).toMatchObject({ type: expected.type })
        // Sent whole, the same answer.
        expect(
          (await post(t.path, t.headers, contentType, t.body)).status,
          `${t.name} with ${contentType}, whole`
        ).toBe(expected.status)
      }
    }
  })

  it("application/json with a charset parameter is read as JSON", async () => {
    const r = await post("/api/dashboard/signin", {}, "application/json; charset=utf-8", {
      email: "x@example.com",
      password: "wrong password"
    })
    expect(r.status).toBe(401)
  })

  it("1,000 odd requests are all answered and memory stays flat", async () => {
    const before = process.memoryUsage().rss
    const all = targets()
    for (let round = 0; round < 10; round++) {
      const batch = Array.from({ length: 100 }, (_, i) => {
        const t = all[i % all.length]
        return post(t.path, t.headers, ODD[i % ODD.length], t.body)
      })
      for (const r of await Promise.all(batch)) expect([403, 415]).toContain(r.status)
    }
    const grownMb = (process.memoryUsage().rss - before) / 1_048_576
    expect(grownMb).toBeLessThan(150)
  }, 60_000)
})

describe("dashboard writes come from the dashboard (CSRF)", () => {
  let server: TestServer
  let agent: AgentKey
  beforeAll(async () => {
    server = await startServer()
    agent = await createAgentKey(server.baseUrl, ["catalog:read"])
  })
  afterAll(() => server.close())

  const revoke = (headers: Record<string, string>, body?: string) =>
    fetch(`${server.baseUrl}/api/dashboard/keys/${agent.keyId}/revoke`, {
      method: "POST",
      headers: { cookie: agent.cookie, ...headers },
      body
    })
  const keyWorks = async () => (await fetch(`${server.baseUrl}/api/v1/agent/me`, { headers: agent.auth })).status

  it("cross-site forms carrying the session cookie are 403 and the key still works", async () => {
    for (const [headers, body] of [
      [{ "content-type": "text/plain" }, ""],
      [{ "content-type": "application/x-www-form-urlencoded" }, ""],
      [{ "content-type": "application/x-www-form-urlencoded" }, "a=1"],
      [{ "content-type": "multipart/form-data; boundary=x" }, "--x--"],
      [{}, undefined],
      [{ "content-type": "application/json", origin: "https://evil.example" }, ""],
      [{ "content-type": "application/json", "sec-fetch-site": "cross-site" }, ""]
    ] as const) {
      const res = await revoke(headers, body)
      expect(res.status, JSON.stringify(headers)).toBe(403)
      expect(await res.json()).toMatchObject({ type: "Forbidden" })
    }
    expect(await keyWorks()).toBe(200)
  })

  it("the dashboard's own JSON call (same origin, empty body) revokes the key", async () => {
    const res = await revoke({
      "content-type": "application/json",
      origin: server.baseUrl,
      "sec-fetch-site": "same-origin"
    })
    expect(res.status).toBe(200)
    expect(await keyWorks()).toBe(401)
  })

  it("the session cookie is HttpOnly and SameSite=Strict", async () => {
    const res = await fetch(`${server.baseUrl}/api/dashboard/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "csrf-check@example.com", password: "correct horse battery", name: "C" })
    })
    const cookie = res.headers.get("set-cookie") ?? ""
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Strict/)
    expect(cookie).not.toMatch(/Secure/)
  })
})
