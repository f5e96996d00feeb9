// End to end: the MCP endpoint with the stock @modelcontextprotocol/sdk client over Streamable HTTP —
// tools/list equals the published tool list; tool calls run the REST routes with the caller's key.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../src/http/api.js"
import { toRouteRequest } from "../../src/http/descriptors/toolRequest.js"
import { toolsFromApi } from "../../src/http/descriptors/tools.js"
import { createAgentKey } from "../fixtures/agents.js"
import { setClock } from "../fixtures/clock.js"
import { startRuntimeServer } from "../fixtures/runtimeServer.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import { eventually } from "../fixtures/wait.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ config: { negotiationDelayMs: 50, rateLimitPerMinute: 1000, rateLimitPerDay: 10_000 } })
})
afterAll(async () => {
  await server?.close()
})
const url = (p: string) => `${server.baseUrl}${p}`

const connect = async (secret: string) => {
  const client = new Client({ name: "mcp-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(url("/mcp")), {
    requestInit: { headers: { authorization: `Bearer ${secret}` } }
  })
  await client.connect(transport)
  return client
}

/**
 * The published tools, restated by hand from docs/mcp.md ("Tools": one per agent/commerce route, the
 * endpoint's name in snake_case, prefixed with its group when two groups share the name): a new route
 * is a new row here.
 */
const EXPECTED_TOOLS: ReadonlyArray<readonly [name: string, method: string, path: string]> = [
  ["me", "GET", "/api/v1/agent/me"],
  ["catalog", "GET", "/api/v1/agent/catalog"],
  ["catalog_project", "GET", "/api/v1/agent/catalog/:id"],
  ["evaluate", "POST", "/api/v1/agent/evaluate"],
  ["acquire", "POST", "/api/v1/agent/acquire"],
  ["create", "POST", "/api/v1/agent/create"],
  ["status", "GET", "/api/v1/agent/status/:id"],
  ["session", "POST", "/api/v1/agent/session"],
  ["get_session", "GET", "/api/v1/agent/session/:id"],
  ["webhooks_put", "PUT", "/api/v1/agent/webhook"],
  ["webhooks_get", "GET", "/api/v1/agent/webhook"],
  ["webhooks_remove", "DELETE", "/api/v1/agent/webhook"],
  ["rotate_secret", "POST", "/api/v1/agent/webhook/rotate-secret"],
  ["webhooks_test", "POST", "/api/v1/agent/webhook/test"],
  ["webhooks_deliveries", "GET", "/api/v1/agent/webhook/deliveries"],
  ["webhooks_events", "GET", "/api/v1/agent/webhook/events"],
  ["invest", "POST", "/api/v1/agent/invest"],
  ["portfolio", "GET", "/api/v1/agent/portfolio"],
  ["create_proposal", "POST", "/api/v1/agent/proposals"],
  ["list_proposals", "GET", "/api/v1/agent/proposals"],
  ["get_proposal", "GET", "/api/v1/agent/proposals/:id"],
  ["negotiate", "POST", "/api/v1/agent/commerce/negotiate"],
  ["respond", "POST", "/api/v1/agent/commerce/negotiate/:id/respond"],
  ["negotiations", "GET", "/api/v1/agent/commerce/negotiations"],
  ["negotiation", "GET", "/api/v1/agent/commerce/negotiations/:id"],
  ["saga", "POST", "/api/v1/agent/commerce/saga"],
  ["get_saga", "GET", "/api/v1/agent/commerce/saga/:id"],
  ["mpp_discovery", "GET", "/api/v1/agent/commerce/mpp"],
  ["mpp_health", "GET", "/api/v1/agent/commerce/mpp/health"],
  ["mpp_invoke", "POST", "/api/v1/agent/commerce/services/:id/invoke"],
  ["x402_payment", "GET", "/api/v1/agent/commerce/x402/payments/:id"],
  ["list_services", "GET", "/api/v1/agent/commerce/services"],
  ["get_service", "GET", "/api/v1/agent/commerce/services/:id"],
  ["service_sla", "GET", "/api/v1/agent/commerce/services/:id/sla"],
  ["publish_service", "POST", "/api/v1/agent/commerce/services"],
  ["update_service", "PATCH", "/api/v1/agent/commerce/services/:id"],
  ["recommend", "GET", "/api/v1/agent/commerce/recommend"],
  ["wallet", "GET", "/api/v1/agent/commerce/wallet"],
  ["update_wallet", "PATCH", "/api/v1/agent/commerce/wallet"],
  ["topup", "POST", "/api/v1/agent/commerce/wallet/topup"],
  ["buy", "POST", "/api/v1/agent/commerce/buy"],
  ["approvals", "GET", "/api/v1/agent/commerce/approvals"],
  ["withdraw_approval", "POST", "/api/v1/agent/commerce/approvals/:id/withdraw"],
  ["transactions", "GET", "/api/v1/agent/commerce/transactions"],
  ["transaction", "GET", "/api/v1/agent/commerce/transactions/:id"],
  ["review", "POST", "/api/v1/agent/commerce/transactions/:id/review"],
  ["cancel_purchase", "POST", "/api/v1/agent/commerce/transactions/:id/cancel"],
  ["open_dispute", "POST", "/api/v1/agent/commerce/disputes"],
  ["disputes", "GET", "/api/v1/agent/commerce/disputes"],
  ["dispute", "GET", "/api/v1/agent/commerce/disputes/:id"],
  ["respond_dispute", "POST", "/api/v1/agent/commerce/disputes/:id/respond"],
  ["stats", "GET", "/api/v1/agent/commerce/stats"],
  ["usage", "GET", "/api/v1/agent/commerce/usage"],
  ["reputation", "GET", "/api/v1/agent/commerce/reputation"],
  ["leaderboard", "GET", "/api/v1/agent/commerce/leaderboard"],
  ["list_orders", "GET", "/api/v1/agent/commerce/orders"],
  ["get_order", "GET", "/api/v1/agent/commerce/orders/:id"],
  ["deliver_order", "POST", "/api/v1/agent/commerce/orders/:id/deliver"],
  ["fail_order", "POST", "/api/v1/agent/commerce/orders/:id/fail"],
  ["rotate_fulfilment_secret", "POST", "/api/v1/agent/commerce/services/:id/fulfilment/secret"],
  ["refusals", "GET", "/api/v1/agent/commerce/refusals"]
]

