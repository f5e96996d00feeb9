// End to end, on every storage: a paid call (HTTP 402, MPP) of an agent's pull service. The paid
// retry answers 202 pending — the price held in escrow, a Payment-Receipt that says `held`, where
// to follow the transaction — the seller lists the order and delivers it, and the buyer reads the
// output on the transaction; the credential is spent. The document declares that 202 (every
// response here is also checked against the served document: test/fixtures/contract.ts).
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { OPENAPI_PATH } from "../../src/http/openapi.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import { startPushSeller } from "../fixtures/pushSeller.js"

const C = "/api/v1/agent/commerce"
let server: TestServer

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any
const call = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: init.body
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Json }
}
const post = (k: AgentKey, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, {
    method: "POST",
    headers: { ...k.auth, "idempotency-key": randomBytes(8).toString("hex"), ...headers },
    body: JSON.stringify(body)
  })
const get = (k: AgentKey, path: string) => call(path, { headers: k.auth })
const balance = async (k: AgentKey) => (await get(k, `${C}/wallet`)).body.balanceCents as number

/** The Payment credential echoing the challenge of a 402 body (the credit method needs no payload). */
const credentialOf = (challenge: Json) =>
  `Payment ${Buffer.from(
    JSON.stringify({
      challenge: {
        id: challenge.id,
        realm: challenge.realm,
        method: challenge.method,
        intent: challenge.intent,
        request: challenge.request,
        expires: challenge.expires,
        digest: challenge.digest,
        header: challenge.header,
        opaque: challenge.opaque
      },
      payload: {}
    })
  ).toString("base64url")}`

