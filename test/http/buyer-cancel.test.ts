// What a buyer is promised over REST when it changes its mind (docs/commerce.md "Taking a purchase
// back"), on every storage: a purchase still waiting on its agent seller is cancelled with the price
// back from escrow in full, once (again: the same answer; the seller's later answer refused); an
// ended purchase keeps its outcome (409); a request still waiting for the owner's approval is
// withdrawn (nothing charged, the owner can no longer approve it). Only the buyer may do either.
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { agentApi, pullMarket } from "../fixtures/agentMarket.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const C = "/api/v1/agent/commerce"
type Json = Record<string, unknown>

let server: RuntimeServer

const call = (...args: Parameters<ReturnType<typeof agentApi>>) => agentApi(server.baseUrl)(...args)

/** A seller with a pull service at `priceCents`, and a buyer with $100 who buys it. */
const market = async (priceCents: number) => {
  const { seller, buyer, serviceId } = await pullMarket(server.baseUrl, { priceCents, name: "Takes a while" })
  const buy = () => call(buyer, "POST", `${C}/buy`, { serviceId, tierId: "unit", input: { text: "please" } })
  return { seller, buyer, buy }
}
const wallet = async (k: AgentKey) => (await call(k, "GET", `${C}/wallet`)).body

describeEachStorage("a buyer takes a purchase back", (storage) => {
  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, orderWaitMs: 0 }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("a purchase waiting on its seller: cancelled, the price back in full, once; the seller's late answer refused; only the buyer may", async () => {
    const { seller, buyer, buy } = await market(700)
    const bought = await buy()
    expect(bought.status).toBe(202)
    const id = (bought.body.transaction as Json).id as string
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_300, heldCents: 700 })

    // Not the seller's to cancel (it fails its order instead), nor a stranger's to see.
    expect((await call(seller, "POST", `${C}/transactions/${id}/cancel`)).status).toBe(403)
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await call(stranger, "POST", `${C}/transactions/${id}/cancel`)).status).toBe(404)
    const reader = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect((await call(reader, "POST", `${C}/transactions/${id}/cancel`)).status).toBe(403)

    const key = `cancel-${randomBytes(6).toString("hex")}`
    const cancelled = await call(buyer, "POST", `${C}/transactions/${id}/cancel`, undefined, key)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({
      id,
      role: "buyer",
      status: "failed",
      sellerCents: 0,
      delivery: { success: false, error: "cancelled by the buyer before the seller answered" }
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    // The same request again (replayed), or a new one: the same purchase, no second refund.
    expect(await call(buyer, "POST", `${C}/transactions/${id}/cancel`, undefined, key)).toEqual(cancelled)
    expect(await call(buyer, "POST", `${C}/transactions/${id}/cancel`)).toMatchObject({
      status: 200,
      body: { id, status: "failed" }
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    const late = await call(seller, "POST", `${C}/orders/${id}/deliver`, { output: "too late" })
    expect(late.status).toBe(409)
    expect(await wallet(seller)).toMatchObject({ balanceCents: 0, heldCents: 0 })
  })

  it("an ended purchase keeps its outcome: delivered or failed by the seller, a cancel is 409 naming its state", async () => {
    const { seller, buyer, buy } = await market(400)
    const delivered = ((await buy()).body.transaction as Json).id as string
    const failed = ((await buy()).body.transaction as Json).id as string
    expect((await call(seller, "POST", `${C}/orders/${delivered}/deliver`, { output: { ok: 1 } })).status).toBe(200)
    expect((await call(seller, "POST", `${C}/orders/${failed}/fail`, { error: "cannot" })).status).toBe(200)
    for (const [id, state] of [
      [delivered, "delivered"],
      [failed, "failed"]
    ] as const) {
      const refused = await call(buyer, "POST", `${C}/transactions/${id}/cancel`)
      expect(refused.status).toBe(409)
      expect(refused.body).toMatchObject({ type: "Conflict", state })
    }
    // The delivered one stays paid: the seller keeps its 85 %.
    expect(await wallet(seller)).toMatchObject({ balanceCents: 340 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_600, heldCents: 0 })
  })

  it("a request waiting for the owner's approval: withdrawn, nothing charged, the owner can no longer approve it; decided first, 409", async () => {
    const { buyer, buy } = await market(300)
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const asked = await buy()
    expect(asked.status).toBe(201)
    expect(asked.body).toMatchObject({ status: "pending_approval" })
    const approvalId = (asked.body.approval as Json).id as string

    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await call(stranger, "POST", `${C}/approvals/${approvalId}/withdraw`)).status).toBe(404)
    const withdrawn = await call(buyer, "POST", `${C}/approvals/${approvalId}/withdraw`)
    expect(withdrawn.status).toBe(200)
    expect(withdrawn.body).toMatchObject({ id: approvalId, status: "withdrawn" })
    // Again: the same approval.
    expect(await call(buyer, "POST", `${C}/approvals/${approvalId}/withdraw`)).toMatchObject({
      status: 200,
      body: { id: approvalId, status: "withdrawn" }
    })
    const owner = { cookie: buyer.cookie!, "content-type": "application/json" }
    const decide = (id: string, how: "approve" | "decline") =>
      fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${id}/${how}`, { method: "POST", headers: owner })
    const approve = await decide(approvalId, "approve")
    expect(approve.status).toBe(409)
    expect(await approve.json()).toMatchObject({ state: "withdrawn" })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })

    // Declined before the agent took it back: the owner's decision stands.
    const declined = ((await buy()).body.approval as Json).id as string
    expect((await decide(declined, "decline")).status).toBe(200)
    const refused = await call(buyer, "POST", `${C}/approvals/${declined}/withdraw`)
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ type: "Conflict", state: "declined" })
  })
})
