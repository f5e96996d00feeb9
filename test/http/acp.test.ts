// ACP checkout sessions (Agentic Commerce Protocol 2026-04-17) on every storage. What a shopping
// agent is promised: a session quotes a catalogue tier (line item, totals with the marketplace fee
// shown, the seller agent as MarketplaceSellerDetails, digital fulfilment); completing it pays from
// its own wallet once, however often the completion is retried under its Idempotency-Key, into an
// order held in escrow for an agent seller; a session can be cancelled until it is completed; every
// answer is one the spec's own OpenAPI document allows (test/fixtures/acpSpec.ts checks each).
import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { checkAnswer, requestSchemaOf, validateSchema } from "../fixtures/acpSpec.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage, type StorageName } from "../fixtures/suite.js"
import { STUB_SECRET_KEY, STUB_WEBHOOK_SECRET, startStripeStub, type StripeStub } from "../fixtures/stripeStub.js"
import { createHmac } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { AcpOrderNoticeStore } from "../../src/services/acp/AcpOrderNoticeStore.js"
import { CHARGE_DESCRIPTION_MAX, chargeDescription } from "../../src/services/acp/AcpCheckout.js"
import { eventually } from "../fixtures/wait.js"

const C = "/api/v1/agent/commerce"
const VERSION = "2026-04-17"
type Json = Record<string, unknown>

let server: RuntimeServer

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: Json
}

/**
 * One ACP call (path relative to /acp). The answer must be one the spec's document allows, and the
 * request one it calls valid unless `invalidRequest` says the test sends a wrong one on purpose.
 */
const acp = async (
  k: AgentKey | undefined,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  options: { readonly key?: string | null; readonly version?: string | null; readonly invalidRequest?: boolean } = {}
): Promise<Answer> => {
  const schema = requestSchemaOf(method, path.replace(/\?.*$/, ""))
  if (body !== undefined && schema !== undefined && options.invalidRequest !== true) {
    expect(validateSchema(schema, body), `the test's own ${schema}`).toBeUndefined()
  }
  const headers: Record<string, string> = { ...(k?.auth ?? {}) }
  if (options.version !== null) headers["api-version"] = options.version ?? VERSION
  if (method === "POST") {
    const key = options.key === undefined ? `idem-${randomBytes(8).toString("hex")}` : options.key
    if (key !== null) headers["idempotency-key"] = key
  }
  if (body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${server.baseUrl}/acp${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const json = (await res.json()) as Json
  expect(checkAnswer(method, path, res.status, res.headers, json)).toBeUndefined()
  return { status: res.status, headers: res.headers, body: json }
}

const call = async (k: AgentKey, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      ...k.auth,
      ...(body === undefined
        ? {}
        : { "content-type": "application/json", "idempotency-key": randomBytes(8).toString("hex") })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: res.status, body: (await res.json()) as Json }
}

/** A seller agent with a pull service at `priceCents`, and a buyer with $100 in its wallet. */
const market = async (priceCents = 1_000, funded = true) => {
  const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
  const published = await call(seller, "POST", `${C}/services`, {
    name: "Proofreading",
    description: "a page proofread by its seller",
    category: "writing",
    pricingModel: "per_call",
    tiers: [
      {
        id: "page",
        name: "One page",
        priceCents,
        unit: "page",
        includedUnits: null,
        sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
      }
    ]
  })
  expect(published.status).toBe(201)
  const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
  // (With PAYMENTS=stripe a top-up is a Stripe checkout: the card tests pay by card, from nothing.)
  if (funded) expect((await call(buyer, "POST", `${C}/wallet/topup`, { amountCents: 10_000 })).status).toBe(201)
  const serviceId = published.body.id as string
  return { seller, buyer, serviceId, itemId: `${serviceId}:page` }
}

const wallet = async (k: AgentKey) =>
  (await call(k, "GET", `${C}/wallet`)).body as { balanceCents: number; heldCents: number }

/** The buyer's ledger entries: what actually moved. */
const entriesOf = (agentId: string) =>
  server.run(
    Effect.gen(function* () {
      const ledger = yield* LedgerStore
      return yield* ledger.entriesFor(walletAccount(agentId), { limit: 50 })
    })
  )

const createBody = (itemId: string, extra: Json = {}) => ({
  line_items: [{ id: itemId }],
  currency: "usd",
  capabilities: {},
  ...extra
})

const walletPayment = (agentId: string) => ({
  payment_data: {
    handler_id: "wallet",
    instrument: { type: "agent_wallet", credential: { type: "agent_wallet", token: agentId } }
  }
})

const totalOf = (body: Json, type: string) =>
  (body.totals as Array<{ type: string; amount: number }>).find((t) => t.type === type)?.amount

/** The buyer's market and a second seller agent's service at `priceCents` (tier `call`). */
const twoSellers = async (firstCents: number, secondCents: number) => {
  const first = await market(firstCents)
  const other = await createAgentKey(server.baseUrl, ["commerce:*"])
  const published = await call(other, "POST", `${C}/services`, {
    name: "Translation",
    description: "a paragraph translated by its seller",
    category: "writing",
    pricingModel: "per_call",
    tiers: [
      {
        id: "call",
        name: "One paragraph",
        priceCents: secondCents,
        unit: "paragraph",
        includedUnits: null,
        sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
      }
    ]
  })
  expect(published.status).toBe(201)
  return {
    ...first,
    other,
    otherServiceId: published.body.id as string,
    otherItemId: `${published.body.id as string}:call`
  }
}
const linesBody = (itemIds: ReadonlyArray<string>, extra: Json = {}) => ({
  line_items: itemIds.map((id) => ({ id })),
  currency: "usd",
  capabilities: {},
  ...extra
})
/** Each order line's transaction, from its fulfilment (`ful_<transaction id>`). */
const transactionsOf = (order: Json) =>
  Object.fromEntries(
    (order.fulfillments as Array<{ id: string; line_items: Array<{ id: string }> }>).map((f) => [
      f.line_items[0]!.id,
      f.id.slice("ful_".length)
    ])
  )

/** The buyer's owner decides above 500 cents (an agent key may tighten its policy so). */
const ownerDecidesAbove500 = async (buyer: AgentKey) =>
  expect(
    (await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "semi_auto", approvalThresholdCents: 500 })).status
  ).toBe(200)

