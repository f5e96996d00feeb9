// End to end, on every storage: POST /saga completes through five recorded steps; a deliver
// failure and a deliver timeout (finished by the background worker) compensate with the buyer's
// balance restored exactly and the ledger balanced; GET /saga/:id is the buyer's only.
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { eventually } from "../fixtures/wait.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"

describeEachStorage("saga over HTTP", { concurrent: "storages" }, (storage) => {
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
  const ledgerOk = () => server.run(Effect.flatMap(Ledger, (l) => l.check)).then((c) => c.ok && c.totalCents === 0)
  const buyer = async (credits: number) => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
    if (credits > 0) await fund(k.agentId, credits)
    return k
  }

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("happy path: 201, five succeeded steps with timestamps, 85/15 settlement; GET /saga/:id for the buyer only", async () => {
    const k = await buyer(1000)
    const res = await post(`${COMMERCE}/saga`, k, {
      serviceId: "svc_web_scrape",
      tierId: "rendered",
      input: { url: "https://example.com" }
    })
    expect(res.status).toBe(201)
    const saga = await res.json()
    expect(saga).toMatchObject({
      status: "completed",
      priceCents: 6,
      settlement: { priceCents: 6, sellerCents: 5, feeCents: 1 },
      failure: null
    })
    expect(saga.steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`)).toEqual([
      "quote:succeeded",
      "escrow:succeeded",
      "deliver:succeeded",
      "settle:succeeded",
      "confirm:succeeded"
    ])
    for (const s of saga.steps) expect(Date.parse(s.finishedAt)).toBeGreaterThanOrEqual(Date.parse(s.startedAt))
    expect(await balance(k.agentId)).toBe(994)
    expect(await (await get(`${COMMERCE}/saga/${saga.id}`, k)).json()).toEqual(saga)
    const other = await buyer(0)
    expect((await get(`${COMMERCE}/saga/${saga.id}`, other)).status).toBe(404)
    const noBuy = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect((await post(`${COMMERCE}/saga`, noBuy, { serviceId: "svc_web_scrape", tierId: "rendered" })).status).toBe(
      403
    )
    expect((await post(`${COMMERCE}/saga`, k, { serviceId: "svc_web_scrape", tierId: "nope" })).status).toBe(404)
    expect(await ledgerOk()).toBe(true)
  })

  it("deliver failure: compensated in the response, the buyer's balance restored exactly", async () => {
    const k = await buyer(20_000)
    const saga = await (
      await post(`${COMMERCE}/saga`, k, { serviceId: "svc_code_review", tierId: "org", input: { simulate: "fail" } })
    ).json()
    expect(saga).toMatchObject({ status: "compensated", priceCents: 19900, failure: { step: "deliver" } })
    expect(saga.steps.map((s: { status: string }) => s.status)).toEqual([
      "compensated",
      "compensated",
      "failed",
      "skipped",
      "skipped"
    ])
    expect(await balance(k.agentId)).toBe(20_000)
    expect(await ledgerOk()).toBe(true)
  })

  it("deliver timeout: 201 while the deliver step waits, then the worker compensates at the deadline", async () => {
    const k = await buyer(500)
    // svc_translate_pro/priority: p95 350 ms → the 1 s minimum timeout.
    const saga = await (
      await post(`${COMMERCE}/saga`, k, {
        serviceId: "svc_translate_pro",
        tierId: "priority",
        input: { simulate: "timeout" }
      })
    ).json()
    expect(saga).toMatchObject({ status: "running", currentStep: "deliver" })
    expect(await balance(k.agentId)).toBe(495)
    const current = await eventually(
      async () => await (await get(`${COMMERCE}/saga/${saga.id}`, k)).json(),
      (s) => s.status !== "running"
    )
    expect(current).toMatchObject({
      status: "compensated",
      failure: { step: "deliver", reason: "the seller did not deliver within 1000 ms (timeout)" }
    })
    expect(Date.parse(current.finishedAt) - Date.parse(saga.createdAt)).toBeGreaterThanOrEqual(1000)
    expect(await balance(k.agentId)).toBe(500)
    expect(await ledgerOk()).toBe(true)
  })
})
