// A path parameter of any length gets the answer the document gives for it: 400 naming the
// parameter when it is longer than the document allows, never a 405 for a method the route serves;
// a 405 only for a method the path does not serve, and its Allow never names the method sent.
import { afterAll, beforeAll, expect, it } from "vitest"
import { OPENAPI_PATH } from "../../src/http/openapi.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import { asOpenApiDocument, isReference, type OpenApiDocument, type Parameter } from "../fixtures/openapiDocument.js"

const METHODS = ["get", "post", "put", "patch", "delete"] as const
/** An error answer's fields these tests read. */
type ErrorBody = { readonly field?: string; readonly type?: string; readonly message?: string }

describeEachStorage("long path parameters", { concurrent: "storages" }, (storage) => {
  let server: TestServer
  let doc: OpenApiDocument
  let key: AgentKey
  beforeAll(async () => {
    server = await startServer({
      storage,
      config: { rateLimitPerMinute: 1_000_000, rateLimitPerDay: 100_000_000, workers: false }
    })
    doc = asOpenApiDocument(await (await fetch(`${server.baseUrl}${OPENAPI_PATH}`)).json())
    key = await createAgentKey(server.baseUrl, [
      "catalog:read",
      "evaluate",
      "acquire",
      "invest",
      "create",
      "commerce:*",
      "webhooks:manage"
    ])
  })
  afterAll(() => server?.close())

  /** Every templated operation of the document, with its path parameters' schemas. */
  const templated = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.flatMap((method) => {
        const op = item[method]
        if (!op || !path.includes("{")) return []
        return [
          {
            path,
            method,
            op,
            params: (op.parameters ?? []).filter((p): p is Parameter => !isReference(p) && p.in === "path")
          }
        ]
      })
    )

  const send = (method: string, path: string) =>
    fetch(`${server.baseUrl}${path}`, {
      method: method.toUpperCase(),
      // Credentials of every kind, so the parameter is what the answer is about.
      headers: {
        ...key.auth,
        cookie: key.cookie,
        "content-type": "application/json",
        "checkout-session-id": "cs_x",
        "stripe-signature": "t=1,v1=x"
      },
      ...(method === "get" || method === "delete" ? {} : { body: "{}" })
    })

  it("every path parameter declares how long it may be", () => {
    const params = templated().flatMap((o) =>
      o.params.map((p) => `${o.method} ${o.path} ${p.name}: ${JSON.stringify(p.schema)}`)
    )
    expect(params.length).toBeGreaterThan(20)
    for (const p of templated().flatMap((o) => o.params))
      expect(typeof p.schema?.maxLength, JSON.stringify(p)).toBe("number")
  })

  for (const length of [101, 150, 1000]) {
    it(`a ${length}-character parameter on every templated operation is 400 naming it (or 404 where the document allows it), never 405`, async () => {
      const seen: Array<string> = []
      for (const { path, method, params } of templated()) {
        for (const param of params) {
          const value = "a".repeat(length)
          const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === param.name ? value : "x1"))
          const res = await send(method, url)
          const body = (await res.json()) as ErrorBody
          const at = `${method.toUpperCase()} ${path} with ${param.name} of ${length}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`
          expect(res.status, at).not.toBe(405)
          // Longer than the document allows: 400 naming the parameter; otherwise the route's own answer.
          const tooLong = (param.schema?.maxLength ?? Number.POSITIVE_INFINITY) < length
          expect(tooLong ? [400] : [400, 401, 402, 403, 404, 409], at).toContain(res.status)
          expect(tooLong ? body.field : param.name, at).toBe(param.name)
          seen.push(at)
        }
      }
      expect(seen.length).toBeGreaterThan(20)
    })
  }

  it("a method the path does not serve is 405, and Allow names only the methods the document gives it", async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const served = METHODS.filter((m) => item[m])
      for (const method of METHODS.filter((m) => !item[m])) {
        for (const length of [3, 150]) {
          const url = path.replace(/\{[^}]+\}/g, "a".repeat(length))
          const res = await send(method, url)
          const at = `${method.toUpperCase()} ${url.slice(0, 120)}: ${res.status}`
          const body = (await res.json()) as ErrorBody
          // 405, or a 404 from another route of the same shape (`/services/{id}` under `/services/{id}/sla`), never this one.
          expect([404, 405], at).toContain(res.status)
          expect(res.status === 404 ? body.type : "NotFound", at).toBe("NotFound")
          if (res.status === 404) continue
          const allow = (res.headers.get("allow") ?? "").split(",").map((s) => s.trim().toLowerCase())
          expect(allow, at).not.toContain(method)
          expect(allow.sort(), at).toEqual([...served].sort())
          expect(body.message, at).not.toMatch(
            new RegExp(`answers .*\\b${method.toUpperCase()}\\b.*, not ${method.toUpperCase()}`)
          )
        }
      }
    }
  })
})
