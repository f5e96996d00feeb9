// End to end, on every storage: a proposal is answered by the background worker, not before the
// configured delay; respond by turn (409 wrong turn / closed, 422 counter without a price); polling
// and listing; ownership (404); permissions (403); the accepted price is what /buy charges, once.
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { eventually } from "../fixtures/wait.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"
const DELAY = 400

describeEachStorage("negotiation over HTTP", { concurrent: "storages" }, (storage) => {
  let server: RuntimeServer
  const url = (p: string) => `${server.baseUrl}${p}`
  const get = (p: string, k: AgentKey) => fetch(url(p), { headers: k.auth })
  const post = (p: string, k: AgentKey, body: unknown) =>
    fetch(url(p), {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  const fund = (agentId: string, amount: number) =>
    server.run(
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${agentId}-${amount}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(agentId),
          amount
        })
      )
    )
  const balance = (agentId: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId))))
  /** The negotiation once the seller's worker has answered it (it leaves awaiting_seller). */
  const waitForAnswer = (k: AgentKey, id: string) =>
    eventually(
      async () => await (await get(`${COMMERCE}/negotiations/${id}`, k)).json(),
      (n) => n.status !== "awaiting_seller",
      { message: `negotiation ${id} answered` }
    )
  const negotiator = () => createAgentKey(server.baseUrl, ["commerce:negotiate", "commerce:read", "commerce:buy"])

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { negotiationDelayMs: DELAY, rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("the worker answers a proposal after the configured delay (not before), as the documented policy says", async () => {
    const k = await negotiator()
    const opened = await post(`${COMMERCE}/negotiate`, k, {
      serviceId: "svc_doc_translate",
      tierId: "business",
      proposedPriceCents: 5000,
      terms: {}
    })
    expect(opened.status).toBe(201)
    const n = await opened.json()
    expect(n).toMatchObject({ status: "awaiting_seller", turn: "seller", round: 0, maxRounds: 5, listPriceCents: 7900 })
    expect(Date.parse(n.sellerAnswerDueAt) - Date.parse(n.createdAt)).toBe(DELAY)
    const answered = await waitForAnswer(k, n.id)
    // Not before the delay: the seller's answer is recorded at or after its due time.
    expect(Date.parse(answered.history[1].at) - Date.parse(n.createdAt)).toBeGreaterThanOrEqual(DELAY)
    expect(answered).toMatchObject({ status: "awaiting_buyer", turn: "buyer", round: 1, currentPriceCents: 7030 })
    expect(answered.history).toHaveLength(2)
    expect(answered.history[1]).toMatchObject({ by: "seller", action: "counter", priceCents: 7030, automatic: true })
  })

  it("respond by turn: 409 out of turn and once closed, 422 counter without a price, 404 for strangers, 403 without the permission", async () => {
    const k = await negotiator()
    const n = await (
      await post(`${COMMERCE}/negotiate`, k, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        proposedPriceCents: 5000
      })
    ).json()
    const early = await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "accept" })
    expect(early.status).toBe(409)
    expect(await early.json()).toMatchObject({ type: "NegotiationClosed", status: "awaiting_seller", turn: "seller" })
    await waitForAnswer(k, n.id)
    const noPrice = await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "counter" })
    expect(noPrice.status).toBe(422)
    expect(await noPrice.json()).toMatchObject({ type: "InvalidOffer", field: "counterPriceCents" })
    const bad = await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "haggle" })
    expect(bad.status).toBe(400)
    const stranger = await negotiator()
    expect((await post(`${COMMERCE}/negotiate/${n.id}/respond`, stranger, { action: "accept" })).status).toBe(404)
    expect((await get(`${COMMERCE}/negotiations/${n.id}`, stranger)).status).toBe(404)
    const readOnly = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect(
      (
        await post(`${COMMERCE}/negotiate`, readOnly, {
          serviceId: "svc_doc_translate",
          tierId: "business",
          proposedPriceCents: 5000
        })
      ).status
    ).toBe(403)
    const rejected = await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "reject" })
    expect(rejected.status).toBe(200)
    expect(await rejected.json()).toMatchObject({ status: "rejected", turn: null })
    const closed = await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "accept" })
    expect(closed.status).toBe(409)
    expect(await closed.json()).toMatchObject({ type: "NegotiationClosed", status: "rejected" })
    const list = await (await get(`${COMMERCE}/negotiations?limit=100`, k)).json()
    expect(list.data.map((x: { id: string }) => x.id)).toEqual([n.id])
    expect(
      (
        await post(`${COMMERCE}/negotiate`, k, {
          serviceId: "svc_doc_translate",
          tierId: "business",
          proposedPriceCents: 9000
        })
      ).status
    ).toBe(422)
    expect(
      (
        await post(`${COMMERCE}/negotiate`, k, {
          serviceId: "svc_doc_translate",
          tierId: "business",
          proposedPriceCents: 0
        })
      ).status
    ).toBe(400)
    expect(
      (await post(`${COMMERCE}/negotiate`, k, { serviceId: "svc_none", tierId: "business", proposedPriceCents: 10 }))
        .status
    ).toBe(404)
  })

  it("terms are recorded but buy no discount: volume 1000 + 120 months get the same counter as no terms; an unknown term key is refused, named", async () => {
    const k = await negotiator()
    // A misspelt term is refused, naming the key, rather than silently dropped.
    const typo = await post(`${COMMERCE}/negotiate`, k, {
      serviceId: "svc_doc_translate",
      tierId: "business",
      proposedPriceCents: 7189,
      terms: { volume: 50, durationMonth: 12 }
    })
    expect(typo.status).toBe(400)
    expect(await typo.json()).toMatchObject({ type: "InvalidInput", field: "terms.durationMonth" })
    const res = await post(`${COMMERCE}/negotiate`, k, {
      serviceId: "svc_doc_translate",
      tierId: "business",
      proposedPriceCents: 7189,
      terms: { volume: 1000, durationMonths: 120 }
    })
    expect(res.status).toBe(201)
    const n = await res.json()
    expect(n.terms).toEqual({ volume: 1000, durationMonths: 120 })
    const plain = await (
      await post(`${COMMERCE}/negotiate`, k, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        proposedPriceCents: 7189
      })
    ).json()
    // Nothing holds a buyer to a promised volume, so promising one changes nothing: 7189 is under the
    // 7900 list price either way, and the seller counters 7900 − ⌊711 × 30 %⌋ = 7687 (docs/negotiation.md).
    const [withTerms, without] = [await waitForAnswer(k, n.id), await waitForAnswer(k, plain.id)]
    expect(withTerms).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 7687, agreedPriceCents: null })
    expect(without).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 7687, agreedPriceCents: null })
    const bad = await post(`${COMMERCE}/negotiate`, k, {
      serviceId: "svc_doc_translate",
      tierId: "business",
      proposedPriceCents: 7189,
      terms: { volume: -1 }
    })
    expect(bad.status).toBe(400)
  })

  it("the accepted price is what /saga charges, once; a used negotiation is refused", async () => {
    const k = await negotiator()
    await fund(k.agentId, 10_000)
    const n = await (
      await post(`${COMMERCE}/negotiate`, k, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        proposedPriceCents: 5000
      })
    ).json()
    await waitForAnswer(k, n.id)
    const accepted = await (await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "accept" })).json()
    expect(accepted).toMatchObject({ status: "accepted", agreedPriceCents: 7030 })
    expect(Date.parse(accepted.expiresAt) - Date.parse(accepted.updatedAt)).toBe(24 * 3600 * 1000)
    const saga = await (
      await post(`${COMMERCE}/saga`, k, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        negotiationId: n.id,
        input: {}
      })
    ).json()
    expect(saga).toMatchObject({ status: "completed", priceCents: 7030 })
    expect(await balance(k.agentId)).toBe(10_000 - 7030)
    expect(await (await get(`${COMMERCE}/negotiations/${n.id}`, k)).json()).toMatchObject({
      status: "used",
      usedBy: saga.id
    })
    const again = await (
      await post(`${COMMERCE}/saga`, k, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        negotiationId: n.id,
        input: {}
      })
    ).json()
    expect(again).toMatchObject({ status: "compensated", failure: { step: "quote" } })
    expect(await balance(k.agentId)).toBe(10_000 - 7030)
  })

  it("the accepted price is what /buy charges, once", async () => {
    const k = await negotiator()
    await fund(k.agentId, 10_000)
    const n = await (
      await post(`${COMMERCE}/negotiate`, k, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        proposedPriceCents: 5000
      })
    ).json()
    await waitForAnswer(k, n.id)
    await post(`${COMMERCE}/negotiate/${n.id}/respond`, k, { action: "accept" })
    const bought = await post(`${COMMERCE}/buy`, k, {
      serviceId: "svc_doc_translate",
      tierId: "business",
      negotiationId: n.id,
      input: {}
    })
    expect(bought.status, await bought.clone().text()).toBeLessThan(300)
    expect(await balance(k.agentId)).toBe(10_000 - 7030)
    const again = await post(`${COMMERCE}/buy`, k, {
      serviceId: "svc_doc_translate",
      tierId: "business",
      negotiationId: n.id,
      input: {}
    })
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ type: "NegotiationUnusable", status: "used" })
    expect(await balance(k.agentId)).toBe(10_000 - 7030)
  })
})