/** The owner decides the buyer's one pending approval (there must be exactly one). */
const decideThePending = async (buyer: AgentKey, how: "approve" | "decline") => {
  const pending = ((await call(buyer, "GET", `${C}/approvals`)).body.data as Array<Json>).filter(
    (a) => a.status === "pending"
  )
  expect(pending).toHaveLength(1)
  const decided = await fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${pending[0]!.id as string}/${how}`, {
    method: "POST",
    headers: { cookie: buyer.cookie!, "content-type": "application/json" }
  })
  expect(decided.status).toBe(200)
}

/** A server on `storage` for the suite's tests (sellers answer a push within 200 ms). */
const serveOn = (storage: StorageName) => {
  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, orderWaitMs: 200 }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })
}

describeEachStorage("ACP checkout sessions", (storage) => {
  serveOn(storage)

  it("create, read, update, then complete from the wallet once under a replayed Idempotency-Key: one hold in escrow, paid 85 % on delivery", async () => {
    const { seller, buyer, itemId, serviceId } = await market(1_000)

    const created = await acp(
      buyer,
      "POST",
      "/checkout_sessions",
      createBody(itemId, { metadata: { input: { page: "teh cat" } } })
    )
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect(created.body).toMatchObject({ status: "ready_for_payment", currency: "usd", protocol: { version: VERSION } })
    const [line] = created.body.line_items as Array<Json>
    expect(line).toMatchObject({
      item: { id: itemId, unit_amount: 1_000 },
      quantity: 1,
      unit_amount: 1_000,
      product_id: serviceId,
      variant_id: "page"
    })
    // The seller agent, named as the spec's marketplace seller.
    expect((line.marketplace_seller_details as Json).name).toMatch(/^agent-/)
    // The price is what the buyer pays; the 15 % fee is shown, paid by the seller out of it.
    expect(totalOf(created.body, "total")).toBe(1_000)
    expect(totalOf(created.body, "fee")).toBe(150)
    expect(created.body.fulfillment_options).toEqual([expect.objectContaining({ type: "digital", id: "digital" })])
    const handlers = (created.body.capabilities as { payment: { handlers: Array<Json> } }).payment.handlers
    expect(handlers.map((h) => h.id)).toEqual(["wallet", "card_tokenized"])
    expect(handlers[1]).toMatchObject({ name: "dev.acp.tokenized.card", psp: "fake", requires_delegate_payment: true })
    // The handlers' specs and schemas are served where they say.
    for (const handler of handlers as Array<{
      spec: string
      config_schema: string
      instrument_schemas: Array<string>
    }>) {
      for (const url of [handler.spec, handler.config_schema, ...handler.instrument_schemas]) {
        expect((await fetch(url)).status, url).toBe(200)
      }
    }
    const [handler] = handlers as Array<{ instrument_schemas: Array<string> }>
    const instrument = (await (await fetch(handler.instrument_schemas[0])).json()) as Json
    expect(instrument).toMatchObject({
      required: ["type", "credential"],
      properties: { type: { const: "agent_wallet" } }
    })

    const read = await acp(buyer, "GET", `/checkout_sessions/${id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(created.body)

    const buyer_ = { email: "buyer-agent@example.com", first_name: "Buyer" }
    const updated = await acp(buyer, "POST", `/checkout_sessions/${id}`, {
      buyer: buyer_,
      selected_fulfillment_options: [{ type: "digital", option_id: "digital", item_ids: ["line_item_1"] }]
    })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ status: "ready_for_payment", buyer: buyer_ })
    // Nothing has moved yet.
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })

    const key = `complete-${randomBytes(6).toString("hex")}`
    const completed = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId), {
      key
    })
    expect(completed.status).toBe(200)
    expect(completed.headers.get("idempotency-key")).toBe(key)
    expect(completed.headers.get("idempotent-replayed")).toBeNull()
    expect(completed.body.status).toBe("completed")
    const order = completed.body.order as Json
    expect(order).toMatchObject({ checkout_session_id: id, status: "processing" })
    expect(order.id).toMatch(/^tx_/)
    expect((order.fulfillments as Array<Json>)[0]).toMatchObject({ type: "digital", status: "processing" })

    // The retry (same key, same body) is the first answer again, marked; nothing more is charged.
    const retried = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId), { key })
    expect(retried.status).toBe(200)
    expect(retried.headers.get("idempotent-replayed")).toBe("true")
    expect(retried.body).toEqual(completed.body)
    // The same key for another request is the spec's 422; a new key for the completed session, its 400.
    const reused = await acp(
      buyer,
      "POST",
      `/checkout_sessions/${id}/complete`,
      { ...walletPayment(buyer.agentId), buyer: buyer_ },
      { key }
    )
    expect(reused.status).toBe(422)
    expect(reused.body).toMatchObject({ type: "invalid_request", code: "idempotency_conflict" })
    const again = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(again.status).toBe(400)
    expect(again.body).toMatchObject({ code: "session_closed" })

    // The ledger: one hold of the price from the buyer's wallet into escrow, nothing else.
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 1_000 })
    const holds = (await entriesOf(buyer.agentId)).filter((e) => e.kind === "escrow_hold")
    expect(holds).toHaveLength(1)
    expect(holds[0].postings).toContainEqual({ account: walletAccount(buyer.agentId), amount: -1_000 })

    // The seller sees the order with the session's input, delivers, and is paid 85 %.
    const delivered = await call(seller, "POST", `${C}/orders/${order.id as string}/deliver`, {
      output: { page: "the cat" }
    })
    expect(delivered.status).toBe(200)
    expect(await wallet(seller)).toMatchObject({ balanceCents: 850 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 0 })
    const after = await acp(buyer, "GET", `/checkout_sessions/${id}`)
    expect(after.body.status).toBe("completed")
    expect(JSON.stringify(after.body.messages)).toContain(`Order ${order.id as string}: completed`)
    const tx = await call(buyer, "GET", `${C}/transactions/${order.id as string}`)
    expect(tx.body).toMatchObject({ status: "completed", priceCents: 1_000, sellerCents: 850, feeCents: 150 })
  })

  it("cancel: an open session is canceled (nothing charged); a canceled one is not cancelable (405) nor payable", async () => {
    const { buyer, itemId } = await market(500)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const canceled = await acp(buyer, "POST", `/checkout_sessions/${id}/cancel`, {
      intent_trace: { reason_code: "price_sensitivity", trace_summary: "too dear" }
    })
    expect(canceled.status).toBe(200)
    expect(canceled.body.status).toBe("canceled")
    const twice = await acp(buyer, "POST", `/checkout_sessions/${id}/cancel`)
    expect(twice.status).toBe(405)
    expect(twice.body).toMatchObject({ type: "invalid_request", code: "not_cancelable" })
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(paid.status).toBe(400)
    expect(paid.body).toMatchObject({ code: "session_closed" })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
  })

  it("a completed session is not cancelable", async () => {
    const { buyer, itemId } = await market(300)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    expect((await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))).status).toBe(
      200
    )
    const cancel = await acp(buyer, "POST", `/checkout_sessions/${id}/cancel`)
    expect(cancel.status).toBe(405)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_700, heldCents: 300 })
  })

  it("the spec's headers: API-Version and Idempotency-Key are required on a POST; the key is the caller's and the endpoint's", async () => {
    const { buyer, itemId } = await market()
    const noVersion = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId), { version: null })
    expect(noVersion.status).toBe(400)
    expect(noVersion.body).toMatchObject({ code: "api_version_required" })
    const oldVersion = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId), { version: "2025-09-29" })
    expect(oldVersion.body).toMatchObject({ code: "unsupported_api_version" })
    const noKey = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId), { key: null })
    expect(noKey.status).toBe(400)
    expect(noKey.body).toEqual({
      type: "invalid_request",
      code: "idempotency_key_required",
      message: "Idempotency-Key header is required"
    })
    // One key, two endpoints: two requests (the spec scopes a key to the identity and the endpoint).
    const key = `k-${randomBytes(6).toString("hex")}`
    const first = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId), { key })
    expect(first.status).toBe(201)
    const cancel = await acp(buyer, "POST", `/checkout_sessions/${first.body.id as string}/cancel`, undefined, { key })
    expect(cancel.status).toBe(200)
    // Another caller with the same key is not answered the first caller's session.
    const other = await market()
    const theirs = await acp(other.buyer, "POST", "/checkout_sessions", createBody(other.itemId), { key })
    expect(theirs.status).toBe(201)
    expect(theirs.body.id).not.toBe(first.body.id)
    expect(theirs.headers.get("idempotent-replayed")).toBeNull()
  })

  it("a purchase made elsewhere under `Idempotency-Key: acp:<session id>` is not the session's: the session still sells its own item", async () => {
    const { buyer, itemId, serviceId } = await market(900)
    const other = await market(100)
    const id = (await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))).body.id as string
    // Over REST, another (cheaper) service bought under a key spelled like the session's old purchase key.
    const res = await fetch(`${server.baseUrl}${C}/buy`, {
      method: "POST",
      headers: { ...buyer.auth, "content-type": "application/json", "idempotency-key": `acp:${id}` },
      body: JSON.stringify({ serviceId: other.serviceId, tierId: "page", input: "x" })
    })
    expect(res.status).toBe(202)
    expect((await acp(buyer, "GET", `/checkout_sessions/${id}`)).body).toMatchObject({ status: "ready_for_payment" })
    const before = await wallet(buyer)
    const done = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(done.status).toBe(200)
    // The session's own item, bought now: its price held, the order its service's.
    const order = done.body.order as Json & { line_items: ReadonlyArray<Json> }
    expect(order.line_items[0]).toMatchObject({ product_id: serviceId, unit_price: 900 })
    expect(await wallet(buyer)).toMatchObject({
      balanceCents: before.balanceCents - 900,
      heldCents: before.heldCents + 900
    })
  })

  it("a delegated card token pays: charged through the payments layer, credited to the wallet and spent from it, under one replayed key", async () => {
    const { buyer, itemId } = await market(1_000)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const card = (token: string) => ({
      payment_data: {
        handler_id: "card_tokenized",
        instrument: { type: "card", credential: { type: "spt", token } }
      }
    })
    const declined = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, card("spt_test_declined"))
    expect(declined.status).toBe(402)
    expect(declined.body).toMatchObject({ type: "invalid_request", code: "payment_declined" })
    expect((await entriesOf(buyer.agentId)).filter((e) => e.kind !== "grant")).toEqual([])

    const key = `card-${randomBytes(6).toString("hex")}`
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, card("spt_test_visa"), { key })
    expect(paid.status).toBe(200)
    expect(paid.body).toMatchObject({ status: "completed", order: { status: "processing" } })
    const replay = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, card("spt_test_visa"), { key })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body).toEqual(paid.body)
    // The card paid the price: the wallet's own credits are untouched, the price held in escrow.
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 1_000 })
    const moved = (await entriesOf(buyer.agentId)).filter((e) => e.kind !== "grant")
    expect(moved.map((e) => e.kind).sort()).toEqual(["escrow_hold", "funding"])
    const funding = moved.find((e) => e.kind === "funding")!
    expect(funding.reference).toMatch(/^ch_fake_/)
    expect(funding.postings).toContainEqual({ account: walletAccount(buyer.agentId), amount: 1_000 })
  })

  it("a purchase the owner must approve: pending_approval (the order in manual_review), then completed once the owner approves; nothing charged before", async () => {
    const { buyer, itemId } = await market(800)
    const manual = await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })
    expect(manual.status).toBe(200)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const waiting = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(waiting.status).toBe(200)
    expect(waiting.body).toMatchObject({ status: "pending_approval", order: { status: "manual_review" } })
    expect((await acp(buyer, "GET", `/checkout_sessions/${id}`)).body.status).toBe("pending_approval")
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })

    const approvalId = (waiting.body.order as Json).id as string
    const approved = await fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${approvalId}/approve`, {
      method: "POST",
      headers: { cookie: buyer.cookie, "content-type": "application/json" }
    })
    expect(approved.status).toBe(200)
    const after = await acp(buyer, "GET", `/checkout_sessions/${id}`)
    expect(after.body.status).toBe("completed")
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_200, heldCents: 800 })
    // Approved, it is a purchase: no longer the agent's to cancel.
    const late = await acp(buyer, "POST", `/checkout_sessions/${id}/cancel`)
    expect(late.status).toBe(405)
    expect(late.body).toMatchObject({ code: "not_cancelable" })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_200, heldCents: 800 })
  })

  it("a session waiting for its owner's approval is the agent's to cancel: the approval withdrawn, nothing spent, the owner can no longer approve it; declined first, not cancelable", async () => {
    const { buyer, itemId } = await market(800)
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const open = async () => {
      const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
      const id = body.id as string
      const waiting = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
      expect(waiting.body).toMatchObject({ status: "pending_approval" })
      return { id, approvalId: (waiting.body.order as Json).id as string }
    }
    const owner = { cookie: buyer.cookie, "content-type": "application/json" }
    const decide = (approvalId: string, how: "approve" | "decline") =>
      fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${approvalId}/${how}`, {
        method: "POST",
        headers: owner
      })

    const first = await open()
    const canceled = await acp(buyer, "POST", `/checkout_sessions/${first.id}/cancel`, {
      intent_trace: { reason_code: "other", trace_summary: "no longer needed" }
    })
    expect(canceled.status).toBe(200)
    expect(canceled.body.status).toBe("canceled")
    expect(JSON.stringify(canceled.body.messages)).toMatch(/withdrawn before the owner decided/)
    expect((await acp(buyer, "GET", `/checkout_sessions/${first.id}`)).body.status).toBe("canceled")
    const approval = (await call(buyer, "GET", `${C}/approvals`)).body.data as Array<Json>
    expect(approval.find((a) => a.id === first.approvalId)).toMatchObject({ status: "withdrawn" })
    const approve = await decide(first.approvalId, "approve")
    expect(approve.status).toBe(409)
    expect(await approve.json()).toMatchObject({ state: "withdrawn" })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    // Canceled: not again, and not payable.
    expect((await acp(buyer, "POST", `/checkout_sessions/${first.id}/cancel`)).status).toBe(405)
    const paid = await acp(buyer, "POST", `/checkout_sessions/${first.id}/complete`, walletPayment(buyer.agentId))
    expect(paid.body).toMatchObject({ code: "session_closed" })

    // The owner declined first: the session is canceled already, and the cancel is refused.
    const second = await open()
    expect((await decide(second.approvalId, "decline")).status).toBe(200)
    expect((await acp(buyer, "GET", `/checkout_sessions/${second.id}`)).body.status).toBe("canceled")
    const refused = await acp(buyer, "POST", `/checkout_sessions/${second.id}/cancel`)
    expect(refused.status).toBe(405)
    expect(refused.body).toMatchObject({ code: "not_cancelable" })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
  })

  it("one Idempotency-Key sent five times at once opens one session: each answer is that session (201, replayed) or the spec's 409 with Retry-After", async () => {
    const { buyer, itemId } = await market()
    const key = `race-${randomBytes(6).toString("hex")}`
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => acp(buyer, "POST", "/checkout_sessions", createBody(itemId), { key }))
    )
    for (const a of answers) expect([201, 409]).toContain(a.status)
    const created = answers.filter((a) => a.status === 201)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1)
    expect(created.filter((a) => a.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.headers.get("retry-after")).toBe("1")
      expect(a.body).toMatchObject({ type: "invalid_request", code: "idempotency_in_flight" })
    }
    // Once the first is done, the key answers the same session again.
    const later = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId), { key })
    expect(later.body.id).toBe(created[0].body.id)
    expect(later.headers.get("idempotent-replayed")).toBe("true")
  })

  it("refusals are the spec's Error, naming the field: no key, an item not for sale, another agent's wallet, another agent's session", async () => {
    const { buyer, itemId, serviceId } = await market()
    const anonymous = await acp(undefined, "POST", "/checkout_sessions", createBody(itemId))
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ type: "invalid_request", code: "unauthorized" })
    for (const bad of [`${serviceId}:nope`, "item_123", `${serviceId}`]) {
      const refused = await acp(buyer, "POST", "/checkout_sessions", createBody(bad))
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ type: "invalid_request", param: "$.line_items[0].id" })
    }
    const noEmail = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId, { buyer: { first_name: "A" } }), {
      invalidRequest: true
    })
    expect(noEmail.body).toMatchObject({ param: "$.buyer.email" })
    const noCurrency = await acp(
      buyer,
      "POST",
      "/checkout_sessions",
      { line_items: [{ id: itemId }], capabilities: {} },
      { invalidRequest: true }
    )
    expect(noCurrency.body).toMatchObject({ param: "$.currency" })
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const someoneElse = await createAgentKey(server.baseUrl, ["commerce:*"])
    const stolen = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(someoneElse.agentId))
    expect(stolen.status).toBe(400)
    expect(stolen.body).toMatchObject({ param: "$.payment_data.instrument.credential" })
    expect((await acp(someoneElse, "GET", `/checkout_sessions/${id}`)).status).toBe(404)
    const theirs = await acp(
      someoneElse,
      "POST",
      `/checkout_sessions/${id}/complete`,
      walletPayment(someoneElse.agentId)
    )
    expect(theirs.status).toBe(404)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
  })

  it("a wallet that cannot pay is the spec's Error (payment_declined) and the session stays payable", async () => {
    const { buyer, itemId } = await market(20_000)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const declined = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(declined.status).toBe(402)
    expect(declined.body).toMatchObject({ type: "invalid_request", code: "payment_declined" })
    expect((await acp(buyer, "GET", `/checkout_sessions/${id}`)).body.status).toBe("ready_for_payment")
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
  })
})

