// The ACP spec's own examples (examples/2026-04-17/examples.agentic_checkout.json), run against this
// seller on every storage: each request example is sent as written (its item ids replaced by a
// catalogue tier, the only change) and each answer must be one the spec's document allows. A request
// this seller cannot serve (a shipping option, a card handler it does not offer) is refused with the
// spec's Error naming the field, never a 5xx.
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { acpExamples, checkAnswer, validateSchema } from "../fixtures/acpSpec.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage } from "../fixtures/suite.js"

type Json = Record<string, unknown>
let server: RuntimeServer

const send = async (k: AgentKey, path: string, body: unknown) => {
  const res = await fetch(`${server.baseUrl}/acp${path}`, {
    method: "POST",
    headers: {
      ...k.auth,
      "api-version": "2026-04-17",
      "idempotency-key": randomBytes(8).toString("hex"),
      "content-type": "application/json"
    },
    body: JSON.stringify(body)
  })
  const json = (await res.json()) as Json
  expect(checkAnswer("POST", path, res.status, res.headers, json)).toBeUndefined()
  return { status: res.status, body: json }
}

/** An example with every line item's id replaced by `itemId`. */
const withItem = (example: Json, itemId: string): Json => ({
  ...example,
  line_items: (example.line_items as Array<Json>).map((l) => ({ ...l, id: itemId }))
})

const examplesNamed = (test: (name: string) => boolean) => Object.keys(acpExamples).filter(test)

describeEachStorage("the ACP spec's examples", (storage) => {
  let buyer: AgentKey
  let itemId: string
  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const res = await fetch(`${server.baseUrl}/api/v1/agent/commerce/services`, {
      method: "POST",
      headers: {
        ...seller.auth,
        "content-type": "application/json",
        "idempotency-key": randomBytes(8).toString("hex")
      },
      body: JSON.stringify({
        name: "Summaries",
        description: "a text summarised",
        category: "writing",
        pricingModel: "per_call",
        tiers: [
          {
            id: "short",
            name: "Short",
            priceCents: 250,
            unit: "call",
            includedUnits: null,
            sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
          }
        ]
      })
    })
    expect(res.status).toBe(201)
    itemId = `${((await res.json()) as Json).id as string}:short`
    buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  const open = async () => {
    const created = await send(
      buyer,
      "/checkout_sessions",
      withItem(acpExamples.create_checkout_session_request, itemId)
    )
    expect(created.status).toBe(201)
    return created.body.id as string
  }

  it("create_checkout_session_request*: a session, ready for payment, echoing the example's fulfilment details", async () => {
    const names = examplesNamed((n) => n.startsWith("create_checkout_session_request"))
    expect(names.length).toBeGreaterThanOrEqual(2)
    for (const name of names) {
      const created = await send(buyer, "/checkout_sessions", withItem(acpExamples[name], itemId))
      expect(created.status, name).toBe(201)
      expect(created.body.status).toBe("ready_for_payment")
      expect(created.body.fulfillment_details).toEqual(acpExamples[name].fulfillment_details)
    }
  })

  it("update_checkout_session_request: a shipping option is not one a digital service offers (400 naming it)", async () => {
    const id = await open()
    const updated = await send(buyer, `/checkout_sessions/${id}`, acpExamples.update_checkout_session_request)
    expect(updated.status).toBe(400)
    expect(updated.body).toMatchObject({ type: "invalid_request", param: "$.selected_fulfillment_options[0]" })
  })

  it("complete_*_request: the card examples' tokens are declined by the fake processor (402, nothing charged); a seller-backed handler is not offered (400)", async () => {
    const names = examplesNamed((n) => n.startsWith("complete_") && n.includes("_request"))
    const byCard = names.filter((n) => (acpExamples[n].payment_data as Json).handler_id === "card_tokenized")
    const others = names.filter((n) => !byCard.includes(n))
    expect([byCard.length, others.length]).toEqual([4, 1])
    for (const name of byCard) {
      const id = await open()
      const completed = await send(buyer, `/checkout_sessions/${id}/complete`, acpExamples[name])
      expect(completed.status, name).toBe(402)
      expect(completed.body, name).toMatchObject({ type: "invalid_request", code: "payment_declined" })
    }
    for (const name of others) {
      const id = await open()
      const completed = await send(buyer, `/checkout_sessions/${id}/complete`, acpExamples[name])
      expect(completed.status, name).toBe(400)
      expect(completed.body, name).toMatchObject({ type: "invalid_request", param: "$.payment_data.handler_id" })
    }
  })

  it("cancel_checkout_session_request*: canceled", async () => {
    for (const name of examplesNamed((n) => n.startsWith("cancel_checkout_session_request"))) {
      const id = await open()
      const canceled = await send(buyer, `/checkout_sessions/${id}/cancel`, acpExamples[name])
      expect(canceled.status, name).toBe(200)
      expect(canceled.body.status).toBe("canceled")
    }
  })
})

describe("the examples file against its own document", () => {
  it("the error examples are the spec's Error, and so are this seller's idempotency answers", () => {
    for (const name of examplesNamed((n) => n.startsWith("error_"))) {
      expect(validateSchema("Error", acpExamples[name]), name).toBeUndefined()
    }
  })

  it("the session examples the document accepts, and the three it refuses (defects of the 2026-04-17 release)", () => {
    for (const name of [
      "update_checkout_session_response",
      "get_checkout_session_response",
      "cancel_checkout_session_response",
      "checkout_session_authentication_required",
      "checkout_session_with_out_of_stock",
      "checkout_session_with_payment_declined"
    ]) {
      expect(validateSchema("CheckoutSession", acpExamples[name]), name).toBeUndefined()
    }
    // Fields the schemas do not have: a handler's display_order (declared beside `properties`, not
    // in it), the order's client_reference_id, and order_notes on the requests.
    expect(validateSchema("CheckoutSession", acpExamples.create_checkout_session_response)).toMatch(/display_order/)
    expect(validateSchema("CheckoutSessionWithOrder", acpExamples.complete_checkout_session_response)).toMatch(
      /client_reference_id/
    )
    expect(validateSchema("CheckoutSessionCreateRequest", acpExamples.create_checkout_session_request)).toMatch(
      /order_notes/
    )
  })
})
