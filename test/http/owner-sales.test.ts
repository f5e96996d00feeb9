// The seller's side of the owner's agent page over plain HTTP: the owner of a selling agent sees its
// waiting orders (who bought what, for how much, by when), what it earned (its 85 % share) and what
// is held for it, on the page and in the JSON; the page keeps current through the live stamp;
// another account's owner sees none of it (404), a signed-out visitor is sent to sign in.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
let seller: AgentKey
let buyer: AgentKey
let serviceId: string
beforeAll(async () => {
  server = await startServer({ config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  seller = await createAgentKey(server.baseUrl, ["commerce:*"])
  buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
  const topup = await api("/api/v1/agent/commerce/wallet/topup", buyer.auth, { amountCents: 100_000 })
  expect(topup.status).toBe(201)
  const published = await api("/api/v1/agent/commerce/services", seller.auth, {
    name: "Translate <b>fast</b>",
    description: "a service the owner's agent sells",
    category: "testing",
    pricingModel: "per_call",
    tiers: [
      {
        id: "one",
        name: "one",
        priceCents: 1_000,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
      }
    ]
  })
  expect(published.status).toBe(201)
  serviceId = (published.body as { id: string }).id
})
afterAll(async () => {
  await server?.close()
})

async function api(path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, body: (await res.json()) as unknown }
}
const page = (path: string, cookie = seller.cookie) =>
  fetch(`${server.baseUrl}${path}`, { headers: { cookie }, redirect: "manual" })
const sellerPage = () => `/agent-dashboard/agents/${seller.agentId}`
const board = async () => {
  const res = await page(`${sellerPage()}/sales.json`)
  expect(res.status).toBe(200)
  return (await res.json()) as {
    pending: { orders: Array<{ id: string; buyerAgentId: string; sellerCents: number }>; count: number }
    ended: Array<{ id: string; status: string }>
    earnings: { todayCents: number; thisMonthCents: number; allTimeCents: number; heldCents: number }
  }
}
const stamp = async () => ((await (await page(`${sellerPage()}/live.json`)).json()) as { stamp: string }).stamp
const buy = async () => {
  const r = await api("/api/v1/agent/commerce/buy", buyer.auth, { serviceId, tierId: "one", input: { text: "hi" } })
  expect(r.status).toBe(202)
  return (r.body as { transaction: { id: string } }).transaction.id
}

describe("the owner's view of a selling agent", () => {
  it("a pending order is held, not earned; delivered, the agent's 85 % is earned today; the page and the stamp follow", async () => {
    const before = await stamp()
    const orderId = await buy()
    const waiting = await board()
    expect(waiting.pending.count).toBe(1)
    expect(waiting.pending.orders).toMatchObject([{ id: orderId, buyerAgentId: buyer.agentId, sellerCents: 850 }])
    expect(waiting.earnings).toEqual({ todayCents: 0, thisMonthCents: 0, allTimeCents: 0, heldCents: 850 })
    const held = await stamp()
    expect(held).not.toBe(before)

    const html = await (await page(sellerPage())).text()
    expect(html).toContain('id="sales"')
    expect(html).toMatch(/<dd id="earned-held">\$8\.50<\/dd>/)
    expect(html).toContain(`data-order-id="${orderId}"`)
    // The seller's text is escaped like every value on the page.
    expect(html).toContain("Translate &lt;b&gt;fast&lt;/b&gt;")
    expect(html).not.toMatch(/<script>|style="/)

    const delivered = await api(`/api/v1/agent/commerce/orders/${orderId}/deliver`, seller.auth, { output: "hola" })
    expect(delivered.status).toBe(200)
    const paid = await board()
    expect(paid.earnings).toEqual({ todayCents: 850, thisMonthCents: 850, allTimeCents: 850, heldCents: 0 })
    expect(paid.ended).toMatchObject([{ id: orderId, status: "delivered" }])
    expect(await stamp()).not.toBe(held)
    const after = await (await page(sellerPage())).text()
    expect(after).toMatch(/<dd id="earned-today">\$8\.50<\/dd>/)
    expect(after).toContain("Delivered — $8.50 earned")
  })

  it("more orders than the page shows: the oldest ten, the count, and a page with the rest", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 12; i++) ids.push(await buy())
    const b = await board()
    expect(b.pending.count).toBe(12)
    expect(b.pending.orders.map((o) => o.id)).toEqual(ids.slice(0, 10))
    const html = await (await page(sellerPage())).text()
    expect(html).toContain("The oldest 10 of 12.")
    const all = await page(`${sellerPage()}/orders`)
    expect(all.status).toBe(200)
    const listed = await all.text()
    for (const id of ids) expect(listed).toContain(`data-order-id="${id}"`)
    expect((await page(`${sellerPage()}/sales.json?cursor=forged`)).status).toBe(400)
    expect((await page(`${sellerPage()}/sales.json?limit=500`)).status).toBe(400)
  })

  it("another account's owner gets 404 on the page, the orders and the JSON; signed out goes to sign in", async () => {
    for (const path of [sellerPage(), `${sellerPage()}/orders`, `${sellerPage()}/sales.json`]) {
      expect((await page(path, buyer.cookie)).status).toBe(404)
    }
    expect((await page(`${sellerPage()}/orders`, "")).status).toBe(303)
    expect((await page(`${sellerPage()}/sales.json`, "")).status).toBe(401)
    // The buyer's own page shows no sales of the seller's.
    const own = await (await page(`/agent-dashboard/agents/${buyer.agentId}/sales.json`, buyer.cookie)).json()
    expect(own).toMatchObject({ pending: { count: 0, orders: [] }, ended: [], earnings: { allTimeCents: 0 } })
  })
})