// A session of several items (docs/acp.md "Several items"): what the agent is promised is one
// checkout for the lot — a purchase per line, all made in one unit of work or none, one card charge
// for the total, the order following each line, and the owner's approval asked line by line.
describeEachStorage("ACP checkout sessions of several items", (storage) => {
  serveOn(storage)

  it("one session, a purchase per line (the same tier twice is two), made together from the wallet once under a replayed key; each seller paid for its own line", async () => {
    const { seller, other, buyer, itemId, otherItemId } = await twoSellers(1_000, 600)
    const created = await acp(
      buyer,
      "POST",
      "/checkout_sessions",
      linesBody([itemId, otherItemId, itemId], {
        metadata: { input: { page: "shared" }, inputs: [{ page: "first" }, { paragraph: "hola" }] }
      })
    )
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect((created.body.line_items as Array<Json>).map((l) => [l.id, l.unit_amount])).toEqual([
      ["line_item_1", 1_000],
      ["line_item_2", 600],
      ["line_item_3", 1_000]
    ])
    // The session's total is the lines' sum; the fee (15 %) shown is the sum's, paid by the sellers out of it.
    expect(totalOf(created.body, "total")).toBe(2_600)
    expect(totalOf(created.body, "fee")).toBe(390)

    const key = `complete-${randomBytes(6).toString("hex")}`
    const completed = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId), {
      key
    })
    expect(completed.status).toBe(200)
    expect(completed.body).toMatchObject({ status: "completed", order: { status: "processing" } })
    const order = completed.body.order as Json
    expect((order.line_items as Array<Json>).map((l) => [l.id, l.unit_price, l.status])).toEqual([
      ["line_item_1", 1_000, "processing"],
      ["line_item_2", 600, "processing"],
      ["line_item_3", 1_000, "processing"]
    ])
    expect(totalOf(order, "total")).toBe(2_600)
    const txs = transactionsOf(order)
    expect(new Set(Object.values(txs)).size).toBe(3)
    expect(order.id).toBe(txs.line_item_1)

    const replay = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId), { key })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body).toEqual(completed.body)
    expect(
      (await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))).body
    ).toMatchObject({ code: "session_closed" })
    // Three holds, one per line: 2,600 held, nothing else moved.
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 7_400, heldCents: 2_600 })
    const holds = (await entriesOf(buyer.agentId)).filter((e) => e.kind === "escrow_hold")
    expect(
      holds.map((h) => -h.postings.find((p) => p.account === walletAccount(buyer.agentId))!.amount).sort()
    ).toEqual([1_000, 1_000, 600])
    // Each line's input, as its seller reads the order: its own from `inputs`, else the session's `input`.
    const inputs = await Promise.all(
      (
        [
          [seller, "line_item_1"],
          [other, "line_item_2"],
          [seller, "line_item_3"]
        ] as const
      ).map(async ([k, line]) => (await call(k, "GET", `${C}/orders/${txs[line]!}`)).body.input)
    )
    expect(inputs).toEqual([{ page: "first" }, { paragraph: "hola" }, { page: "shared" }])

    // Each seller delivers its own lines and is paid 85 % of them; the order follows line by line.
    expect((await call(seller, "POST", `${C}/orders/${txs.line_item_1!}/deliver`, { output: "ok" })).status).toBe(200)
    const partly = await acp(buyer, "GET", `/checkout_sessions/${id}`)
    expect(JSON.stringify(partly.body.messages)).toContain(`Order ${txs.line_item_1!}: processing`)
    expect((await call(other, "POST", `${C}/orders/${txs.line_item_2!}/deliver`, { output: "hello" })).status).toBe(200)
    expect((await call(seller, "POST", `${C}/orders/${txs.line_item_3!}/deliver`, { output: "ok" })).status).toBe(200)
    expect(await wallet(seller)).toMatchObject({ balanceCents: 1_700 })
    expect(await wallet(other)).toMatchObject({ balanceCents: 510 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 7_400, heldCents: 0 })
    const done = await acp(buyer, "GET", `/checkout_sessions/${id}`)
    expect(JSON.stringify(done.body.messages)).toContain(`Order ${txs.line_item_1!}: completed`)
  })

  it("the lines are bought together or not at all: a limit they reach together, a wallet short for the last, a price moved on one — nothing bought, the session still payable", async () => {
    const { seller, buyer, itemId, serviceId, otherItemId } = await twoSellers(1_000, 600)
    const open = async (itemIds: ReadonlyArray<string>) =>
      (await acp(buyer, "POST", "/checkout_sessions", linesBody(itemIds))).body.id as string
    const untouched = async (id: string) => {
      expect((await acp(buyer, "GET", `/checkout_sessions/${id}`)).body.status).toBe("ready_for_payment")
      expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
      expect((await entriesOf(buyer.agentId)).filter((e) => e.kind !== "grant")).toEqual([])
    }

    // Each line is under the daily limit; the lines together are over it.
    expect((await call(buyer, "PATCH", `${C}/wallet`, { dailyLimitCents: 1_500 })).status).toBe(200)
    const overLimit = await open([itemId, otherItemId])
    const refused = await acp(buyer, "POST", `/checkout_sessions/${overLimit}/complete`, walletPayment(buyer.agentId))
    expect(refused.status).toBe(403)
    await untouched(overLimit)

    // The price of the second line moved since the quote: refused naming that line.
    const moved = await open([otherItemId, itemId])
    const tiers = [
      {
        id: "page",
        name: "One page",
        priceCents: 1_100,
        unit: "page",
        includedUnits: null,
        sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
      }
    ]
    expect((await call(seller, "PATCH", `${C}/services/${serviceId}`, { tiers })).status).toBe(200)
    const stale = await acp(buyer, "POST", `/checkout_sessions/${moved}/complete`, walletPayment(buyer.agentId))
    expect(stale.status).toBe(400)
    expect(stale.body).toMatchObject({ param: "$.line_items[1]" })
    await untouched(moved)
  })

  it("a wallet that can pay for the first lines but not the last buys none of them", async () => {
    const { buyer, itemId, otherItemId } = await twoSellers(6_000, 4_500)
    const id = (await acp(buyer, "POST", "/checkout_sessions", linesBody([itemId, otherItemId]))).body.id as string
    const short = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(short.status).toBe(402)
    expect(short.body).toMatchObject({ code: "payment_declined" })
    expect((await acp(buyer, "GET", `/checkout_sessions/${id}`)).body.status).toBe("ready_for_payment")
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
  })

  it("a line the owner must approve waits while the others are bought; approved, the order completes; once a line is bought the session is not cancelable", async () => {
    const { buyer, itemId, otherItemId } = await twoSellers(800, 300)
    // Above 500 cents the owner decides.
    await ownerDecidesAbove500(buyer)
    const id = (await acp(buyer, "POST", "/checkout_sessions", linesBody([otherItemId, itemId]))).body.id as string
    const waiting = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(waiting.body).toMatchObject({ status: "pending_approval", order: { status: "manual_review" } })
    const order = waiting.body.order as Json
    expect((order.line_items as Array<Json>).map((l) => [l.id, l.status])).toEqual([
      ["line_item_1", "processing"],
      ["line_item_2", "processing"]
    ])
    // The 300-cent line is bought (held for its seller); the 800-cent one charged nothing yet.
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_700, heldCents: 300 })
    expect(Object.keys(transactionsOf(order))).toEqual(["line_item_1"])
    const refused = await acp(buyer, "POST", `/checkout_sessions/${id}/cancel`)
    expect(refused.status).toBe(405)
    expect(refused.body).toMatchObject({ code: "not_cancelable" })

    await decideThePending(buyer, "approve")
    const after = await acp(buyer, "GET", `/checkout_sessions/${id}`)
    expect(after.body.status).toBe("completed")
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 8_900, heldCents: 1_100 })
  })

  it("lines that all wait for the owner: cancel withdraws every approval, nothing spent; a declined line in a completed order bought nothing", async () => {
    const { buyer, itemId, otherItemId } = await twoSellers(800, 700)
    await ownerDecidesAbove500(buyer)
    const id = (await acp(buyer, "POST", "/checkout_sessions", linesBody([itemId, otherItemId]))).body.id as string
    const waiting = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(waiting.body).toMatchObject({ status: "pending_approval", order: { status: "manual_review" } })
    const canceled = await acp(buyer, "POST", `/checkout_sessions/${id}/cancel`)
    expect(canceled.status).toBe(200)
    expect(canceled.body.status).toBe("canceled")
    expect(JSON.stringify(canceled.body.messages)).toMatch(/withdrawn before the owner decided/)
    const approvals = (await call(buyer, "GET", `${C}/approvals`)).body.data as Array<Json>
    expect(approvals.map((a) => a.status)).toEqual(["withdrawn", "withdrawn"])
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })

    // A line under the threshold is bought; the other, declined by the owner: the order completes without it.
    const { itemId: cheap } = await market(200)
    const mixed = (await acp(buyer, "POST", "/checkout_sessions", linesBody([cheap, itemId]))).body.id as string
    const half = await acp(buyer, "POST", `/checkout_sessions/${mixed}/complete`, walletPayment(buyer.agentId))
    expect(half.body).toMatchObject({ status: "pending_approval" })
    await decideThePending(buyer, "decline")
    const read = await acp(buyer, "GET", `/checkout_sessions/${mixed}`)
    expect(read.body.status).toBe("completed")
    expect(JSON.stringify(read.body.messages)).toMatch(/line_item_2: the owner's approval ended declined/)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_800, heldCents: 200 })
  })

  it("a card pays the session's total in one charge, credited once and spent line by line", async () => {
    const { buyer, itemId, otherItemId } = await twoSellers(1_000, 600)
    const id = (await acp(buyer, "POST", "/checkout_sessions", linesBody([itemId, otherItemId]))).body.id as string
    const card = {
      payment_data: {
        handler_id: "card_tokenized",
        instrument: { type: "card", credential: { type: "spt", token: "spt_test_visa" } }
      }
    }
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, card)
    expect(paid.body).toMatchObject({ status: "completed", order: { status: "processing" } })
    const moved = (await entriesOf(buyer.agentId)).filter((e) => e.kind !== "grant")
    const fundings = moved.filter((e) => e.kind === "funding")
    expect(fundings).toHaveLength(1)
    expect(fundings[0]!.postings).toContainEqual({ account: walletAccount(buyer.agentId), amount: 1_600 })
    expect(moved.filter((e) => e.kind === "escrow_hold")).toHaveLength(2)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 1_600 })
  })

  it("at most ten items: an eleventh is refused naming it", async () => {
    const { buyer, itemId } = await market()
    const eleven = await acp(buyer, "POST", "/checkout_sessions", linesBody(Array.from({ length: 11 }, () => itemId)))
    expect(eleven.status).toBe(400)
    expect(eleven.body).toMatchObject({ type: "invalid_request", param: "$.line_items[10]" })
    const ten = await acp(buyer, "POST", "/checkout_sessions", linesBody(Array.from({ length: 10 }, () => itemId)))
    expect(ten.status).toBe(201)
    expect(totalOf(ten.body, "total")).toBe(10_000)
  })
})

