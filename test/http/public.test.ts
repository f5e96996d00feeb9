// End to end: the four public procedures through curl-style fetch and the stock @trpc/client,
// the JSON error body, request ids, 404s, body limits and the OpenAPI document.
import { createTRPCUntypedClient, httpBatchLink, httpLink, TRPCClientError } from "@trpc/client"
import { Result, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeInput } from "../../src/http/trpc/adapter.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ config: { maxBodyBytes: 4096 } })
})
afterAll(async () => {
  await server?.close()
})

const get = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init)

describe("public procedures over the tRPC wire format", () => {
  it("marketplace.getTemplates returns 16 templates in exactly 8 categories, 85/15", async () => {
    const res = await get("/api/trpc/marketplace.getTemplates")
    expect(res.status).toBe(200)
    const body = (await res.json()) as { result: { data: Array<Record<string, unknown>> } }
    const templates = body.result.data
    expect(templates).toHaveLength(16)
    const categories = new Set(templates.map((t) => t.category))
    expect([...categories].sort()).toEqual([
      "AI & Automation",
      "Communication",
      "Design & Branding",
      "Developer Tools",
      "Finance & Investment",
      "Infrastructure",
      "Marketing & Growth",
      "Productivity"
    ])
    for (const c of categories) expect(templates.filter((t) => t.category === c)).toHaveLength(2)
    for (const t of templates) {
      expect(t.revenue_share_creator).toBe("85%")
      expect(t.revenue_share_platform).toBe("15%")
      expect(typeof t.rating).toBe("number")
      expect(t.id).toMatch(/^[a-z0-9-]+$/)
    }
  })

  it("subscription.getPlans returns the three plans exactly", async () => {
    const body = (await (await get("/api/trpc/subscription.getPlans")).json()) as {
      result: { data: Array<Record<string, unknown>> }
    }
    expect(body.result.data.map((p) => [p.name, p.priceCents, p.credits, p.max_projects])).toEqual([
      ["Starter", 4900, 500, 1],
      ["Pro", 9900, 2500, 5],
      ["Scale", 29900, 10000, "unlimited"]
    ])
  })

  it("publicApi.catalog returns the six knowledge products", async () => {
    const body = (await (await get("/api/trpc/publicApi.catalog")).json()) as {
      result: { data: Array<Record<string, unknown>> }
    }
    expect(body.result.data.map((p) => p.priceInCents)).toEqual([25, 99, 1997, 14997, 49997, 1000000])
    for (const p of body.result.data) {
      expect(Number.isInteger(p.id)).toBe(true)
      expect(p).toMatchObject({ currency: "usd", category: "ai_consultation", isActive: true })
      expect(typeof p.name).toBe("string")
      expect(typeof p.slug).toBe("string")
    }
  })

  it("publicApi.knowledgeBase returns four phases including lua_nova, and the story", async () => {
    const body = (await (await get("/api/trpc/publicApi.knowledgeBase")).json()) as {
      result: { data: { phases: Record<string, Record<string, unknown>>; story: { title: string; quote: string } } }
    }
    const { phases, story } = body.result.data
    expect(Object.keys(phases)).toHaveLength(4)
    expect(phases).toHaveProperty("lua_nova")
    for (const phase of Object.values(phases)) {
      expect(typeof phase.name).toBe("string")
      expect(typeof phase.physiology).toBe("string")
      for (const k of ["femaleSensations", "partnerGuidance", "painScale"]) expect(typeof phase[k]).toBe("object")
    }
    expect(typeof story.title).toBe("string")
    expect(typeof story.quote).toBe("string")
  })

  it("works unmodified with @trpc/client httpLink and httpBatchLink", async () => {
    const single = createTRPCUntypedClient({ links: [httpLink({ url: `${server.baseUrl}/api/trpc` })] })
    const plans = (await single.query("subscription.getPlans")) as Array<{ name: string }>
    expect(plans.map((p) => p.name)).toEqual(["Starter", "Pro", "Scale"])

    const batch = createTRPCUntypedClient({ links: [httpBatchLink({ url: `${server.baseUrl}/api/trpc` })] })
    const [templates, catalog, kb] = (await Promise.all([
      batch.query("marketplace.getTemplates"),
      batch.query("publicApi.catalog"),
      batch.query("publicApi.knowledgeBase")
    ])) as [Array<unknown>, Array<unknown>, { phases: object }]
    expect(templates).toHaveLength(16)
    expect(catalog).toHaveLength(6)
    expect(Object.keys(kb.phases)).toHaveLength(4)

    const err = await single.query("nope.missing").catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TRPCClientError)
    expect((err as TRPCClientError<never>).data).toMatchObject({
      code: "NOT_FOUND",
      httpStatus: 404,
      path: "nope.missing"
    })
  })

  it("an unknown procedure is a tRPC NOT_FOUND with status 404", async () => {
    const res = await get("/api/trpc/nope.missing")
    expect(res.status).toBe(404)
    const body = (await res.json()) as { error: { code: number; data: Record<string, unknown> } }
    expect(body.error.code).toBe(-32004)
    expect(body.error.data).toMatchObject({ code: "NOT_FOUND", httpStatus: 404, path: "nope.missing" })
  })

  it("a batch with a missing procedure answers 207 with per-call results", async () => {
    const res = await get(`/api/trpc/subscription.getPlans,nope.missing?batch=1&input=${encodeURIComponent("{}")}`)
    expect(res.status).toBe(207)
    const body = (await res.json()) as Array<Record<string, unknown>>
    expect(body[0]).toHaveProperty("result")
    expect(body[1]).toHaveProperty("error")
  })

  it("a query called with POST is METHOD_NOT_SUPPORTED", async () => {
    const res = await get("/api/trpc/subscription.getPlans", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" }
    })
    expect(res.status).toBe(405)
  })

  it("malformed input JSON is a BAD_REQUEST naming the input", async () => {
    const res = await get("/api/trpc/subscription.getPlans?input=%7Bnot-json")
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { data: Record<string, unknown> } }
    expect(body.error.data).toMatchObject({ code: "BAD_REQUEST", field: "input" })
  })

  type TrpcErrorBody = { error: { message: string; code: number; data: Record<string, unknown> } }

  it("a missing input on an object-input procedure is a BAD_REQUEST naming the first missing field, as ?input={} is", async () => {
    const none = await get("/api/trpc/publicApi.purchaseStatus")
    expect(none.status).toBe(400)
    const noneBody = (await none.json()) as TrpcErrorBody
    expect(noneBody.error.code).toBe(-32600)
    expect(noneBody.error.message).toBe("sessionId: is missing")
    expect(noneBody.error.data).toMatchObject({
      code: "BAD_REQUEST",
      httpStatus: 400,
      type: "InvalidInput",
      field: "sessionId",
      path: "publicApi.purchaseStatus"
    })
    expect(noneBody.error.message).not.toContain("undefined")

    const empty = await get(`/api/trpc/publicApi.purchaseStatus?input=${encodeURIComponent("{}")}`)
    expect(empty.status).toBe(400)
    expect(((await empty.json()) as TrpcErrorBody).error).toEqual(noneBody.error)

    // A mutation with no body at all, and a batch call without its "0" key, say the same.
    const noBody = await get("/api/trpc/publicApi.purchaseAccess", { method: "POST" })
    expect(noBody.status).toBe(400)
    expect(((await noBody.json()) as TrpcErrorBody).error.data).toMatchObject({
      code: "BAD_REQUEST",
      field: "serviceId"
    })
    const batch = await get("/api/trpc/subscription.getPlans,publicApi.purchaseStatus?batch=1")
    expect(batch.status).toBe(207)
    const [plans, status] = (await batch.json()) as [Record<string, unknown>, TrpcErrorBody]
    expect(plans).toHaveProperty("result")
    expect(status.error.data).toMatchObject({
      code: "BAD_REQUEST",
      field: "sessionId",
      path: "publicApi.purchaseStatus"
    })
  })

  it("a stock @trpc/client query without input gets BAD_REQUEST naming the field", async () => {
    const client = createTRPCUntypedClient({ links: [httpLink({ url: `${server.baseUrl}/api/trpc` })] })
    const err = await client.query("publicApi.purchaseStatus").catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TRPCClientError)
    expect((err as TRPCClientError<never>).message).toBe("sessionId: is missing")
    expect((err as TRPCClientError<never>).data).toMatchObject({
      code: "BAD_REQUEST",
      httpStatus: 400,
      field: "sessionId"
    })
  })

  it("decodeInput: no input is {} for object schemas; other shapes are 'input: is required'; a wrong whole input names 'input'", () => {
    const left = (e: Result.Result<unknown, { message: string; field?: string }>) =>
      Result.isFailure(e) ? { message: e.failure.message, field: e.failure.field } : e.success
    expect(left(decodeInput(Schema.Struct({ sessionId: Schema.String }), undefined))).toEqual({
      message: "sessionId: is missing",
      field: "sessionId"
    })
    expect(left(decodeInput(Schema.Struct({ a: Schema.optional(Schema.String) }), undefined))).toEqual({})
    expect(left(decodeInput(Schema.String, undefined))).toEqual({ message: "input: is required", field: "input" })
    expect(left(decodeInput(Schema.UndefinedOr(Schema.String), undefined))).toBeUndefined()
    expect(left(decodeInput(Schema.Struct({ sessionId: Schema.String }), { sessionId: 1 }))).toMatchObject({
      field: "sessionId"
    })
    // A present input of the wrong shape is named "input" too.
    expect(left(decodeInput(Schema.Struct({ sessionId: Schema.String }), null))).toEqual({
      // Effect 4's issue messages are shorter than 3.x's ("Expected { readonly sessionId: string }, actual null").
      message: "input: Expected object",
      field: "input"
    })
  })
})