type Structured = Record<string, unknown>
const text = (result: unknown) => ((result as { content: Array<{ text: string }> }).content[0] ?? { text: "" }).text

describe("MCP endpoint (Streamable HTTP)", () => {
  it("initialize → tools/list returns exactly the tools of mcp-tools.json and /.well-known/mcp.json", async () => {
    const key = await createAgentKey(server.baseUrl, ["catalog:read"])
    const client = await connect(key.secret)
    expect(client.getServerVersion()?.name).toBe("agent-commerce")
    expect(client.getServerCapabilities()?.tools).toBeDefined()
    const listed = await client.listTools()
    const published = (await (await fetch(url("/api/v1/agent/mcp-tools.json"))).json()) as {
      tools: Array<{ name: string }>
    }
    const manifest = (await (await fetch(url("/.well-known/mcp.json"))).json()) as {
      endpoint: string
      tools: Array<{ name: string }>
    }
    expect(listed.tools).toEqual(published.tools)
    expect(manifest.tools).toEqual(published.tools)
    expect(manifest.endpoint).toBe(url("/mcp"))
    // One tool per agent/commerce route, nothing else: the documented names, each running its route…
    const meta = (t: { _meta?: Record<string, unknown> }) => t._meta as { method: string; path: string }
    expect(listed.tools.map((t) => [t.name, meta(t).method, meta(t).path])).toEqual(EXPECTED_TOOLS)
    // …and those routes are exactly the operations the agent API's OpenAPI document lists.
    const openapi = (await (await fetch(url("/api/v1/agent/openapi.json"))).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    const operations = Object.entries(openapi.paths)
      .filter(([path]) => path.startsWith("/api/v1/agent/"))
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
          .map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`)
      )
    expect(EXPECTED_TOOLS.map(([, method, path]) => `${method} ${path}`).sort()).toEqual(operations.sort())
    await client.close()
  })

  it("a read tool runs the REST route with the caller's key (me, catalog)", async () => {
    const key = await createAgentKey(server.baseUrl, ["catalog:read", "evaluate"])
    const client = await connect(key.secret)
    const me = await client.callTool({ name: "me", arguments: {} })
    expect(me.isError).toBeFalsy()
    const meBody = me.structuredContent as Structured & {
      key: { id: string; permissions: Array<string> }
      agent: { id: string }
    }
    expect(meBody.key.id).toBe(key.keyId)
    expect(meBody.key.permissions).toEqual(["catalog:read", "evaluate"])
    expect(meBody.agent.id).toBe(key.agentId)
    expect(JSON.parse(text(me))).toEqual(meBody)

    const rest = (await (await fetch(url("/api/v1/agent/catalog?limit=2"), { headers: key.auth })).json()) as {
      data: Array<{ id: string }>
    }
    const catalog = await client.callTool({ name: "catalog", arguments: { limit: 2 } })
    expect(catalog.isError).toBeFalsy()
    const items = (catalog.structuredContent as { data: Array<{ id: string }> }).data
    expect(items).toHaveLength(2)
    expect(items.map((i) => i.id)).toEqual(rest.data.map((i) => i.id))

    const detail = await client.callTool({ name: "catalog_project", arguments: { id: items[0].id } })
    expect(detail.isError).toBeFalsy()
    expect((detail.structuredContent as { id: string }).id).toBe(items[0].id)
    await client.close()
  })

  it("errors come back as tool errors with the typed body: permission, not found, invalid input", async () => {
    const weak = await createAgentKey(server.baseUrl, ["catalog:read"])
    const client = await connect(weak.secret)
    const denied = await client.callTool({ name: "evaluate", arguments: { projectId: "anything" } })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toBe("Forbidden (403): this key lacks the evaluate permission")
    expect(denied.structuredContent).toMatchObject({ status: 403, type: "Forbidden", permission: "evaluate" })

    const missing = await client.callTool({ name: "catalog_project", arguments: { id: "no-such-project" } })
    expect(missing.isError).toBe(true)
    expect(missing.structuredContent).toMatchObject({ status: 404, type: "NotFound" })

    const invalid = await client.callTool({ name: "catalog", arguments: { limit: 0 } })
    expect(invalid.isError).toBe(true)
    expect(invalid.structuredContent).toMatchObject({ status: 400, type: "InvalidInput", field: "limit" })

    const unknownArg = await client.callTool({ name: "me", arguments: { surprise: 1 } })
    expect(unknownArg.isError).toBe(true)
    expect(text(unknownArg)).toBe("InvalidInput (400): surprise: is not an argument of me")

    // The JSON-RPC error text is the bare message; the client adds its "MCP error <code>: " once.
    const unknownTool = await client.callTool({ name: "no_such_tool", arguments: {} }).then(
      () => undefined,
      (e: Error) => e
    )
    expect(unknownTool?.message).toBe("MCP error -32602: unknown tool: no_such_tool")
    const raw = await fetch(url("/mcp"), {
      method: "POST",
      headers: { ...weak.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "nope", arguments: {} } })
    })
    expect(((await raw.json()) as { error: { code: number; message: string } }).error).toEqual({
      code: -32602,
      message: "unknown tool: nope"
    })
    await client.close()
  })

  it("buy: top up, buy, read the transaction, review — every call through a tool, the money as REST moves it", async () => {
    const key = await createAgentKey(server.baseUrl, ["commerce:*"])
    const client = await connect(key.secret)
    const topup = await client.callTool({ name: "topup", arguments: { amountCents: 5000 } })
    expect(topup.isError).toBeFalsy()
    expect(topup.structuredContent).toMatchObject({ agentId: key.agentId, amountCents: 5000, balanceCents: 5000 })

    // svc_doc_translate / starter lists at 1900 cents: settled 85 % / 15 %.
    const bought = await client.callTool({
      name: "buy",
      arguments: { serviceId: "svc_doc_translate", tierId: "starter", input: { text: "Olá" } }
    })
    expect(bought.isError).toBeFalsy()
    const purchase = bought.structuredContent as {
      status: string
      transaction: { id: string; priceCents: number; sellerCents: number; feeCents: number }
    }
    expect(purchase.status).toBe("completed")
    expect(purchase.transaction).toMatchObject({ priceCents: 1900, sellerCents: 1615, feeCents: 285 })

    const wallet = await client.callTool({ name: "wallet", arguments: {} })
    expect((wallet.structuredContent as { balanceCents: number }).balanceCents).toBe(3100)
    const restWallet = (await (await fetch(url("/api/v1/agent/commerce/wallet"), { headers: key.auth })).json()) as {
      balanceCents: number
    }
    expect(restWallet.balanceCents).toBe(3100)

    const tx = await client.callTool({ name: "transaction", arguments: { id: purchase.transaction.id } })
    expect(tx.structuredContent).toMatchObject({
      id: purchase.transaction.id,
      role: "buyer",
      status: "completed",
      priceCents: 1900
    })
    const reviewed = await client.callTool({
      name: "review",
      arguments: { id: purchase.transaction.id, rating: 5, text: "good" }
    })
    expect(reviewed.isError).toBeFalsy()
    expect(reviewed.structuredContent).toMatchObject({
      transactionId: purchase.transaction.id,
      rating: 5,
      reviewerAgentId: key.agentId
    })
    const badRating = await client.callTool({ name: "review", arguments: { id: purchase.transaction.id, rating: 6 } })
    expect(badRating.isError).toBe(true)
    expect(badRating.structuredContent).toMatchObject({ status: 400, type: "InvalidInput" })

    // A read-only commerce key: the buy is the route's 403, naming the missing permission; no money moves.
    const reader = await connect((await createAgentKey(server.baseUrl, ["commerce:read"])).secret)
    const denied = await reader.callTool({
      name: "buy",
      arguments: { serviceId: "svc_doc_translate", tierId: "starter" }
    })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toBe("Forbidden (403): this key lacks the commerce:buy permission")
    expect(denied.structuredContent).toMatchObject({ status: 403, type: "Forbidden", permission: "commerce:buy" })
    await reader.close()

    // An empty wallet: the 402 is a payment refusal (docs/mcp.md): JSON-RPC -32042 with a challenge
    // for the purchase and the problem details (our wallet type, how many cents are missing).
    const broke = await connect((await createAgentKey(server.baseUrl, ["commerce:*"])).secret)
    const refused = await broke
      .callTool({ name: "buy", arguments: { serviceId: "svc_doc_translate", tierId: "starter" } })
      .then(
        () => undefined,
        (e: unknown) =>
          e as {
            code: number
            data: { challenges: Array<{ request: { amount: string } }>; problem: Record<string, unknown> }
          }
      )
    expect(refused?.code).toBe(-32042)
    expect(refused?.data.problem).toMatchObject({
      status: 402,
      type: "tag:ai2aic-commerce,2026:problems/wallet-insufficient-funds",
      missingCents: 1900
    })
    expect(refused?.data.challenges[0].request.amount).toBe("1900")
    await broke.close()
    await client.close()
  })

  it("negotiate: propose through the tool, the seller answers, poll with the read tool; Idempotency-Key via _meta", async () => {
    const key = await createAgentKey(server.baseUrl, ["commerce:*"])
    const client = await connect(key.secret)
    // svc_doc_translate / business lists at 7900 cents; an offer at list is at or above the target: accepted.
    const args = { serviceId: "svc_doc_translate", tierId: "business", proposedPriceCents: 7900 }
    const opened = await client.callTool({
      name: "negotiate",
      arguments: args,
      _meta: { idempotencyKey: "mcp-negotiate-1" }
    })
    expect(opened.isError).toBeFalsy()
    const negotiation = opened.structuredContent as {
      id: string
      status: string
      buyerAgentId: string
      listPriceCents: number
    }
    expect(negotiation).toMatchObject({ status: "awaiting_seller", buyerAgentId: key.agentId, listPriceCents: 7900 })
    // The same key replays the stored response: the same negotiation, not a second one.
    const replay = await client.callTool({
      name: "negotiate",
      arguments: args,
      _meta: { idempotencyKey: "mcp-negotiate-1" }
    })
    expect((replay.structuredContent as { id: string }).id).toBe(negotiation.id)

    const answered = await eventually(
      async () => {
        const read = await client.callTool({ name: "negotiation", arguments: { id: negotiation.id } })
        expect(read.isError).toBeFalsy()
        return read.structuredContent as typeof negotiation
      },
      (n) => n.status !== "awaiting_seller"
    )
    expect(answered).toMatchObject({ id: negotiation.id, status: "accepted", agreedPriceCents: 7900 })
    const list = await client.callTool({ name: "negotiations", arguments: { limit: 10 } })
    expect((list.structuredContent as { data: Array<{ id: string }> }).data.map((n) => n.id)).toEqual([negotiation.id])

    // A key without commerce:negotiate gets the route's 403 as a tool error naming the permission.
    const reader = await connect((await createAgentKey(server.baseUrl, ["commerce:read"])).secret)
    const denied = await reader.callTool({ name: "negotiate", arguments: args })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toBe("Forbidden (403): this key lacks the commerce:negotiate permission")
    await reader.close()
    await client.close()
  })

  it("each tool call spends one request of the key's rate limit; the envelope spends none", async () => {
    // The clock stands still mid-minute: on the wall clock the fixed minute could turn among the calls.
    const limited = await startRuntimeServer({
      config: { rateLimitPerMinute: 3, rateLimitPerDay: 1000 },
      clock: setClock(Date.UTC(2026, 10, 28, 12, 0, 30)).clock
    })
    try {
      const key = await createAgentKey(limited.baseUrl, ["catalog:read"])
      const client = new Client({ name: "mcp-test", version: "1.0.0" })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${limited.baseUrl}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key.secret}` } }
        })
      )
      await client.listTools()
      await client.listTools()
      const results = []
      for (let i = 0; i < 4; i++) results.push(await client.callTool({ name: "me", arguments: {} }))
      expect(results.map((r) => Boolean(r.isError))).toEqual([false, false, false, true])
      expect(results[3].structuredContent).toMatchObject({ status: 429, type: "RateLimited" })
      await client.close()
    } finally {
      await limited.close()
    }
  })

  it("initialize announces the capabilities /.well-known/mcp.json publishes (tools, listChanged: false; payment)", async () => {
    const manifest = (await (await fetch(url("/.well-known/mcp.json"))).json()) as {
      capabilities: Record<string, unknown>
    }
    expect(manifest.capabilities).toEqual({
      tools: { listChanged: false },
      experimental: { payment: { methods: { credits: { intents: ["charge"] } } } }
    })

    const key = await createAgentKey(server.baseUrl, ["catalog:read"])
    const client = await connect(key.secret)
    expect(client.getServerCapabilities()).toEqual(manifest.capabilities)
    await client.close()

    // The raw initialize answer, as any MCP client reads it.
    const res = await fetch(url("/mcp"), {
      method: "POST",
      headers: { ...key.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } }
      })
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { result: { protocolVersion: string; capabilities: Record<string, unknown> } }
    expect(body.result.capabilities).toEqual(manifest.capabilities)
    // An older revision the SDK still supports is answered in kind; the manifest names the latest.
    expect(body.result.protocolVersion).toBe("2025-06-18")
  })

  it("without a valid bearer key /mcp is 401 with WWW-Authenticate; GET and DELETE are 405", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } }
    }
    for (const headers of [{}, { authorization: "Bearer ak_live_nope" }] as Array<Record<string, string>>) {
      const res = await fetch(url("/mcp"), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(init)
      })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="agent-api"/)
      expect(((await res.json()) as { type: string }).type).toBe("Unauthorized")
    }
    const client = new Client({ name: "mcp-test", version: "1.0.0" })
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(url("/mcp"))))).rejects.toThrow()

    const key = await createAgentKey(server.baseUrl, ["catalog:read"])
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(url("/mcp"), { method, headers: { ...key.auth, accept: "text/event-stream" } })
      expect(res.status).toBe(405)
      expect(res.headers.get("allow")).toBe("POST")
    }
  })
})

describe("tool call → route request", () => {
  const tools = toolsFromApi(Api)
  const tool = (name: string) => tools.find((t) => t.name === name)!
  it("fills path params, builds the query string, sends the rest as the JSON body", () => {
    expect(toRouteRequest(tool("catalog_project"), { id: "a b/c" })).toEqual({
      method: "GET",
      path: "/api/v1/agent/catalog/a%20b%2Fc",
      body: undefined
    })
    expect(toRouteRequest(tool("catalog"), { limit: 5, q: "chat" })).toEqual({
      method: "GET",
      path: "/api/v1/agent/catalog?q=chat&limit=5",
      body: undefined
    })
    expect(toRouteRequest(tool("evaluate"), { projectId: "p1" })).toEqual({
      method: "POST",
      path: "/api/v1/agent/evaluate",
      body: '{"projectId":"p1"}'
    })
    expect(toRouteRequest(tool("catalog_project"), {})).toEqual({ message: "id: is required (a string)", field: "id" })
  })
})
