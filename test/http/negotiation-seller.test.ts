// A live seller answers its negotiations over each surface, on every storage: its pull service's
// proposal waits for it for the whole window (sellerAnswerDueAt 29.6 s out), it finds the proposal in
// its inbox (GET /negotiations?role=seller&status=awaiting_seller, tRPC commerce.negotiations, the MCP
// `negotiations` tool), and its answer over REST, tRPC (commerce.respondNegotiation) or MCP
// (`respond`) is the answer the buyer sees. A bad filter is 400 naming the field.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
const C = "/api/v1/agent/commerce"
const WINDOW = 29_600

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const call = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined
  })
  const text = await res.text()
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any }
}
const post = (k: AgentKey, path: string, body: unknown) =>
  call(path, { method: "POST", headers: { ...k.auth, "idempotency-key": randomBytes(8).toString("hex") }, body })
const get = (k: AgentKey, path: string) => call(path, { headers: k.auth })
const trpcGet = (k: AgentKey, name: string, input: unknown) =>
  get(k, `/api/trpc/${name}?input=${encodeURIComponent(JSON.stringify(input))}`)

const mcp = async (k: AgentKey) => {
  const client = new Client({ name: "negotiation-seller-test", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), { requestInit: { headers: k.auth } })
  )
  return client
}

/** A live seller (pull service, list 1 000, no negotiation policy given) and a buyer. */
const market = async () => {
  const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
  const published = await post(seller, `${C}/services`, {
    name: "Haggle",
    description: "a service its seller prices itself",
    category: "testing",
    pricingModel: "per_call",
    tiers: [
      {
        id: "unit",
        name: "Unit",
        priceCents: 1_000,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
      }
    ]
  })
  expect(published.status).toBe(201)
  const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
  const propose = async (proposedPriceCents: number) => {
    const opened = await post(buyer, `${C}/negotiate`, {
      serviceId: published.body.id,
      tierId: "unit",
      proposedPriceCents
    })
    expect(opened.status).toBe(201)
    return opened.body
  }
  return { seller, buyer, propose }
}

describeEachStorage("a live seller answers its negotiations over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("REST: the whole window to answer, the inbox lists what waits, the seller's counter is the answer", async () => {
    const { seller, buyer, propose } = await market()
    const n = await propose(600)
    expect(Date.parse(n.sellerAnswerDueAt) - Date.parse(n.createdAt)).toBe(WINDOW)
    const inbox = await get(seller, `${C}/negotiations?role=seller&status=awaiting_seller`)
    expect(inbox.status).toBe(200)
    expect(inbox.body.data.map((x: { id: string }) => x.id)).toEqual([n.id])
    expect((await get(buyer, `${C}/negotiations?role=seller&status=awaiting_seller`)).body.data).toEqual([])
    const countered = await post(seller, `${C}/negotiate/${n.id}/respond`, {
      action: "counter",
      counterPriceCents: 900
    })
    expect(countered.status).toBe(200)
    const seen = (await get(buyer, `${C}/negotiations/${n.id}`)).body
    expect(seen).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 900 })
    expect(seen.history[1]).toMatchObject({ by: "seller", action: "counter", priceCents: 900, automatic: false })
    expect((await get(seller, `${C}/negotiations?role=seller&status=awaiting_seller`)).body.data).toEqual([])
    const bad = await get(seller, `${C}/negotiations?status=waiting`)
    expect(bad.status).toBe(400)
    expect(JSON.stringify(bad.body)).toContain("status")
  })

  it("tRPC: commerce.negotiations lists the inbox, commerce.respondNegotiation accepts", async () => {
    const { seller, buyer, propose } = await market()
    const n = await propose(700)
    const listed = await trpcGet(seller, "commerce.negotiations", { role: "seller", status: "awaiting_seller" })
    expect(listed.status).toBe(200)
    expect(listed.body.result.data.data.map((x: { id: string }) => x.id)).toEqual([n.id])
    const accepted = await post(seller, "/api/trpc/commerce.respondNegotiation", { id: n.id, action: "accept" })
    expect(accepted.status).toBe(200)
    expect(accepted.body.result.data).toMatchObject({ status: "accepted", agreedPriceCents: 700 })
    expect((await get(buyer, `${C}/negotiations/${n.id}`)).body).toMatchObject({ status: "accepted" })
  })

  it("MCP: the negotiations tool lists the inbox, the respond tool rejects", async () => {
    const { seller, buyer, propose } = await market()
    const n = await propose(650)
    const client = await mcp(seller)
    try {
      const listed = await client.callTool({
        name: "negotiations",
        arguments: { role: "seller", status: "awaiting_seller" }
      })
      expect((listed.structuredContent as { data: Array<{ id: string }> }).data.map((x) => x.id)).toEqual([n.id])
      const rejected = await client.callTool({ name: "respond", arguments: { id: n.id, action: "reject" } })
      expect(rejected.structuredContent).toMatchObject({ id: n.id, status: "rejected" })
    } finally {
      await client.close()
    }
    expect((await get(buyer, `${C}/negotiations/${n.id}`)).body.status).toBe("rejected")
  })
})
