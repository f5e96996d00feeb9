// What a seller and its buyer are promised when the seller fulfils for real (pull), over REST, tRPC
// and MCP on every storage: the buy answers 202 with the price held; the seller lists its orders
// (and a waiting list wakes on the next one); a delivery pays the seller and completes the buyer's
// transaction, a failure refunds the buyer in full; the same answer twice is the same result and
// never a second payment, a different answer is 409; orders are the seller's own (403 without
// commerce:sell, 404 for another seller's); bad bodies are 400 naming the field.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
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
const key = () => ({ "idempotency-key": randomBytes(8).toString("hex") })
const post = (k: AgentKey, path: string, body: unknown, headers: Record<string, string> = key()) =>
  call(path, { method: "POST", headers: { ...k.auth, ...headers }, body })
const get = (k: AgentKey, path: string) => call(path, { headers: k.auth })
const balance = async (k: AgentKey) => (await get(k, `${C}/wallet`)).body.balanceCents as number

const tier = (priceCents: number, p95LatencyMs = 1_000) => ({
  id: "unit",
  name: "Unit",
  priceCents,
  unit: "call",
  includedUnits: null,
  sla: { uptimePct: 99, p95LatencyMs, supportWindow: "24/7" }
})
const serviceBody = (name: string, priceCents: number, fulfilment?: unknown) => ({
  name,
  description: "a service its seller fulfils",
  category: "testing",
  pricingModel: "per_call",
  tiers: [tier(priceCents)],
  ...(fulfilment === undefined ? {} : { fulfilment })
})

/** A seller with a published pull service, and a funded buyer. */
const market = async (priceCents = 1_000) => {
  const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
  const published = await post(seller, `${C}/services`, serviceBody("Real work", priceCents))
  expect(published.status).toBe(201)
  const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
  await post(buyer, `${C}/wallet/topup`, { amountCents: 10_000 })
  const buy = (input: unknown = { text: "hello" }) =>
    post(buyer, `${C}/buy`, { serviceId: published.body.id, tierId: "unit", input })
  return { seller, buyer, serviceId: published.body.id as string, buy }
}

const mcp = async (k: AgentKey) => {
  const client = new Client({ name: "orders-test", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: k.auth }
    })
  )
  return client
}