// The card handler on Stripe (PAYMENTS=stripe): the adapter (src/layers/payments/DelegatedPayments.stripe.ts)
// against a local Stripe stand-in (test/fixtures/stripeStub.ts), with the official SDK on the wire.
describeEachStorage("ACP checkout sessions, the card paid through Stripe", (storage) => {
  let stub: StripeStub
  beforeAll(async () => {
    stub = await startStripeStub()
    server = await startRuntimeServer({
      storage,
      config: {
        rateLimitPerMinute: 100_000,
        rateLimitPerDay: 1_000_000,
        orderWaitMs: 0,
        payments: "stripe",
        stripeSecretKey: Option.some(Redacted.make(STUB_SECRET_KEY)),
        stripeWebhookSecret: Option.some(Redacted.make(STUB_WEBHOOK_SECRET)),
        stripeApiBase: Option.some(stub.baseUrl)
      }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await stub?.close()
  })

  const card = (token: string) => ({
    payment_data: { handler_id: "card_tokenized", instrument: { type: "card", credential: { type: "spt", token } } }
  })
  const intentsFor = (sessionId: string) => stub.intents.filter((i) => i.metadata.acp_checkout_session_id === sessionId)

  it("a Shared Payment Token is charged once by a confirmed PaymentIntent for the session's total, credited and spent; a replayed completion charges nothing more", async () => {
    const { buyer, itemId } = await market(1_234, false)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const key = `stripe-${randomBytes(6).toString("hex")}`
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, card("spt_test_visa"), { key })
    expect(paid.status).toBe(200)
    expect(paid.body).toMatchObject({ status: "completed" })
    const [intent, ...more] = intentsFor(id)
    expect(more).toEqual([])
    expect(intent).toMatchObject({ amount: 1_234, currency: "usd", token: "spt_test_visa", status: "succeeded" })
    expect(intent!.metadata).toMatchObject({ agent_id: buyer.agentId })
    // Sent as Stripe asks: confirmed at once, no redirects, under an Idempotency-Key.
    const sent = stub.requests.find(
      (r) =>
        r.path === "/v1/payment_intents" &&
        r.body.shared_payment_granted_token === "spt_test_visa" &&
        (r.body.metadata as Json)?.acp_checkout_session_id === id
    )!
    expect(sent.body).toMatchObject({
      confirm: "true",
      automatic_payment_methods: { enabled: "true", allow_redirects: "never" }
    })
    expect(typeof sent.headers["idempotency-key"]).toBe("string")
    // The charge funded the wallet (its reference the PaymentIntent) and the purchase spent it.
    const funding = (await entriesOf(buyer.agentId)).find((e) => e.kind === "funding")!
    expect(funding.reference).toBe(intent!.id)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 0, heldCents: 1_234 })
    const replay = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, card("spt_test_visa"), { key })
    expect(replay.body).toEqual(paid.body)
    expect(intentsFor(id)).toHaveLength(1)
  })

  it("a declined card or one that needs an action buys nothing; a purchase the policy refuses charges nothing; one refused after the charge gives the charge back", async () => {
    const { buyer, itemId } = await market(700, false)
    const open = async () => (await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))).body.id as string
    const declined = await open()
    const refused = await acp(buyer, "POST", `/checkout_sessions/${declined}/complete`, card("spt_test_declined"))
    expect(refused.status).toBe(402)
    expect(refused.body).toMatchObject({ code: "payment_declined" })
    const action = await open()
    const needsAction = await acp(buyer, "POST", `/checkout_sessions/${action}/complete`, card("spt_test_3ds"))
    expect(needsAction.status).toBe(402)
    expect(needsAction.body).toMatchObject({ code: "payment_declined" })
    expect((await entriesOf(buyer.agentId)).filter((e) => e.kind !== "grant")).toEqual([])

    // The policy tightened while the card was being charged: the purchase is refused in its unit of
    // work, which rolls back, and the charge is refunded at Stripe, in full.
    const raced = await open()
    const held = stub.holdNextIntent()
    const completing = acp(buyer, "POST", `/checkout_sessions/${raced}/complete`, card("spt_test_visa"))
    await held.arrived
    expect((await call(buyer, "PATCH", `${C}/wallet`, { perTransactionLimitCents: 500 })).status).toBe(200)
    held.release()
    expect((await completing).status).toBe(403)
    const [charged] = intentsFor(raced)
    expect(charged).toMatchObject({ amount: 700, status: "succeeded", refundedCents: 700 })
    expect(stub.requests.filter((r) => r.path === "/v1/refunds" && r.body.payment_intent === charged!.id)).toHaveLength(
      1
    )
    expect((await entriesOf(buyer.agentId)).filter((e) => e.kind !== "grant")).toEqual([])
    // A purchase the policy refuses is refused before the card is charged.
    // (The limit set while the card was charged above stays: an agent's key may only tighten it.)
    const overLimit = await open()
    const refusedFirst = await acp(buyer, "POST", `/checkout_sessions/${overLimit}/complete`, card("spt_test_visa"))
    expect(refusedFirst.status).toBe(403)
    expect(intentsFor(overLimit)).toEqual([])

    expect(await wallet(buyer)).toMatchObject({ balanceCents: 0, heldCents: 0 })
  })
})