describe("the HTTP spine", () => {
  it("unknown routes get a JSON 404 with the one error body and a request id", async () => {
    const res = await get("/definitely/not/here")
    expect(res.status).toBe(404)
    const rid = res.headers.get("x-request-id")
    expect(rid).toMatch(/^req_/)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({ type: "NotFound", requestId: rid })
    expect(typeof body.message).toBe("string")
  })

  it("echoes a sane incoming x-request-id and replaces an unsafe one", async () => {
    const ok = await get("/health", { headers: { "x-request-id": "abc-123" } })
    expect(ok.headers.get("x-request-id")).toBe("abc-123")
    const bad = await get("/health", { headers: { "x-request-id": "bad id with spaces" } })
    expect(bad.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("answers 413 with the error body before reading an oversized body", async () => {
    const res = await get("/api/trpc/subscription.getPlans", {
      method: "POST",
      body: JSON.stringify({ pad: "x".repeat(10_000) }),
      headers: { "content-type": "application/json" }
    })
    expect(res.status).toBe(413)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({ type: "PayloadTooLarge", limitBytes: 4096 })
  })

  it("serves the OpenAPI 3 document and the docs page", async () => {
    const res = await get("/api/v1/agent/openapi.json")
    expect(res.status).toBe(200)
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown>; info: { title: string } }
    expect(doc.openapi).toMatch(/^3\./)
    expect(doc.paths).toHaveProperty("/health")
    const docs = await get("/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    // The page carries the document and loads Scalar's script from /docs/scalar.js (no CDN).
    const page = await docs.text()
    expect(page).toContain('<script src="/docs/scalar.js"></script>')
    expect(page).toContain('"openapi":"3.')
    const script = await get("/docs/scalar.js")
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toContain("application/javascript")
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000)
  })

  it("health reports storage and payments", async () => {
    const res = await get("/health")
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: "ok", storage: "memory", payments: "fake" })
  })
})
