// End to end over HTTP: the commerce protocol's auth (401/403), catalog, wallet top-up, buy (201,
// 402 with how-to-fund, 403 PolicyViolation), idempotent replays, 404 on another agent's
// transaction, review once, dispute refund, and owner approvals through the dashboard.
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { eventually } from "../fixtures/wait.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer

const base = "/api/v1/agent/commerce"
const call = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}
const as = (k: AgentKey) => k.auth

const topup = (k: AgentKey, amountCents: number) =>
  call(`${base}/wallet/topup`, { method: "POST", headers: as(k), body: { amountCents } })
const buy = (k: AgentKey, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(`${base}/buy`, { method: "POST", headers: { ...as(k), ...headers }, body })

/** Publishes a one-tier per-call service as `seller`. */
const publish = (seller: AgentKey, name: string, tier: { id: string; name: string; priceCents: number }) =>
  call(`${base}/services`, {
    method: "POST",
    headers: as(seller),
    body: {
      name,
      description: "a service published in a test",
      category: "testing",
      pricingModel: "per_call",
      tiers: [
        {
          ...tier,
          unit: "call",
          includedUnits: null,
          sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
        }
      ]
    }
  })

describeEachStorage("commerce over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({
      storage,
      config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000, negotiationDelayMs: 0 }
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("needs a key (401) and the route's permission (403)", async () => {
    expect((await call(`${base}/services`)).status).toBe(401)
    const readOnly = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect((await call(`${base}/services`, { headers: as(readOnly) })).status).toBe(200)
    const refused = await buy(readOnly, { serviceId: "svc_translate_pro", tierId: "standard", input: "hi" })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ type: "Forbidden", permission: "commerce:buy" })
    const noCommerce = await createAgentKey(server.baseUrl, ["catalog:read"])
    expect((await call(`${base}/wallet`, { headers: as(noCommerce) })).status).toBe(403)
  })

  it("lists, filters and pages the catalog; shows tiers, SLA and measured compliance", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:read"])
    const first = await call(`${base}/services?limit=5`, { headers: as(k) })
    expect(first.status).toBe(200)
    expect(first.body.data).toHaveLength(5)
    const second = await call(`${base}/services?limit=5&cursor=${first.body.nextCursor}`, { headers: as(k) })
    expect(second.body.data[0].id > first.body.data[4].id).toBe(true)
    const tiered = await call(`${base}/services?pricingModel=tiered&q=translation`, { headers: as(k) })
    expect(tiered.body.data.map((s: { id: string }) => s.id)).toEqual(["svc_doc_translate"])
    const detail = await call(`${base}/services/svc_doc_translate`, { headers: as(k) })
    expect(detail.body.tiers.map((t: { id: string; priceCents: number }) => [t.id, t.priceCents])).toEqual([
      ["starter", 1900],
      ["business", 7900],
      ["enterprise", 29900]
    ])
    expect(detail.body.tiers[2].sla).toEqual({ uptimePct: 99.95, p95LatencyMs: 4000, supportWindow: "24/7" })
    const sla = await call(`${base}/services/svc_doc_translate/sla`, { headers: as(k) })
    expect(sla.body.tiers[0]).toMatchObject({ tierId: "starter", status: "no_data", deliveries: 0 })
    expect((await call(`${base}/services/svc_nope`, { headers: as(k) })).status).toBe(404)
    expect((await call(`${base}/services?minPriceCents=abc`, { headers: as(k) })).status).toBe(400)
  })

  it("buys: 201 with the 85/15 split, 402 with how to fund, 403 naming the policy, 404 for others' transactions", async () => {
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    const poor = await buy(buyer, { serviceId: "svc_doc_translate", tierId: "starter", input: { doc: "a.pdf" } })
    expect(poor.status).toBe(402)
    // RFC 9457 problem details with our documented type (docs/mpp.md), never stored for replay.
    expect(poor.body).toMatchObject({
      type: "tag:ai2aic-commerce,2026:problems/wallet-insufficient-funds",
      status: 402,
      requiredCents: 1900,
      balanceCents: 0,
      missingCents: 1900
    })
    expect(poor.body.howToFund.topupUrl).toBe(`${server.baseUrl}${base}/wallet/topup`)
    expect(poor.body.howToFund.checkoutUrl).toBe(`${server.baseUrl}/api/trpc/subscription.createCheckout`)
    expect(poor.body.howToFund.retry).toMatch(/same Idempotency-Key is fine/)
    expect((await topup(buyer, 2500)).body).toMatchObject({ amountCents: 2500, balanceCents: 2500 })
    const ok = await buy(buyer, { serviceId: "svc_doc_translate", tierId: "starter", input: { doc: "a.pdf" } })
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({
      status: "completed",
      transaction: {
        priceCents: 1900,
        sellerCents: 1615,
        feeCents: 285,
        role: "buyer",
        sellerAgentId: "agt_seller_lexica"
      }
    })
    expect(ok.body.transaction.delivery).toMatchObject({ success: true, output: { simulated: true } })
    const wallet = await call(`${base}/wallet`, { headers: as(buyer) })
    expect(wallet.body).toMatchObject({
      balanceCents: 600,
      currency: "usd",
      spentTodayCents: 1900,
      autonomyLevel: "full_auto",
      creditUnit: { cents: 1 }
    })
    const txId = ok.body.transaction.id
    expect((await call(`${base}/transactions/${txId}`, { headers: as(buyer) })).status).toBe(200)
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await call(`${base}/transactions/${txId}`, { headers: as(stranger) })).status).toBe(404)
    const list = await call(`${base}/transactions?role=buyer&status=completed`, { headers: as(buyer) })
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([txId])
    // Policy: per-transaction limit, then the daily limit.
    const patched = await call(`${base}/wallet`, {
      method: "PATCH",
      headers: as(buyer),
      body: { perTransactionLimitCents: 100, dailyLimitCents: 1905 }
    })
    expect(patched.status).toBe(200)
    const over = await buy(buyer, { serviceId: "svc_doc_translate", tierId: "starter", input: {} })
    expect(over.status).toBe(403)
    expect(over.body).toMatchObject({
      type: "PolicyViolation",
      policy: "perTransactionLimit",
      limitCents: 100,
      attemptedCents: 1900
    })
    expect((await buy(buyer, { serviceId: "svc_translate_pro", tierId: "priority", input: 1 })).status).toBe(201)
    const daily = await buy(buyer, { serviceId: "svc_translate_pro", tierId: "priority", input: 2 })
    expect(daily.body).toMatchObject({ type: "PolicyViolation", policy: "dailyLimit", limitCents: 1905 })
    // Loosening needs the owner.
    expect(
      (await call(`${base}/wallet`, { method: "PATCH", headers: as(buyer), body: { dailyLimitCents: null } })).status
    ).toBe(403)
    const owner = await call(`/api/dashboard/commerce/wallets/${buyer.agentId}`, {
      method: "PATCH",
      headers: { cookie: buyer.cookie },
      body: { dailyLimitCents: null }
    })
    expect(owner.status).toBe(200)
    expect(owner.body.policies.dailyLimitCents).toBeNull()
  })

  it("a body that is not JSON is 415 naming Content-Type, not a silent no-op", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    for (const [path, method] of [
      [`${base}/wallet`, "PATCH"],
      [`${base}/buy`, "POST"]
    ] as const) {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { ...as(k), "content-type": "application/x-www-form-urlencoded" },
        body: "a=1&b=2"
      })
      expect(res.status).toBe(415)
      expect(await res.json()).toMatchObject({ type: "UnsupportedMediaType", field: "Content-Type" })
    }
    const text = await fetch(`${server.baseUrl}${base}/wallet/topup`, {
      method: "POST",
      headers: { ...as(k), "content-type": "text/plain" },
      body: '{"amountCents":100}'
    })
    expect(text.status).toBe(415)
    expect((await call(`${base}/wallet`, { headers: as(k) })).body.balanceCents).toBe(0)
  })

  it("an Idempotency-Key replayed 10 times charges once", async () => {
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await topup(buyer, 100)
    const ids = new Set<string>()
    for (let i = 0; i < 10; i++) {
      const r = await buy(
        buyer,
        { serviceId: "svc_translate_pro", tierId: "priority", input: "same" },
        { "idempotency-key": "buy-once-1" }
      )
      expect(r.status).toBe(201)
      ids.add(r.body.transaction.id)
    }
    expect(ids.size).toBe(1)
    expect((await call(`${base}/wallet`, { headers: as(buyer) })).body.balanceCents).toBe(95)
    const reused = await buy(
      buyer,
      { serviceId: "svc_translate_pro", tierId: "standard", input: "other" },
      { "idempotency-key": "buy-once-1" }
    )
    expect(reused.status).toBe(422)
  })

  it("50 concurrent requests with one Idempotency-Key charge once", async () => {
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await topup(buyer, 1000)
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        buy(
          buyer,
          { serviceId: "svc_translate_pro", tierId: "priority", input: "race" },
          { "idempotency-key": "buy-race-1" }
        )
      )
    )
    const created = results.filter((r) => r.status === 201)
    // Requests that arrive while the first is in flight are told to retry (409); none is charged twice.
    expect(created.length + results.filter((r) => r.status === 409).length).toBe(50)
    expect(new Set(created.map((r) => r.body.transaction.id)).size).toBe(1)
    expect((await call(`${base}/wallet`, { headers: as(buyer) })).body.balanceCents).toBe(995)
    const txs = await call(`${base}/transactions?role=buyer`, { headers: as(buyer) })
    expect(txs.body.data).toHaveLength(1)
  })

  it("reviews once (buyer only), disputes and refunds to the cent; reputation and leaderboard answer", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const published = await publish(seller, "HTTP Test Service", { id: "unit", name: "Unit", priceCents: 777 })
    expect(published.status).toBe(201)
    const serviceId = published.body.id
    // A free tier cannot be published: the minimum charge is 1 cent (400 naming the field).
    const free = await publish(seller, "Free Service", { id: "free", name: "Free", priceCents: 0 })
    expect(free.status).toBe(400)
    expect(free.body).toMatchObject({ type: "InvalidInput" })
    expect(JSON.stringify(free.body)).toMatch(/priceCents/)
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await topup(buyer, 1000)
    // A real (pull) seller: the buy waits for its answer (202), and its delivery settles it.
    const bought = await buy(buyer, { serviceId, tierId: "unit", input: "x" })
    expect([bought.status, bought.body.status]).toEqual([202, "pending"])
    const delivered = await call(`${base}/orders/${bought.body.transaction.id}/deliver`, {
      method: "POST",
      headers: as(seller),
      body: { output: "done" }
    })
    expect(delivered.status).toBe(200)
    const tx = (await call(`${base}/transactions/${bought.body.transaction.id}`, { headers: as(buyer) })).body
    expect(tx).toMatchObject({ status: "completed", priceCents: 777, sellerCents: 660, feeCents: 117 })
    expect((await call(`${base}/wallet`, { headers: as(seller) })).body.balanceCents).toBe(660)
    expect(
      (await call(`${base}/transactions/${tx.id}/review`, { method: "POST", headers: as(seller), body: { rating: 5 } }))
        .status
    ).toBe(403)
    expect(
      (await call(`${base}/transactions/${tx.id}/review`, { method: "POST", headers: as(buyer), body: { rating: 6 } }))
        .status
    ).toBe(400)
    const review = await call(`${base}/transactions/${tx.id}/review`, {
      method: "POST",
      headers: as(buyer),
      body: { rating: 2, text: "meh" }
    })
    expect(review.status).toBe(201)
    expect(
      (await call(`${base}/transactions/${tx.id}/review`, { method: "POST", headers: as(buyer), body: { rating: 3 } }))
        .status
    ).toBe(409)
    expect((await call(`${base}/services/${serviceId}`, { headers: as(buyer) })).body).toMatchObject({
      rating: 2,
      reviewCount: 1
    })
    const dispute = await call(`${base}/disputes`, {
      method: "POST",
      headers: as(buyer),
      body: { transactionId: tx.id, reason: "not what I asked" }
    })
    expect(dispute.status).toBe(201)
    expect(dispute.body).toMatchObject({ status: "open", role: "buyer" })
    const answered = await call(`${base}/disputes/${dispute.body.id}/respond`, {
      method: "POST",
      headers: as(seller),
      body: { action: "accept" }
    })
    expect(answered.body).toMatchObject({ status: "resolved_refunded", refundCents: 777, role: "seller" })
    expect((await call(`${base}/wallet`, { headers: as(buyer) })).body.balanceCents).toBe(1000)
    expect((await call(`${base}/wallet`, { headers: as(seller) })).body.balanceCents).toBe(0)
    expect((await call(`${base}/transactions/${tx.id}`, { headers: as(buyer) })).body).toMatchObject({
      status: "refunded",
      disputeId: dispute.body.id
    })
    // The disputes list is a keyset page: both sides see this one, and the end of the list.
    for (const side of [buyer, seller]) {
      const listed = await call(`${base}/disputes?limit=1`, { headers: as(side) })
      expect([listed.body.data.map((d: { id: string }) => d.id), listed.body.nextCursor]).toEqual([
        [dispute.body.id],
        null
      ])
    }
    expect((await call(`${base}/disputes?limit=0`, { headers: as(buyer) })).status).toBe(400)
    expect((await call(`${base}/disputes?cursor=zz`, { headers: as(buyer) })).body).toMatchObject({ field: "cursor" })
    const rep = await call(`${base}/reputation`, { headers: as(seller) })
    // The refunded purchase's 2-star review no longer counts (docs/reputation.md): reviews are the
    // prior alone, 400·((0+6)/2 − 1)/4 = 200; disputes: 1 lost of 1 deal → 0; volume 0; tenure 0.
    expect(rep.body).toMatchObject({
      score: 200,
      band: "Bronze",
      factors: { reviews: { points: 200, count: 0 }, disputes: { points: 0, lost: 1 } }
    })
    // Nor in the service's rating.
    expect((await call(`${base}/services/${serviceId}`, { headers: as(buyer) })).body).toMatchObject({
      rating: null,
      reviewCount: 0
    })
    const board = await call(`${base}/leaderboard?limit=3`, { headers: as(seller) })
    expect(board.body.data).toHaveLength(3)
    expect((await call(`${base}/stats`, { headers: as(buyer) })).body.agent).toMatchObject({
      refundsReceivedCents: 777
    })
    expect((await call(`${base}/usage?days=7`, { headers: as(buyer) })).body.totals).toEqual({
      calls: 0,
      spentCents: 0
    })
    const rec = await call(`${base}/recommend?limit=3`, { headers: as(buyer) })
    expect(rec.body.data).toHaveLength(3)
    expect(rec.body.data[0].reasons.length).toBeGreaterThan(0)
  })

  it("buys at a negotiated price once (negotiationId), then refuses to reuse it", async () => {
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await topup(buyer, 10_000)
    const proposed = await call(`${base}/negotiate`, {
      method: "POST",
      headers: as(buyer),
      body: { serviceId: "svc_doc_translate", tierId: "starter", proposedPriceCents: 1800 }
    })
    expect(proposed.status).toBe(201)
    // The automatic seller answers on its own (no delay here); the buyer waits for that answer.
    const answered = await eventually(
      async () => (await call(`${base}/negotiations/${proposed.body.id}`, { headers: as(buyer) })).body,
      (n) => n.status !== "awaiting_seller",
      { message: "the seller's answer" }
    )
    // docs/negotiation.md, svc_doc_translate (floorPct 70, counterStepPct 30), starter at 1,900:
    // round 1 asks from the target 1,900 and moves ⌊(1,900 − 1,800) × 30 / 100⌋ = 30 toward the
    // offer: a counter of 1,870 (above the floor ⌈1,900 × 0.7⌉ = 1,330), now the buyer's turn.
    expect(answered).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 1870 })
    const negotiation = (
      await call(`${base}/negotiate/${answered.id}/respond`, {
        method: "POST",
        headers: as(buyer),
        body: { action: "accept" }
      })
    ).body
    expect(negotiation).toMatchObject({ status: "accepted", agreedPriceCents: 1870 })
    const agreed = 1870
    const bought = await buy(buyer, {
      serviceId: "svc_doc_translate",
      tierId: "starter",
      input: "n",
      negotiationId: negotiation.id
    })
    expect(bought.status).toBe(201)
    expect(bought.body.transaction).toMatchObject({
      priceCents: agreed,
      listPriceCents: 1900,
      negotiationId: negotiation.id
    })
    expect((await call(`${base}/wallet`, { headers: as(buyer) })).body.balanceCents).toBe(10_000 - agreed)
    const again = await buy(buyer, {
      serviceId: "svc_doc_translate",
      tierId: "starter",
      input: "n2",
      negotiationId: negotiation.id
    })
    expect(again.status).toBe(409)
    expect(again.body.type).toBe("NegotiationUnusable")
  })

  it("manual autonomy: the purchase waits; no agent key can approve; the owner approves in the dashboard", async () => {
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await topup(buyer, 500)
    expect(
      (await call(`${base}/wallet`, { method: "PATCH", headers: as(buyer), body: { autonomyLevel: "manual" } })).status
    ).toBe(200)
    const pending = await buy(buyer, { serviceId: "svc_translate_pro", tierId: "priority", input: "wait" })
    expect(pending.status).toBe(201)
    expect(pending.body).toMatchObject({
      status: "pending_approval",
      transaction: null,
      approval: { status: "pending", reason: "manual" }
    })
    const id = pending.body.approval.id
    // Agents may list approvals but there is no route for a key to decide one.
    expect(
      (await call(`${base}/approvals?status=pending`, { headers: as(buyer) })).body.data.map(
        (a: { id: string }) => a.id
      )
    ).toEqual([id])
    expect((await call(`${base}/approvals/${id}/approve`, { method: "POST", headers: as(buyer) })).status).toBe(404)
    const listed = await call(`/api/dashboard/commerce/approvals?status=pending`, { headers: { cookie: buyer.cookie } })
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([id])
    expect(listed.body.nextCursor).toBeNull()
    expect(
      (await call(`/api/dashboard/commerce/approvals?limit=101`, { headers: { cookie: buyer.cookie } })).status
    ).toBe(400)
    const approved = await call(`/api/dashboard/commerce/approvals/${id}/approve`, {
      method: "POST",
      headers: { cookie: buyer.cookie, "content-type": "application/json" }
    })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({
      approval: { status: "approved" },
      transaction: { status: "completed", priceCents: 5 }
    })
    expect((await call(`${base}/wallet`, { headers: as(buyer) })).body).toMatchObject({
      balanceCents: 495,
      pendingApprovals: 0
    })
    // Another account's session sees nothing.
    const other = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect(
      (
        await call(`/api/dashboard/commerce/approvals/${id}/decline`, {
          method: "POST",
          headers: { cookie: other.cookie, "content-type": "application/json" }
        })
      ).status
    ).toBe(404)
  })
})
