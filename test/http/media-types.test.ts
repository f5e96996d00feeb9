// Every request gets an answer, whatever its Content-Type: media types that merely contain "json"
// (the hang found on the 3.x line) are refused at once with 415 on a public, a key-authenticated
// and a dashboard write, application/json with any charset is read, and a flood of odd ones leaves
// memory flat.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isJsonMediaType, mediaTypeOf } from "../../src/http/middleware/global.js"
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
    { name: "public sign-in", path: "/api/dashboard/signin", headers: {}, body: { email: "x@example.com", password: "wrong password" } },
    { name: "key-authenticated buy", path: "/api/v1/agent/commerce/buy", headers: agent.auth, body: { serviceId: "svc_code_review", tierId: "starter" } },
    { name: "dashboard write", path: "/api/dashboard/agents", headers: { cookie: agent.cookie }, body: { name: "another agent" } }
  ]

  const post = async (path: string, headers: Record<string, string>, contentType: string, body: unknown) => {
    const started = Date.now()
    const res = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": contentType },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000)
    })
    const text = await res.text()
    return { status: res.status, text, ms: Date.now() - started }
  }

  it("each odd media type gets a 415 naming Content-Type within a second, on every kind of write", async () => {
    for (const t of targets()) {
      for (const contentType of ODD) {
        const r = await post(t.path, t.headers, contentType, t.body)
        expect(r.status, `${t.name} with ${contentType}: ${r.text}`).toBe(415)
        expect(JSON.parse(r.text)).toMatchObject({ type: "UnsupportedMediaType", field: "Content-Type" })
        expect(r.ms, `${t.name} with ${contentType}`).toBeLessThan(1_000)
      }
    }
  })

  it("application/json with a charset parameter is read as JSON", async () => {
    const r = await post("/api/dashboard/signin", {}, "application/json; charset=utf-8", { email: "x@example.com", password: "wrong password" })
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
      for (const r of await Promise.all(batch)) expect(r.status).toBe(415)
    }
    const grownMb = (process.memoryUsage().rss - before) / 1_048_576
    expect(grownMb).toBeLessThan(100)
  }, 60_000)
})
