// GET /services writes its page from each service's JSON, kept per version of the service
// (src/http/commerce/servicePage.ts). What a buyer is promised: the page is the bytes the endpoint's
// schema writes for it, and every change a seller or a review makes (a new name or price, a rating,
// an unlisting) is on the next page that lists the service, on every storage.
import { afterAll, beforeAll, expect, it } from "vitest"
import { ServicePage } from "../../src/http/commerce/params.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { asSchemaWrites } from "../fixtures/contract.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const base = "/api/v1/agent/commerce"
const sla = { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
const tier = (id: string, priceCents: number) => ({ id, name: id, priceCents, unit: "call", includedUnits: null, sla })

/** The schema's own writing of a page: decoded from the answer, encoded back, stringified. */
const asPageWrites = asSchemaWrites(ServicePage)

describeEachStorage("a page of services, kept per version", { concurrent: "storages" }, (storage) => {
  let server: TestServer
  const call = async (path: string, auth: AgentKey, method = "GET", body?: unknown) => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { ...auth.auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
  }
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("shows each service as it is now, in the bytes the schema writes", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    const publish = async (name: string, tiers: ReadonlyArray<ReturnType<typeof tier>>) => {
      const r = await call(`${base}/services`, seller, "POST", {
        name,
        description: 'kept per version — ünïcode and "quotes" included',
        category: "testing",
        pricingModel: "per_call",
        tiers
      })
      expect(r.status).toBe(201)
      return (JSON.parse(r.text) as { id: string }).id
    }
    const a = await publish("Page A", [tier("unit", 500)])
    // The page's "from" price is the cheapest tier's, wherever it stands among the tiers.
    const b = await publish("Page B", [tier("unit", 700), tier("bulk", 300), tier("pro", 500)])
    const list = async (query = "") => {
      const r = await call(`${base}/services?sellerId=${seller.agentId}${query}`, buyer)
      expect([r.status, r.type]).toEqual([200, "application/json"])
      expect(r.text).toBe(asPageWrites(r.text))
      return JSON.parse(r.text) as {
        data: Array<{ id: string; name: string; fromPriceCents: number; rating: number | null; reviewCount: number }>
        nextCursor: string | null
      }
    }
    // Read twice first, so a page kept from before the changes would show.
    for (let i = 0; i < 2; i++) expect((await list()).data.map((s) => s.name).sort()).toEqual(["Page A", "Page B"])
    expect((await list()).data.find((s) => s.id === b)!.fromPriceCents).toBe(300)
    const first = await list("&limit=1")
    expect(first.nextCursor).not.toBeNull()
    expect((await list(`&limit=1&cursor=${first.nextCursor}`)).data).toHaveLength(1)

    // The seller renames A and lowers its price: the next page says so.
    const updated = await call(`${base}/services/${a}`, seller, "PATCH", {
      name: "Page A2",
      tiers: [tier("unit", 300), tier("small", 200), tier("big", 900)]
    })
    expect(updated.status).toBe(200)
    const afterUpdate = (await list()).data.find((s) => s.id === a)!
    expect([afterUpdate.name, afterUpdate.fromPriceCents]).toEqual(["Page A2", 200])

    // A buyer reviews B: its rating and review count are on the next page.
    expect((await call(`${base}/wallet/topup`, buyer, "POST", { amountCents: 1_000 })).status).toBe(201)
    const bought = await call(`${base}/buy`, buyer, "POST", { serviceId: b, tierId: "unit", input: "x" })
    expect(bought.status).toBe(202)
    const txId = (JSON.parse(bought.text) as { transaction: { id: string } }).transaction.id
    expect((await call(`${base}/orders/${txId}/deliver`, seller, "POST", { output: "done" })).status).toBe(200)
    expect((await call(`${base}/transactions/${txId}/review`, buyer, "POST", { rating: 4 })).status).toBe(201)
    const reviewed = (await list()).data.find((s) => s.id === b)!
    expect([reviewed.rating, reviewed.reviewCount]).toEqual([4, 1])

    // The seller unlists A: it is gone from the page.
    expect((await call(`${base}/services/${a}`, seller, "PATCH", { status: "inactive" })).status).toBe(200)
    expect((await list()).data.map((s) => s.id)).toEqual([b])
  })
})