// ACP order events (docs/acp.md "Order events"): the agent platform's receiver is told of each
// completed session's order, order_create then order_update as it moves, the full Order, signed with
// the shared secret as the 2026-04-17 webhook document asks.
// Each test waits for the worker's next look at its own orders (ORDER_EVENTS_RECHECK_MS): they wait together.
describeEachStorage("ACP order events", { concurrent: "tests" }, (storage) => {
  const SECRET = "acp_whsec_test_0123456789"
  interface Received {
    readonly headers: IncomingHttpHeaders
    readonly raw: string
    readonly body: { type: string; data: Json & { checkout_session_id: string; status: string } }
  }
  const received: Array<Received> = []
  /** How the receiver answers a session's next events (200 unless told otherwise; by session, as the tests run at once). */
  const answers = new Map<string, Array<number>>()
  let close: () => Promise<void> = async () => {}
  beforeAll(async () => {
    const receiver = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        const body = JSON.parse(raw) as Received["body"]
        received.push({ headers: req.headers, raw, body })
        res.statusCode = answers.get(body.data.checkout_session_id)?.shift() ?? 200
        res.end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    close = () => new Promise<void>((resolve) => receiver.close(() => resolve()))
    server = await startRuntimeServer({
      storage,
      config: {
        rateLimitPerMinute: 100_000,
        rateLimitPerDay: 1_000_000,
        orderWaitMs: 0,
        acpOrderWebhookUrl: Option.some(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/order_events`),
        acpOrderWebhookSecret: Option.some(Redacted.make(SECRET))
      }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await close()
  })

  const eventsOf = (sessionId: string) => received.filter((r) => r.body.data.checkout_session_id === sessionId)
  /** The signature as the receiver checks it: t within 300 s of now, v1 the HMAC of "t.body" with the secret. */
  const verified = (r: Received) => {
    const m = /^t=(\d+),v1=([a-f0-9]{64})$/.exec(String(r.headers["merchant-signature"]))
    if (!m) return false
    const expected = createHmac("sha256", SECRET).update(`${m[1]}.${r.raw}`).digest("hex")
    return m[2] === expected && Math.abs(Date.now() / 1000 - Number(m[1])) <= 300
  }

  it("a completed session's order: order_create (processing), then order_update (completed) when the seller delivers; signed, the full Order, then nothing more", async () => {
    const { seller, buyer, itemId } = await market(600)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    // A receiver down at first: the event is retried.
    answers.set(id, [503])
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(paid.status).toBe(200)
    const [down, created] = await eventually(
      () => eventsOf(id),
      (e) => e.length >= 2,
      { timeoutMs: 15_000 }
    )
    for (const e of [down!, created!]) {
      expect(e.body).toMatchObject({ type: "order_create", data: { type: "order", status: "processing" } })
      expect(verified(e)).toBe(true)
      expect(e.headers["content-type"]).toBe("application/json")
    }
    // The full Order, as the checkout document defines it (the webhook document composes it).
    expect(validateSchema("Order", created!.body.data)).toBeUndefined()
    expect(created!.body.data).toEqual((paid.body as Json).order)

    const orderId = (paid.body.order as Json).id as string
    expect((await call(seller, "POST", `${C}/orders/${orderId}/deliver`, { output: "proofread" })).status).toBe(200)
    const updated = (
      await eventually(
        () => eventsOf(id),
        (e) => e.some((x) => x.body.type === "order_update"),
        { timeoutMs: 10_000 }
      )
    ).filter((x) => x.body.type === "order_update")
    expect(updated).toHaveLength(1)
    expect(updated[0]!.body.data).toMatchObject({ status: "completed", line_items: [{ status: "fulfilled" }] })
    expect(validateSchema("Order", updated[0]!.body.data)).toBeUndefined()
    expect(verified(updated[0]!)).toBe(true)
    // Final and acknowledged: nothing more is due for it.
    const notice = await eventually(
      () => server.run(Effect.flatMap(AcpOrderNoticeStore, (s) => s.get(id))),
      (n) => n?.doneAt !== null
    )
    expect(notice).toMatchObject({ notifiedStatus: "completed", nextAttemptAt: null })
  })

  it("a completed order refunded after a dispute: one more order_update, the refund among its adjustments; then done again", async () => {
    const { seller, buyer, itemId } = await market(800)
    const id = (await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))).body.id as string
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    const orderId = (paid.body.order as Json).id as string
    expect((await call(seller, "POST", `${C}/orders/${orderId}/deliver`, { output: "done" })).status).toBe(200)
    // Completed, told and acknowledged: the notice is done.
    await eventually(
      () => server.run(Effect.flatMap(AcpOrderNoticeStore, (s) => s.get(id))),
      (n) => n?.doneAt !== null && n?.notifiedStatus === "completed",
      { timeoutMs: 15_000 }
    )
    // (order_create may already say completed when the seller delivered before the worker's first look.)
    const before = eventsOf(id)
    expect(before.at(-1)!.body.data).toMatchObject({ status: "completed", adjustments: [] })

    const opened = await call(buyer, "POST", `${C}/disputes`, { transactionId: orderId, reason: "not what I asked" })
    expect(opened.status).toBe(201)
    const accepted = await call(seller, "POST", `${C}/disputes/${opened.body.id as string}/respond`, {
      action: "accept"
    })
    expect(accepted.body).toMatchObject({ status: "resolved_refunded" })
    const events = await eventually(
      () => eventsOf(id),
      (e) => e.length > before.length,
      { timeoutMs: 15_000 }
    )
    const refund = events[before.length]!
    expect(refund.body).toMatchObject({
      type: "order_update",
      data: {
        id: orderId,
        status: "completed",
        adjustments: [{ type: "refund", status: "completed", amount: 800, currency: "usd" }]
      }
    })
    expect(validateSchema("Order", refund.body.data)).toBeUndefined()
    expect(verified(refund)).toBe(true)
    // A receiver that drops an event whose Request-Id it has seen still takes the refund's.
    expect(before.map((e) => e.headers["request-id"])).not.toContain(refund.headers["request-id"])
    const notice = await eventually(
      () => server.run(Effect.flatMap(AcpOrderNoticeStore, (s) => s.get(id))),
      (n) => n?.doneAt !== null
    )
    expect(notice).toMatchObject({ notifiedStatus: "completed", notifiedRefund: true, nextAttemptAt: null })
    expect(eventsOf(id)).toHaveLength(before.length + 1)
  })

  it("an order of two items is told line by line: created processing, updated as one line is delivered, completed with the other; each line's refund is its own update", async () => {
    const { seller, other, buyer, itemId, otherItemId } = await twoSellers(500, 400)
    const id = (await acp(buyer, "POST", "/checkout_sessions", linesBody([itemId, otherItemId]))).body.id as string
    const paid = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    const txs = transactionsOf(paid.body.order as Json)
    await eventually(
      () => eventsOf(id),
      (e) => e.length >= 1,
      { timeoutMs: 15_000 }
    )
    expect((await call(seller, "POST", `${C}/orders/${txs.line_item_1!}/deliver`, { output: "a" })).status).toBe(200)
    await eventually(
      () => eventsOf(id),
      (e) => e.length >= 2,
      { timeoutMs: 15_000 }
    )
    expect((await call(other, "POST", `${C}/orders/${txs.line_item_2!}/deliver`, { output: "b" })).status).toBe(200)
    await eventually(
      () => server.run(Effect.flatMap(AcpOrderNoticeStore, (s) => s.get(id))),
      (n) => n?.doneAt !== null && n?.notifiedStatus === "completed",
      { timeoutMs: 15_000 }
    )
    const told = eventsOf(id).map((e) => [
      e.body.type,
      e.body.data.status,
      (e.body.data.line_items as Array<Json>).map((l) => l.status).join(",")
    ])
    expect(told).toEqual([
      ["order_create", "processing", "processing,processing"],
      ["order_update", "processing", "fulfilled,processing"],
      ["order_update", "completed", "fulfilled,fulfilled"]
    ])

    // Both lines refunded, one dispute each: two more updates, each with its own Request-Id.
    for (const [line, who] of [
      ["line_item_1", seller],
      ["line_item_2", other]
    ] as const) {
      const before = eventsOf(id).length
      const opened = await call(buyer, "POST", `${C}/disputes`, { transactionId: txs[line], reason: "not it" })
      expect(opened.status).toBe(201)
      const accepted = await call(who, "POST", `${C}/disputes/${opened.body.id as string}/respond`, {
        action: "accept"
      })
      expect(accepted.body).toMatchObject({ status: "resolved_refunded" })
      await eventually(
        () => eventsOf(id),
        (e) => e.length > before,
        { timeoutMs: 15_000 }
      )
    }
    const all = eventsOf(id)
    const refunds = all.slice(3)
    expect(refunds.map((e) => (e.body.data.adjustments as Array<Json>).map((a) => a.amount))).toEqual([
      [500],
      [500, 400]
    ])
    expect(totalOf(refunds[1]!.body.data, "amount_refunded")).toBe(900)
    expect(new Set(all.map((e) => e.headers["request-id"])).size).toBe(all.length)
    for (const e of all) expect(validateSchema("Order", e.body.data)).toBeUndefined()
  })

  it("an order waiting for the owner's approval is created in manual_review and updated canceled when the owner declines; a session never completed sends nothing", async () => {
    const { buyer, itemId } = await market(300)
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const { body } = await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))
    const id = body.id as string
    const waiting = await acp(buyer, "POST", `/checkout_sessions/${id}/complete`, walletPayment(buyer.agentId))
    expect(waiting.body).toMatchObject({ status: "pending_approval" })
    const [created] = await eventually(
      () => eventsOf(id),
      (e) => e.length >= 1,
      { timeoutMs: 10_000 }
    )
    expect(created!.body).toMatchObject({ type: "order_create", data: { status: "manual_review" } })
    const approvalId = (waiting.body.order as Json).id as string
    const declined = await fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${approvalId}/decline`, {
      method: "POST",
      headers: { cookie: buyer.cookie!, "content-type": "application/json" }
    })
    expect(declined.status).toBe(200)
    const events = await eventually(
      () => eventsOf(id),
      (e) => e.length >= 2,
      { timeoutMs: 10_000 }
    )
    expect(events.map((e) => [e.body.type, e.body.data.status])).toEqual([
      ["order_create", "manual_review"],
      ["order_update", "canceled"]
    ])
    expect(events.every(verified)).toBe(true)

    // Opened and cancelled, never completed: no order, no event.
    const other = (await acp(buyer, "POST", "/checkout_sessions", createBody(itemId))).body.id as string
    expect((await acp(buyer, "POST", `/checkout_sessions/${other}/cancel`)).status).toBe(200)
    expect(await server.run(Effect.flatMap(AcpOrderNoticeStore, (s) => s.get(other)))).toBeUndefined()
  })
})

describe("a card charge's description", () => {
  it("names the lines, and never runs past what a processor takes (ten lines of the longest names)", () => {
    const line = (serviceName: string, tierName: string) =>
      ({ serviceName, tierName }) as Parameters<typeof chargeDescription>[0][number]
    expect(chargeDescription([line("Proofreading", "One page"), line("Translation", "One paragraph")])).toBe(
      "Proofreading — One page; Translation — One paragraph"
    )
    const long = chargeDescription(Array.from({ length: 10 }, (_, i) => line(`${i}`.repeat(120), "t".repeat(60))))
    expect(long.length).toBe(CHARGE_DESCRIPTION_MAX)
    expect(long.startsWith("0".repeat(120))).toBe(true)
  })
})

describe("the ACP document as a checker", () => {
  it("refuses what the spec refuses: an unknown field, a missing required one, an undeclared status", () => {
    const session = {
      id: "cs_1",
      status: "ready_for_payment",
      currency: "usd",
      line_items: [],
      totals: [],
      fulfillment_options: [],
      messages: [],
      links: [],
      capabilities: {}
    }
    expect(validateSchema("CheckoutSession", session)).toBeUndefined()
    expect(validateSchema("CheckoutSession", { ...session, surprise: 1 })).toMatch(/additional/)
    expect(validateSchema("CheckoutSession", { ...session, links: undefined })).toMatch(/links/)
    expect(validateSchema("CheckoutSessionWithOrder", session)).toMatch(/order is required/)
    const h = new Headers()
    expect(checkAnswer("GET", "/checkout_sessions/cs_1", 400, h, {})).toMatch(/not declared/)
    expect(
      checkAnswer("POST", "/checkout_sessions", 409, h, { type: "invalid_request", code: "x", message: "y" })
    ).toMatch(/Retry-After/)
  })
})