describeEachStorage("paid calls of a pull seller over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("402 → paid → 202 pending (held, receipt says so) → the seller delivers → the transaction carries the output; the credential is spent", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const published = await post(seller, `${C}/services`, {
      name: "Real calls",
      description: "a per-call service its seller fulfils",
      category: "testing",
      pricingModel: "per_call",
      tiers: [
        {
          id: "unit",
          name: "Unit",
          priceCents: 100,
          unit: "call",
          includedUnits: null,
          sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
        }
      ]
    })
    expect(published.status).toBe(201)
    const serviceId = published.body.id as string
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await post(buyer, `${C}/wallet/topup`, { amountCents: 10_000 })

    const path = `${C}/services/${serviceId}/invoke?tier=unit`
    const body = { input: { text: "hello" } }
    const challenged = await post(buyer, path, body)
    expect(challenged.status).toBe(402)
    const credential = credentialOf(challenged.body.challenge)

    const paid = await post(buyer, path, body, { "payment-authorization": credential })
    expect(paid.status).toBe(202)
    expect(paid.headers.get("cache-control")).toBe("private")
    const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-receipt")!, "base64url").toString("utf8"))
    const txId = paid.body.transactionId as string
    expect(txId).toMatch(/^tx_/)
    expect(receipt).toMatchObject({
      status: "success",
      settlement: "held",
      challengeId: challenged.body.challengeId,
      transactionId: txId,
      amount: "100"
    })
    expect(receipt.reference).toMatch(/^je_/)
    expect(paid.body).toEqual({
      status: "pending",
      serviceId,
      tierId: "unit",
      transactionId: txId,
      heldCents: 100,
      deadlineAt: expect.stringMatching(/^\d{4}-/),
      output: null,
      receipt,
      follow: {
        transaction: `${C}/transactions/${txId}`,
        order: `${C}/orders/${txId}`,
        events: ["transaction.completed", "transaction.failed"]
      }
    })
    expect(await balance(buyer)).toBe(9_900)
    expect((await get(buyer, paid.body.follow.transaction)).body).toMatchObject({ status: "pending", delivery: null })

    const replay = await post(buyer, path, body, { "payment-authorization": credential })
    expect(replay.status).toBe(402)
    expect(replay.body.type).toBe("https://paymentauth.org/problems/invalid-challenge")

    const pending = await get(seller, `${C}/orders?status=pending`)
    expect(pending.body.orders.map((o: Json) => [o.id, o.input])).toEqual([[txId, { text: "hello" }]])
    const delivered = await post(seller, `${C}/orders/${txId}/deliver`, { output: { text: "HELLO" } })
    expect(delivered.status).toBe(200)
    const tx = await get(buyer, paid.body.follow.transaction)
    expect(tx.body).toMatchObject({ status: "completed", sellerCents: 85, feeCents: 15 })
    expect(tx.body.delivery).toMatchObject({ success: true, output: { text: "HELLO" } })
    expect(await balance(buyer)).toBe(9_900)
    expect(await balance(seller)).toBe(85)
  })

  it("POST /buy paid with a credential on a pull service: 202 with a held receipt, and the credential pays that purchase only", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const published = await post(seller, `${C}/services`, {
      name: "Real buys",
      description: "a service its seller fulfils",
      category: "testing",
      pricingModel: "per_call",
      tiers: [
        {
          id: "unit",
          name: "Unit",
          priceCents: 300,
          unit: "call",
          includedUnits: null,
          sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
        }
      ]
    })
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    const body = { serviceId: published.body.id, tierId: "unit", input: "x" }
    const short = await post(buyer, `${C}/buy`, body)
    expect(short.status).toBe(402)
    const credential = credentialOf(short.body.challenge)
    await post(buyer, `${C}/wallet/topup`, { amountCents: 1_000 })
    const bought = await post(buyer, `${C}/buy`, body, { "payment-authorization": credential })
    expect(bought.status).toBe(202)
    const receipt = JSON.parse(Buffer.from(bought.headers.get("payment-receipt")!, "base64url").toString("utf8"))
    expect(receipt).toMatchObject({ settlement: "held", transactionId: bought.body.transaction.id, amount: "300" })
    const again = await post(buyer, `${C}/buy`, body, { "payment-authorization": credential })
    expect(again.status).toBe(402)
    expect(again.body.type).toBe("https://paymentauth.org/problems/invalid-challenge")
    expect(await balance(buyer)).toBe(700)
  })

  it("POST /buy paid with a credential on a push service: the seller's inline answer is the purchase's answer (the order reached the seller before the buy's wait, not after it)", async () => {
    const pushSeller = await startPushSeller((push) => ({
      status: 200,
      body: { status: "delivered", output: { echoed: push.data.input } }
    }))
    try {
      const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
      const published = await post(seller, `${C}/services`, {
        name: "Pushed buys",
        description: "a service its seller answers inline",
        category: "testing",
        pricingModel: "per_call",
        tiers: [
          {
            id: "unit",
            name: "Unit",
            priceCents: 300,
            unit: "call",
            includedUnits: null,
            sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
          }
        ],
        fulfilment: { mode: "push", url: pushSeller.url }
      })
      expect(published.status).toBe(201)
      pushSeller.secret = published.body.fulfilmentSecret
      const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
      const body = { serviceId: published.body.id, tierId: "unit", input: "hello" }
      const short = await post(buyer, `${C}/buy`, body)
      expect(short.status).toBe(402)
      await post(buyer, `${C}/wallet/topup`, { amountCents: 1_000 })
      const started = Date.now()
      const bought = await post(buyer, `${C}/buy`, body, {
        "payment-authorization": credentialOf(short.body.challenge)
      })
      expect(bought.status).toBe(201)
      expect(bought.body).toMatchObject({ status: "completed", transaction: { status: "completed" } })
      expect(bought.body.transaction.delivery.output).toEqual({ echoed: "hello" })
      // Well inside ORDER_WAIT_MS (10 s): the wait began after the payment's unit of work committed.
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(pushSeller.pushes).toHaveLength(1)
      expect(pushSeller.pushes[0]!.verified).toBe(true)
      expect(await balance(buyer)).toBe(700)
      expect((await get(seller, `${C}/wallet`)).body.balanceCents).toBe(255)
    } finally {
      await pushSeller.close()
    }
  })

  it("the document declares the paid call's 202 (pending) beside its 200 (the result)", async () => {
    const doc = (await call(OPENAPI_PATH)).body
    const op = doc.paths[`${C}/services/{id}/invoke`].post
    const schemaOf = (code: string) => op.responses[code].content["application/json"].schema.$ref as string
    // 202: the order pending (its seller works), or an x402 settlement not confirmed yet (docs/x402.md).
    const accepted = op.responses["202"].content["application/json"].schema.anyOf.map((s: Json) => s.$ref)
    expect(accepted).toEqual([
      "#/components/schemas/PendingInvokeResultEncoded",
      "#/components/schemas/SettlementPendingResultEncoded"
    ])
    expect(schemaOf("200")).toBe("#/components/schemas/InvokeResultEncoded")
    expect(op.responses["202"].headers).toHaveProperty("Payment-Receipt")
    const pending = doc.components.schemas.PendingInvokeResultEncoded
    expect(pending.properties.status).toMatchObject({ enum: ["pending"] })
    expect(doc.components.schemas.InvokeResultEncoded.properties.status).toMatchObject({ enum: ["completed"] })
  })
})
