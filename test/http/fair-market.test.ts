// A fair market (docs/reputation.md, docs/fulfilment.md), over HTTP on every storage, each from what a
// party is told:
// - a buyer never learns where a push seller's endpoint is or what it answered (its seller does);
// - the agents of one account cannot trade with each other, whichever way they try to buy, so an
//   account cannot review itself up;
// - a refunded purchase cannot be reviewed, and a review written before the refund stops counting
//   in the seller's reputation and its service's rating;
// - a key's long polls are bounded: a fifth list waiting at once is 429 with Retry-After.
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, signUp, type AgentKey } from "../fixtures/agents.js"
import { startPushSeller } from "../fixtures/pushSeller.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
const C = "/api/v1/agent/commerce"

interface Answer {
  readonly status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}
const call = async (
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}
): Promise<Answer> => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}
const post = (k: AgentKey, path: string, body: unknown) =>
  call(path, { method: "POST", headers: { ...k.auth, "idempotency-key": randomBytes(8).toString("hex") }, body })
const get = (k: AgentKey, path: string) => call(path, { headers: k.auth })

const serviceBody = (name: string, priceCents: number, fulfilment: unknown, p95LatencyMs = 1_000) => ({
  name,
  description: "a fair-market test service",
  category: "testing",
  pricingModel: "per_call",
  tiers: [
    {
      id: "unit",
      name: "Unit",
      priceCents,
      unit: "call",
      includedUnits: null,
      sla: { uptimePct: 99, p95LatencyMs, supportWindow: "24/7" }
    }
  ],
  fulfilment
})

const funded = async (options: { cookie?: string; accountId?: string } = {}) => {
  const k = await createAgentKey(server.baseUrl, ["commerce:*"], options)
  expect((await post(k, `${C}/wallet/topup`, { amountCents: 10_000 })).status).toBe(201)
  return k
}

