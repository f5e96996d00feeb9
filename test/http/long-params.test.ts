// A path parameter of any length gets the answer the document gives for it: 400 naming the
// parameter when it is longer than the document allows, never a 405 for a method the route serves;
// a 405 only for a method the path does not serve, and its Allow never names the method sent.
import { afterAll, beforeAll, expect, it } from "vitest"
import { OPENAPI_PATH } from "../../src/http/openapi.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

type Json = Record<string, any>
const METHODS = ["get", "post", "put", "patch", "delete"] as const

describeEachStorage("long path parameters", (storage) => {
  let server: TestServer
  let doc: Json
  let key: AgentKey
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 1_000_000, rateLimitPerDay: 100_000_000, workers: false } })
    doc = await (await fetch(`${server.baseUrl}${OPENAPI_PATH}`)).json()
    key = await createAgentKey(server.baseUrl, ["catalog:read", "evaluate", "acquire", "invest", "create", "commerce:*", "webhooks:manage"])
  })
  afterAll(() => server?.close())

  /** Every templated operation of the document, with its path parameters' schemas. */
  const templated = () =>
    Object.entries(doc.paths as Json).flatMap(([path, item]: [string, Json]) =>
      METHODS.filter((m) => item[m] && path.includes("{")).map((method) => ({
        path,
        method,
        op: item[method] as Json,
        params: ((item[method].parameters ?? []) as Array<Json>).filter((p) => p.in === "path")
      }))
    )

  const send = (method: string, path: string) =>
    fetch(`${server.baseUrl}${path}`, {
      method: method.toUpperCase(),
      // Credentials of every kind, so the parameter is what the answer is about.
      headers: { ...key.auth, cookie: key.cookie, "content-type": "application/json", "checkout-session-id": "cs_x", "stripe-signature": "t=1,v1=x" },
      ...(method === "get" || method === "delete" ? {} : { body: "{}" })
    })

  it("every path parameter declares how long it may be", () => {
    const params = templated().flatMap((o) => o.params.map((p) => `${o.method} ${o.path} ${p.name}: ${JSON.stringify(p.schema)}`))
    expect(params.length).toBeGreaterThan(20)
    for (const p of templated().flatMap((o) => o.params)) expect(typeof p.schema.maxLength, JSON.stringify(p)).toBe("number")
  })

  for (const length of [101, 150, 1000]) {
    it(`a ${length}-character parameter on every templated operation is 400 naming it (or 404 where the document allows it), never 405`, async () => {
      const seen: Array<string> = []
      for (const { path, method, params } of templated()) {
        for (const param of params) {
          const value = "a".repeat(length)
          const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === param.name ? value : "x1"))
          const res = await send(method, url)
          const body = await res.json()
          const at = `${method.toUpperCase()} ${path} with ${param.name} of ${length}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`
          expect(res.status, at).not.toBe(405)
          if (param.schema.maxLength < length) {
            expect(res.status, at).toBe(400)
            expect(body.field, at).toBe(param.name)
          } else expect([400, 401, 402, 403, 404, 409], at).toContain(res.status)
          seen.push(at)
        }
      }
      expect(seen.length).toBeGreaterThan(20)
    })
  }

  it("a method the path does not serve is 405, and Allow names only the methods the document gives it", async () => {
    for (const [path, item] of Object.entries(doc.paths as Json) as Array<[string, Json]>) {
      const served = METHODS.filter((m) => item[m])
      for (const method of METHODS.filter((m) => !item[m])) {
        for (const length of [3, 150]) {
          const url = path.replace(/\{[^}]+\}/g, "a".repeat(length))
          const res = await send(method, url)
          const at = `${method.toUpperCase()} ${url.slice(0, 120)}: ${res.status}`
          const body = await res.json()
          if (res.status === 404) {
            // Another route of the same shape (`/services/{id}` under `/services/{id}/sla`) may answer it, never this one.
            expect(body.type, at).toBe("NotFound")
            continue
          }
          expect(res.status, at).toBe(405)
          const allow = (res.headers.get("allow") ?? "").split(",").map((s) => s.trim().toLowerCase())
          expect(allow, at).not.toContain(method)
          expect(allow.sort(), at).toEqual([...served].sort())
          expect(body.message, at).not.toMatch(new RegExp(`answers .*\\b${method.toUpperCase()}\\b.*, not ${method.toUpperCase()}`))
        }
      }
    }
  })
})