describeEachStorage("orders over HTTP (pull sellers)", (storage) => {
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("publishing: pull by default and shown as such; simulated is the platform's only; a push url is checked and its secret shown once", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const plain = await post(seller, `${C}/services`, serviceBody("Plain", 100))
    expect(plain.body.fulfilment).toEqual({ mode: "pull" })
    expect((await get(seller, `${C}/services/${plain.body.id}`)).body.fulfilment).toEqual({ mode: "pull" })
    const simulated = await post(seller, `${C}/services`, serviceBody("Fake", 100, { mode: "simulated" }))
    expect(simulated.status).toBe(400)
    expect(simulated.body).toMatchObject({ type: "InvalidInput", field: "fulfilment.mode" })
    const inside = await post(
      seller,
      `${C}/services`,
      serviceBody("In", 100, { mode: "push", url: "http://10.0.0.9/o" })
    )
    expect(inside.status).toBe(400)
    expect(inside.body).toMatchObject({ type: "InvalidInput", field: "fulfilment.url" })
    const unknownMode = await post(seller, `${C}/services`, serviceBody("Odd", 100, { mode: "email" }))
    expect(unknownMode.status).toBe(400)
    expect(JSON.stringify(unknownMode.body)).toMatch(/fulfilment/)
    const url = `${server.baseUrl}/push-target`
    const pushed = await post(seller, `${C}/services`, serviceBody("Pushed", 100, { mode: "push", url }))
    expect(pushed.status).toBe(201)
    expect(pushed.body.fulfilmentSecret).toMatch(/^whsec_/)
    const shown = await get(seller, `${C}/services/${pushed.body.id}`)
    expect(shown.body.fulfilment).toEqual({ mode: "push" })
    expect(JSON.stringify(shown.body)).not.toContain(pushed.body.fulfilmentSecret)
    const rotated = await post(seller, `${C}/services/${pushed.body.id}/fulfilment/secret`, undefined)
    expect(rotated.status).toBe(200)
    expect(rotated.body.fulfilmentSecret).not.toBe(pushed.body.fulfilmentSecret)
  })

  it("REST: buy → 202 pending (price held) → the seller lists it → delivers → the buyer's transaction is completed and the seller paid", async () => {
    const { seller, buyer, serviceId, buy } = await market(1_000)
    const bought = await buy({ text: "translate me" })
    expect(bought.status).toBe(202)
    expect(bought.body).toMatchObject({
      status: "pending",
      transaction: { status: "pending", delivery: null, priceCents: 1_000, serviceId },
      approval: null
    })
    const orderId = bought.body.transaction.id as string
    expect(await balance(buyer)).toBe(9_000)
    expect(await balance(seller)).toBe(0)

    const listed = await get(seller, `${C}/orders?status=pending`)
    expect(listed.status).toBe(200)
    expect(listed.body.orders.map((o: { id: string }) => o.id)).toEqual([orderId])
    expect(listed.body.orders[0]).toMatchObject({
      id: orderId,
      serviceId,
      tierId: "unit",
      input: { text: "translate me" },
      priceCents: 1_000,
      status: "pending"
    })
    // The buyer reads its order too; the seller's list is the seller's only.
    expect((await get(buyer, `${C}/orders/${orderId}`)).body).toMatchObject({ id: orderId, status: "pending" })
    expect((await get(buyer, `${C}/orders`)).body.orders).toEqual([])

    const delivered = await post(seller, `${C}/orders/${orderId}/deliver`, { output: { text: "traduis-moi" } })
    expect(delivered.status).toBe(200)
    expect(delivered.body).toMatchObject({ id: orderId, status: "delivered", output: { text: "traduis-moi" } })
    expect(await balance(seller)).toBe(850)
    expect(await balance(buyer)).toBe(9_000)
    const tx = await get(buyer, `${C}/transactions/${orderId}`)
    expect(tx.body).toMatchObject({
      status: "completed",
      sellerCents: 850,
      feeCents: 150,
      delivery: { success: true, output: { text: "traduis-moi" } }
    })

    // The same delivery again (a retry with a new key): the same order, no second payment.
    const again = await post(seller, `${C}/orders/${orderId}/deliver`, { output: { text: "traduis-moi" } })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(delivered.body)
    expect(await balance(seller)).toBe(850)
    // Delivered again with another output: the first delivery stands, answered as it is, paid once.
    const other = await post(seller, `${C}/orders/${orderId}/deliver`, { output: { text: "autre chose" } })
    expect([other.status, other.body]).toEqual([200, delivered.body])
    // A different answer to a closed order: 409, nothing moves.
    const failLate = await post(seller, `${C}/orders/${orderId}/fail`, { error: "changed my mind" })
    expect(failLate.status).toBe(409)
    expect(await balance(seller)).toBe(850)
    expect(await balance(buyer)).toBe(9_000)
  })

  it("REST: a failed order refunds the buyer in full and records the failure; delivering it afterwards is 409", async () => {
    const { seller, buyer, buy } = await market(700)
    const orderId = (await buy()).body.transaction.id as string
    expect(await balance(buyer)).toBe(9_300)
    const failed = await post(seller, `${C}/orders/${orderId}/fail`, { error: "model unavailable" })
    expect(failed.status).toBe(200)
    expect(failed.body).toMatchObject({ id: orderId, status: "failed", error: "model unavailable" })
    expect(await balance(buyer)).toBe(10_000)
    expect(await balance(seller)).toBe(0)
    expect((await get(buyer, `${C}/transactions/${orderId}`)).body).toMatchObject({
      status: "failed",
      delivery: { success: false }
    })
    expect((await post(seller, `${C}/orders/${orderId}/fail`, { error: "model unavailable" })).status).toBe(200)
    expect((await post(seller, `${C}/orders/${orderId}/deliver`, { output: "late" })).status).toBe(409)
    expect(await balance(buyer)).toBe(10_000)
  })

  // docs/fulfilment.md "Answers are idempotent" and docs/idempotency.md: every answer route takes an
  // Idempotency-Key; the same key and body replays the first answer, byte for byte (Idempotent-Replayed),
  // the same key with another body or on the other route is 422, and the money moves once.
  it("REST: the same Idempotency-Key on deliver or fail replays the first answer; another body or route with it is 422", async () => {
    const raw = async (k: AgentKey, path: string, body: unknown, idempotencyKey: string) => {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { ...k.auth, "content-type": "application/json", "idempotency-key": idempotencyKey },
        body: JSON.stringify(body)
      })
      return {
        status: res.status,
        replayed: res.headers.get("idempotent-replayed"),
        requestId: res.headers.get("x-request-id"),
        text: await res.text()
      }
    }
    const { seller, buyer, buy } = await market(1_000)

    // deliver: the first answer, then the same request again, then the same key with another output.
    const delivering = (await buy()).body.transaction.id as string
    const deliverKey = `deliver-${randomBytes(6).toString("hex")}`
    const deliver = (output: unknown) => raw(seller, `${C}/orders/${delivering}/deliver`, { output }, deliverKey)
    const first = await deliver({ text: "once" })
    expect([first.status, first.replayed]).toEqual([200, null])
    expect(JSON.parse(first.text)).toMatchObject({ id: delivering, status: "delivered", output: { text: "once" } })
    const again = await deliver({ text: "once" })
    expect([again.status, again.replayed, again.text]).toEqual([200, "true", first.text])
    const other = await deliver({ text: "something else" })
    expect(other.status).toBe(422)
    expect(JSON.parse(other.text)).toMatchObject({ type: "IdempotencyKeyReused" })
    // The same key on the other answer route is another request too (without the key it would be 409).
    const crossed = await raw(seller, `${C}/orders/${delivering}/fail`, { error: "no" }, deliverKey)
    expect(crossed.status).toBe(422)
    expect(await balance(seller)).toBe(850)
    expect(await balance(buyer)).toBe(9_000)

    // fail: the same, and a refusal (409 OrderClosed) is the first answer of its key too, replayed as it was.
    const failing = (await buy()).body.transaction.id as string
    const failKey = `fail-${randomBytes(6).toString("hex")}`
    const fail = (error: string) => raw(seller, `${C}/orders/${failing}/fail`, { error }, failKey)
    const failed = await fail("model unavailable")
    expect([failed.status, failed.replayed]).toEqual([200, null])
    expect(JSON.parse(failed.text)).toMatchObject({ id: failing, status: "failed", error: "model unavailable" })
    const failedAgain = await fail("model unavailable")
    expect([failedAgain.status, failedAgain.replayed, failedAgain.text]).toEqual([200, "true", failed.text])
    expect((await fail("another reason")).status).toBe(422)
    const lateKey = `late-${randomBytes(6).toString("hex")}`
    const late = await raw(seller, `${C}/orders/${failing}/deliver`, { output: "late" }, lateKey)
    expect(late.status).toBe(409)
    const lateAgain = await raw(seller, `${C}/orders/${failing}/deliver`, { output: "late" }, lateKey)
    expect([lateAgain.status, lateAgain.replayed]).toEqual([409, "true"])
    // An error body names the request that answered it (as its x-request-id does); the rest is the first answer's.
    const { requestId: firstId, ...lateBody } = JSON.parse(late.text)
    const { requestId: againId, ...lateAgainBody } = JSON.parse(lateAgain.text)
    expect([firstId, againId]).toEqual([late.requestId, lateAgain.requestId])
    expect(lateAgainBody).toEqual(lateBody)
    expect(lateBody).toMatchObject({ type: "OrderClosed", status: "failed" })
    expect(await balance(seller)).toBe(850)
    expect(await balance(buyer)).toBe(9_000)
  })

  it("REST: a seller waiting on an empty list is woken by the next order", async () => {
    const { seller, buy } = await market(100)
    const started = Date.now()
    const waiting = get(seller, `${C}/orders?status=pending&waitMs=10000`)
    await new Promise((r) => setTimeout(r, 300))
    const bought = await buy({ n: 1 })
    const woke = await waiting
    expect(woke.status).toBe(200)
    expect(woke.body.orders.map((o: { id: string }) => o.id)).toEqual([bought.body.transaction.id])
    expect(Date.now() - started).toBeLessThan(8_000)
    // Nothing pending and a short wait: an empty page when the wait ends.
    await post(seller, `${C}/orders/${bought.body.transaction.id}/deliver`, { output: 1 })
    const empty = await get(seller, `${C}/orders?status=pending&waitMs=200`)
    expect(empty.body).toEqual({ orders: [], nextCursor: null })
  })

  it("REST: keyset pages over the seller's orders", async () => {
    const { seller, buy } = await market(100)
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) ids.push((await buy({ i })).body.transaction.id)
    const first = await get(seller, `${C}/orders?limit=2`)
    expect(first.body.orders.map((o: { id: string }) => o.id)).toEqual(ids.slice(0, 2))
    const second = await get(seller, `${C}/orders?limit=2&cursor=${first.body.nextCursor}`)
    expect(second.body).toMatchObject({ nextCursor: null })
    expect(second.body.orders.map((o: { id: string }) => o.id)).toEqual(ids.slice(2))
  })

  it("orders are the seller's own: 403 without commerce:sell, 404 for another seller's order; bad input is 400 naming the field", async () => {
    const { seller, buy } = await market(100)
    const orderId = (await buy()).body.transaction.id as string
    const buyerOnly = await createAgentKey(server.baseUrl, ["commerce:read", "commerce:buy"])
    for (const refused of [
      await get(buyerOnly, `${C}/orders`),
      await post(buyerOnly, `${C}/orders/${orderId}/deliver`, { output: 1 }),
      await post(buyerOnly, `${C}/orders/${orderId}/fail`, { error: "no" })
    ]) {
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ permission: "commerce:sell" })
    }
    const otherSeller = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await get(otherSeller, `${C}/orders/${orderId}`)).status).toBe(404)
    expect((await post(otherSeller, `${C}/orders/${orderId}/deliver`, { output: 1 })).status).toBe(404)
    expect((await post(otherSeller, `${C}/orders/${orderId}/fail`, { error: "x" })).status).toBe(404)
    expect((await post(seller, `${C}/orders/tx_nope/deliver`, { output: 1 })).status).toBe(404)

    const bad: ReadonlyArray<readonly [Promise<Answer>, string]> = [
      [post(seller, `${C}/orders/${orderId}/deliver`, {}), "output"],
      [post(seller, `${C}/orders/${orderId}/deliver`, { output: 1, latencyMs: -1 }), "latencyMs"],
      [post(seller, `${C}/orders/${orderId}/deliver`, { output: 1, extra: true }), "extra"],
      [post(seller, `${C}/orders/${orderId}/fail`, { error: "" }), "error"],
      [post(seller, `${C}/orders/${orderId}/fail`, { error: "x".repeat(2_001) }), "error"],
      [get(seller, `${C}/orders?limit=0`), "limit"],
      [get(seller, `${C}/orders?waitMs=25001`), "waitMs"],
      [get(seller, `${C}/orders?status=lost`), "status"],
      [get(seller, `${C}/orders?cursor=zz`), "cursor"]
    ]
    for (const [answer, field] of bad) {
      const a = await answer
      expect([a.status, JSON.stringify(a.body)]).toEqual([400, expect.stringContaining(field)])
    }
    // Nothing above moved the order.
    expect((await get(seller, `${C}/orders/${orderId}`)).body.status).toBe("pending")
  })

  it("tRPC: commerce.orders, commerce.order, commerce.deliverOrder, commerce.failOrder", async () => {
    const { seller, buyer, buy } = await market(200)
    const first = (await buy({ via: "trpc" })).body.transaction.id as string
    const second = (await buy({ via: "trpc", n: 2 })).body.transaction.id as string
    const trpcGet = (k: AgentKey, name: string, input: unknown) =>
      get(k, `/api/trpc/${name}?input=${encodeURIComponent(JSON.stringify(input))}`)
    const listed = await trpcGet(seller, "commerce.orders", { status: "pending" })
    expect(listed.status).toBe(200)
    expect(listed.body.result.data.orders.map((o: { id: string }) => o.id)).toEqual([first, second])
    expect((await trpcGet(buyer, "commerce.order", { id: first })).body.result.data).toMatchObject({
      id: first,
      status: "pending"
    })
    const delivered = await post(seller, "/api/trpc/commerce.deliverOrder", { id: first, output: "done" })
    expect(delivered.body.result.data).toMatchObject({ id: first, status: "delivered", output: "done" })
    const failed = await post(seller, "/api/trpc/commerce.failOrder", { id: second, error: "cannot" })
    expect(failed.body.result.data).toMatchObject({ id: second, status: "failed" })
    expect(await balance(seller)).toBe(170)
    expect(await balance(buyer)).toBe(9_800)
    const closed = await post(seller, "/api/trpc/commerce.deliverOrder", { id: second, output: "late" })
    expect(closed.status).toBe(409)
    const missing = await post(seller, "/api/trpc/commerce.failOrder", { id: first, error: "" })
    expect([missing.status, missing.body.error.data.field]).toEqual([400, "error"])
    const buyerOnly = await createAgentKey(server.baseUrl, ["commerce:read", "commerce:buy"])
    expect((await trpcGet(buyerOnly, "commerce.orders", {})).status).toBe(403)
  })

  it("MCP: list_orders, get_order, deliver_order, fail_order", async () => {
    const { seller, buyer, buy } = await market(300)
    const first = (await buy({ via: "mcp" })).body.transaction.id as string
    const second = (await buy({ via: "mcp", n: 2 })).body.transaction.id as string
    const client = await mcp(seller)
    const listed = await client.callTool({ name: "list_orders", arguments: { status: "pending" } })
    expect(listed.isError).toBeFalsy()
    expect((listed.structuredContent as { orders: Array<{ id: string }> }).orders.map((o) => o.id)).toEqual([
      first,
      second
    ])
    const one = await client.callTool({ name: "get_order", arguments: { id: first } })
    expect(one.structuredContent).toMatchObject({ id: first, status: "pending" })
    const delivered = await client.callTool({ name: "deliver_order", arguments: { id: first, output: { ok: 1 } } })
    expect(delivered.structuredContent).toMatchObject({ id: first, status: "delivered" })
    const failed = await client.callTool({ name: "fail_order", arguments: { id: second, error: "no capacity" } })
    expect(failed.structuredContent).toMatchObject({ id: second, status: "failed" })
    const closed = await client.callTool({ name: "fail_order", arguments: { id: first, error: "no" } })
    expect(closed.isError).toBe(true)
    expect(await balance(seller)).toBe(255)
    expect(await balance(buyer)).toBe(9_700)
    await client.close()
  })
})
