// The contract machinery itself: the served document is checked on real responses, and a document
// that lies (an undeclared status, a body off its schema, a missing header) is caught.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { contractOf, makeContract } from "../fixtures/contract.js"
import { asOpenApiDocument, type OpenApiDocument, type Parameter } from "../fixtures/openapiDocument.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import { OPENAPI_PATH } from "../../src/http/openapi.js"

let server: TestServer
let doc: OpenApiDocument

beforeAll(async () => {
  server = await startServer()
  doc = asOpenApiDocument(await (await fetch(`${server.baseUrl}${OPENAPI_PATH}`)).json())
})
afterAll(() => server?.close())

const probe = async (
  contract: ReturnType<typeof makeContract>,
  method: string,
  path: string,
  init: RequestInit = {}
) => {
  // Straight to the server: the registered contract (the served document) is not the one under test here.
  const url = new URL(`${server.baseUrl}${path}`)
  const response = await fetch(url, { method, ...init }).catch((e) => e as Error)
  if (response instanceof Error) throw response
  return contract.check(method, url, response, await response.clone().text())
}

describe("the served document", () => {
  it("declares the servers, the error envelope and Idempotency-Key", () => {
    expect(doc.servers).toEqual([{ url: server.baseUrl, description: expect.any(String) }])
    expect(doc.components.schemas.Error.required).toEqual(["_tag", "type", "message", "requestId"])
    expect(doc.paths["/api/v1/agent/commerce/buy"].post?.parameters).toContainEqual({
      $ref: "#/components/parameters/IdempotencyKey"
    })
    expect(Object.keys(doc.paths["/api/v1/agent/commerce/buy"].post?.responses ?? {})).toEqual(
      expect.arrayContaining(["400", "401", "402", "403", "409", "411", "413", "415", "422", "429", "503"])
    )
    const limit = doc.paths["/api/v1/agent/commerce/services"].get?.parameters?.find(
      (p): p is Parameter => "name" in p && p.name === "limit"
    )
    expect(limit?.schema).toEqual({ type: "integer", minimum: 1, maximum: 100 })
  })

  it("fetch() under contract checks each response of a registered server", async () => {
    const contract = contractOf(server.baseUrl)!
    const before = contract.checked
    await fetch(`${server.baseUrl}/health`)
    await fetch(`${server.baseUrl}/api/v1/agent/me`)
    expect(contract.checked).toBe(before + 2)
  })
})

describe("the routes outside the HttpApi", () => {
  it("/docs lists every procedure with its input, output and who may call it; its route count is the discovery document's", async () => {
    const page = await (await fetch(`${server.baseUrl}/docs`)).text()
    const discovery = await (await fetch(`${server.baseUrl}/api/discover`)).json()
    const listed = discovery.api_endpoints.public.length + discovery.api_endpoints.authenticated.length
    const procedures = [...discovery.api_endpoints.public, ...discovery.api_endpoints.authenticated].filter(
      (l: unknown) => JSON.stringify(l).includes("/api/trpc/")
    )
    expect(procedures.length).toBeGreaterThan(5)
    expect(page).toContain(`answers ${listed} routes`)
    expect(doc.info.description).toContain(`answers ${listed} routes`)
    for (const name of [
      "invest.invest",
      "portfolio.holdings",
      "publicApi.purchaseStatus",
      "subscription.createCheckout"
    ])
      expect(doc.info.description).toContain(`| \`${name}\` |`)
    expect(doc.info.description).toMatch(
      /\| `invest\.invest` \|[^\n]*API key with `invest`[^\n]*\| `\{ projectId\?[^\n]*\| `\{ investment: /
    )
    expect(doc.info.description).toContain(`${server.baseUrl}/mcp`)
    expect(doc.info.description).toContain(`${server.baseUrl}/llms.txt`)
  })
})

describe("a lying document is caught", () => {
  it("an undeclared status", async () => {
    const lying = structuredClone(doc)
    delete lying.paths["/api/v1/agent/me"].get!.responses["401"]
    expect(await probe(makeContract(lying), "GET", "/api/v1/agent/me")).toMatch(/status 401 is not declared/)
  })

  it("a body off its schema (an error body without requestId declared closed)", async () => {
    const lying = structuredClone(doc)
    lying.components.schemas.Error.properties = {
      _tag: { type: "string" },
      type: { type: "string" },
      message: { type: "string" }
    }
    lying.components.schemas.Error.additionalProperties = false
    expect(await probe(makeContract(lying), "GET", "/api/v1/agent/me")).toMatch(/does not match agent.me's 401 schema/)
  })

  it("a declared header that is not sent", async () => {
    const lying = structuredClone(doc)
    lying.components.headers.XRequestId = { ...lying.components.headers.XRequestId, required: true }
    lying.paths["/health"].get!.responses["200"].headers!["X-Missing"] = { required: true, schema: { type: "string" } }
    expect(await probe(makeContract(lying), "GET", "/health")).toMatch(/X-Missing is missing/)
  })

  it("the truth passes", async () => {
    const contract = makeContract(doc)
    expect(await probe(contract, "GET", "/api/v1/agent/me")).toBeUndefined()
    expect(await probe(contract, "GET", "/health")).toBeUndefined()
    expect(
      await probe(contract, "POST", "/api/v1/agent/commerce/buy", {
        headers: { "content-type": "text/plain" },
        body: "x"
      })
    ).toBeUndefined()
  })

  it("a known path with another method is 405 with Allow", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/agent/me`, { method: "DELETE" })
    expect(response.status).toBe(405)
    expect(response.headers.get("allow")).toBe("GET")
    expect((await response.json()).type).toBe("MethodNotAllowed")
  })
})