describeEachStorage("a fair market over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({
      storage,
      config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000, orderWaitMs: 200 }
    })
  })
  afterAll(async () => server?.close())

  it("a buyer never sees where a push seller's endpoint is or what it answered; the seller sees its own push errors", async () => {
    const secret = "stack: Error at /srv/internal/hooks/handler.js token=sk_internal_123"
    const pushSeller = await startPushSeller(() => ({ status: 500, body: { error: secret } }))
    try {
      const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
      const published = await post(
        seller,
        `${C}/services`,
        serviceBody("Pushed", 100, { mode: "push", url: pushSeller.url })
      )
      expect(published.status).toBe(201)
      pushSeller.secret = published.body.fulfilmentSecret
      const buyer = await funded()
      const bought = await post(buyer, `${C}/buy`, { serviceId: published.body.id, tierId: "unit", input: "x" })
      const orderId = bought.body.transaction.id as string
      // The seller's endpoint answered 500 at least once: the seller is told why.
      await expect
        .poll(async () => (await get(seller, `${C}/orders/${orderId}`)).body.lastPushError, { timeout: 15_000 })
        .toContain("500")
      const sellers = (await get(seller, `${C}/orders/${orderId}`)).body
      expect(sellers.lastPushError).toContain("sk_internal_123")
      const buyers = await get(buyer, `${C}/orders/${orderId}`)
      expect(buyers.status).toBe(200)
      expect(buyers.body.lastPushError).toBeNull()
      const seen = JSON.stringify([buyers.body, (await get(buyer, `${C}/transactions/${orderId}`)).body])
      for (const hidden of ["sk_internal_123", "/srv/internal", "127.0.0.1", String(new URL(pushSeller.url).port)]) {
        expect(seen).not.toContain(hidden)
      }
    } finally {
      await pushSeller.close()
    }
  })

  it("the agents of one account cannot buy from each other (buy, saga, paid call): nothing is charged, nothing counts", async () => {
    const owner = await signUp(server.baseUrl)
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"], owner)
    const published = await post(seller, `${C}/services`, serviceBody("Own shop", 1, { mode: "pull" }))
    expect(published.status).toBe(201)
    const sibling = await funded(owner)
    const serviceId = published.body.id as string
    for (const [path, body] of [
      [`${C}/buy`, { serviceId, tierId: "unit", input: "x" }],
      [`${C}/saga`, { serviceId, tierId: "unit", input: "x" }],
      [`${C}/services/${serviceId}/invoke?tier=unit`, { input: "x" }]
    ] as const) {
      const refused = await post(sibling, path, body)
      expect(refused.status, path).toBe(400)
      expect(JSON.stringify(refused.body), path).toContain("own account")
    }
    expect((await get(sibling, `${C}/wallet`)).body.balanceCents).toBe(10_000)
    expect((await get(seller, `${C}/orders`)).body.orders).toEqual([])
    // Another account's agent buys as usual.
    const stranger = await funded()
    expect((await post(stranger, `${C}/buy`, { serviceId, tierId: "unit", input: "x" })).status).toBe(202)
  })

  it("a refunded purchase cannot be reviewed; a review written before the refund stops counting", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const published = await post(seller, `${C}/services`, serviceBody("Reviewed", 200, { mode: "pull" }))
    const serviceId = published.body.id as string
    const buyer = await funded()
    const buyAndDeliver = async () => {
      const bought = await post(buyer, `${C}/buy`, { serviceId, tierId: "unit", input: "x" })
      const id = bought.body.transaction.id as string
      expect((await post(seller, `${C}/orders/${id}/deliver`, { output: { ok: true } })).status).toBe(200)
      return id
    }
    const refundOf = async (transactionId: string) => {
      const opened = await post(buyer, `${C}/disputes`, { transactionId, reason: "not what I asked" })
      expect(opened.status).toBe(201)
      const accepted = await post(seller, `${C}/disputes/${opened.body.id}/respond`, { action: "accept" })
      expect(accepted.body.status).toBe("resolved_refunded")
    }
    const reputation = async () => (await get(seller, `${C}/reputation`)).body
    const service = async () => (await get(buyer, `${C}/services/${serviceId}`)).body

    // Refunded first: the review is refused.
    const first = await buyAndDeliver()
    await refundOf(first)
    const refused = await post(buyer, `${C}/transactions/${first}/review`, { rating: 1 })
    expect(refused.status).toBe(409)
    expect(refused.body.message).toContain("refunded")

    // Reviewed, then refunded: the review no longer counts.
    const before = { reputation: await reputation(), service: await service() }
    const second = await buyAndDeliver()
    expect((await post(buyer, `${C}/transactions/${second}/review`, { rating: 1 })).status).toBe(201)
    expect((await service()).reviewCount).toBe(before.service.reviewCount + 1)
    await refundOf(second)
    expect((await service()).reviewCount).toBe(before.service.reviewCount)
    expect((await service()).rating).toBe(before.service.rating)
    const after = await reputation()
    expect(after.factors.reviews).toEqual(before.reputation.factors.reviews)
  })

  it("a key waits on at most four order lists at once: a fifth is 429 with Retry-After, another key's is not", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const other = await createAgentKey(server.baseUrl, ["commerce:*"])
    const waiting = (k: AgentKey) => get(k, `${C}/orders?status=pending&waitMs=1500`)
    const four = Array.from({ length: 4 }, () => waiting(seller))
    await new Promise((resolve) => setTimeout(resolve, 300))
    const fifth = await call(`${C}/orders?status=pending&waitMs=1500`, { headers: seller.auth })
    const res = await fetch(`${server.baseUrl}${C}/orders?status=pending&waitMs=1500`, { headers: seller.auth })
    expect(fifth.status).toBe(429)
    expect(fifth.body).toMatchObject({ _tag: "RateLimited", window: "concurrent waits", limit: 4 })
    expect(res.status).toBe(429)
    expect(res.headers.get("retry-after")).toBe("1")
    const others = await waiting(other)
    expect(others.status).toBe(200)
    for (const answer of await Promise.all(four)) expect(answer.status).toBe(200)
    // Once they answered, the key may wait again.
    expect((await get(seller, `${C}/orders?status=pending&waitMs=100`)).status).toBe(200)
  })
})
