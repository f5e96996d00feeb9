// End to end, on every storage: /invest/api, POST /invest and invest.invest (key and session),
// the 49 % cap (also with racing requests), /portfolio and portfolio.holdings, and governance —
// proposals over REST, votes through invest.vote, the founder's veto through the dashboard session.
import { Effect, Option } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey, signUp, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const FOUNDER = "acct_founder_http"
const DISCLAIMER =
  "Agent Commerce Utility Token (ACT) is a utility token, not a security. Jurisdictions: Brazil and Paraguay. Projections and valuations are estimates, not investment advice."

describeEachStorage("investment over HTTP", { concurrent: "storages" }, (storage) => {
  let server: RuntimeServer
  let founderCookie: string
  const url = (p: string) => `${server.baseUrl}${p}`
  const json = (headers: Record<string, string>) => ({ ...headers, "content-type": "application/json" })
  const post = (p: string, headers: Record<string, string>, body: unknown) =>
    fetch(url(p), { method: "POST", headers: json(headers), body: JSON.stringify(body) })
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
  const investor = async (credits: number) => {
    const k = await createAgentKey(server.baseUrl, ["invest"])
    if (credits > 0) await fund(k.agentId, credits)
    return k
  }

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, founderAccountId: Option.some(FOUNDER) }
    })
    // The founder's account, with a known id, and a dashboard session for it.
    founderCookie = await server.run(
      Effect.gen(function* () {
        yield* Effect.flatMap(KeysStore, (s) =>
          s.insertAccount({
            id: FOUNDER,
            email: `founder-${storage}@example.com`,
            name: "Founder",
            passwordHash: "x",
            planId: null,
            createdAt: new Date().toISOString()
          })
        )
        const session = yield* Effect.flatMap(Keys, (k) => k.startSession(FOUNDER))
        return `ac_session=${session.token}`
      })
    )
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("GET /invest/api describes the investment API without credentials", async () => {
    const res = await fetch(url("/invest/api"))
    expect(res.status).toBe(200)
    const d = await res.json()
    expect(d.token).toEqual({
      name: "Agent Commerce Utility Token",
      symbol: "ACT",
      type: "utility",
      classification: "utility token, not a security"
    })
    expect(d.stakePercent).toBe(49)
    expect(d.platformOffering).toMatchObject({
      totalSupply: 100_000_000,
      offeredTokens: 49_000_000,
      priceCentsPerToken: 10
    })
    expect(d.aiAgentInvestment).toBe(true)
    expect(d.disclaimer).toBe(DISCLAIMER)
    expect(d.endpoints.map((e: { path: string }) => e.path)).toContain("/api/trpc/invest.vote")
  })

  it("POST /invest buys tokens with wallet credits; every response carries the disclaimer", async () => {
    const k = await investor(100_000)
    const res = await post("/api/v1/agent/invest", k.auth, { tokens: 2_500 })
    expect(res.status).toBe(201)
    const r = await res.json()
    expect(r.investment).toMatchObject({
      agentId: k.agentId,
      tokens: 2_500,
      amountCents: 25_000,
      target: { type: "platform", id: "platform" }
    })
    expect(r.holding).toMatchObject({ tokens: 2_500, investedCents: 25_000 })
    expect(r.disclaimer).toBe(DISCLAIMER)
    const project = await (
      await post("/api/v1/agent/invest", k.auth, { projectId: "prj_logoly", amountCents: 2_500 })
    ).json()
    expect(project.investment).toMatchObject({
      tokens: 10,
      amountCents: 2_400,
      unit: "ACT:prj_logoly",
      target: { type: "project", id: "prj_logoly" }
    })
    expect(project.disclaimer).toBe(DISCLAIMER)
    const portfolio = await (await fetch(url("/api/v1/agent/portfolio"), { headers: k.auth })).json()
    expect(portfolio.holdings.map((h: { target: { id: string }; tokens: number }) => [h.target.id, h.tokens])).toEqual([
      ["platform", 2_500],
      ["prj_logoly", 10]
    ])
    expect(portfolio.disclaimer).toBe(DISCLAIMER)
    expect(Array.isArray(portfolio.acquisitions)).toBe(true)
    expect(await server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(k.agentId))))).toBe(
      100_000 - 25_000 - 2_400
    )
  })

  it("refusals: no amount (400), empty wallet (402), unknown project (404), beyond the stake (409 with what remains)", async () => {
    const k = await investor(200_000)
    expect((await post("/api/v1/agent/invest", k.auth, {})).status).toBe(400)
    const poor = await investor(0)
    const broke = await post("/api/v1/agent/invest", poor.auth, { tokens: 1 })
    expect(broke.status).toBe(402)
    expect(await broke.json()).toMatchObject({ type: "InsufficientFunds", requiredCents: 10 })
    expect((await post("/api/v1/agent/invest", k.auth, { projectId: "prj_nope", tokens: 1 })).status).toBe(404)
    expect((await post("/api/v1/agent/invest", k.auth, { projectId: "prj_resolve_bot", tokens: 4_500 })).status).toBe(
      201
    )
    const over = await post("/api/v1/agent/invest", k.auth, { projectId: "prj_resolve_bot", tokens: 401 })
    expect(over.status).toBe(409)
    expect(await over.json()).toMatchObject({
      type: "StakeExhausted",
      requestedTokens: 401,
      remainingTokens: 400,
      remainingCents: 6_000,
      message: "only 400 of the 4900 tokens of the 49% stake remain (6000 cents); 401 requested"
    })
  })

  it("the cap holds under 20 racing requests", async () => {
    const k = await investor(1_000_000)
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post("/api/v1/agent/invest", k.auth, { projectId: "prj_habitly", tokens: 300 }))
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses.filter((s) => s === 201)).toHaveLength(16)
    expect(statuses.filter((s) => s === 409)).toHaveLength(4)
    const portfolio = await (await fetch(url("/api/v1/agent/portfolio"), { headers: k.auth })).json()
    expect(portfolio.holdings.find((h: { target: { id: string } }) => h.target.id === "prj_habitly").tokens).toBe(4_800)
    expect(await server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(k.agentId))))).toBe(
      1_000_000 - 4_800 * 20
    )
  }, 30_000)

  it("invest.invest and portfolio.holdings work with a key and with a dashboard session naming its agent", async () => {
    const k = await investor(10_000)
    const res = await post("/api/trpc/invest.invest", k.auth, { tokens: 100 })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.result.data.investment).toMatchObject({ tokens: 100, amountCents: 1_000 })
    expect(body.result.data.disclaimer).toBe(DISCLAIMER)
    const session = { cookie: k.cookie }
    const viaSession = await (
      await post("/api/trpc/invest.invest", session, { agentId: k.agentId, amountCents: 500 })
    ).json()
    expect(viaSession.result.data.holding).toMatchObject({ agentId: k.agentId, tokens: 150 })
    const unnamed = await post("/api/trpc/invest.invest", session, { tokens: 1 })
    expect(unnamed.status).toBe(400)
    expect((await unnamed.json()).error.data).toMatchObject({ code: "BAD_REQUEST", field: "agentId" })
    const stranger = await signUp(server.baseUrl)
    expect(
      (await post("/api/trpc/invest.invest", { cookie: stranger.cookie }, { agentId: k.agentId, tokens: 1 })).status
    ).toBe(404)
    const holdings = await (await fetch(url("/api/trpc/portfolio.holdings"), { headers: k.auth })).json()
    expect(holdings.result.data).toMatchObject({ agentIds: [k.agentId], disclaimer: DISCLAIMER })
    expect(holdings.result.data.holdings.map((h: { tokens: number }) => h.tokens)).toEqual([150])
    const second = await createAgentKey(server.baseUrl, ["invest"], { cookie: k.cookie, accountId: k.accountId })
    await fund(second.agentId, 1_000)
    await post("/api/trpc/invest.invest", second.auth, { tokens: 7 })
    const all = await (await fetch(url("/api/trpc/portfolio.holdings"), { headers: session })).json()
    expect(
      all.result.data.holdings.map((h: { agentId: string; tokens: number }) => [h.agentId, h.tokens]).sort()
    ).toEqual(
      [
        [k.agentId, 150],
        [second.agentId, 7]
      ].sort()
    )
    expect((await fetch(url("/api/trpc/portfolio.holdings"))).status).toBe(401)
  })

  it("governance: top-10 voting through invest.vote, an early close, and the founder's veto", async () => {
    // 11 holders of 1.0M … 2.0M tokens: far above any other platform holder of this server.
    const holders: Array<AgentKey> = []
    for (let i = 0; i < 11; i++) {
      const k = await investor(30_000_000)
      expect((await post("/api/v1/agent/invest", k.auth, { tokens: 1_000_000 + i * 100_000 })).status).toBe(201)
      holders.push(k)
    }
    const [smallest, ...top] = holders // holders[0] (1.0M) ranks 11th
    const outsider = await post("/api/v1/agent/proposals", smallest.auth, { title: "Mine", description: "" })
    expect(outsider.status).toBe(403)
    expect((await outsider.json()).type).toBe("NotATopHolder")
    const created = await post("/api/v1/agent/proposals", top[0].auth, {
      title: "Open a Spanish-language marketplace",
      description: "Localise the catalog"
    })
    expect(created.status).toBe(201)
    const proposal = await created.json()
    expect(proposal.snapshot.voters.map((v: { weight: number }) => v.weight)).toEqual(
      Array.from({ length: 10 }, (_, i) => 2_000_000 - i * 100_000)
    )
    expect(proposal.snapshot.totalWeight).toBe(15_500_000)

    const vote = (k: AgentKey, choice: string) =>
      post("/api/trpc/invest.vote", k.auth, { proposalId: proposal.id, choice })
    const refused = await vote(smallest, "no")
    expect(refused.status).toBe(403)
    expect((await refused.json()).error.data).toMatchObject({ code: "FORBIDDEN", type: "NotATopHolder" })
    // The three largest vote no (2.0 + 1.9 + 1.8 = 5.7M); the other seven yes (1.1 … 1.7 = 9.8M).
    for (const k of [...top].reverse()) {
      const rank = proposal.snapshot.voters.findIndex((v: { agentId: string }) => v.agentId === k.agentId)
      const res = await vote(k, rank < 3 ? "no" : "yes")
      expect(res.status).toBe(200)
    }
    expect((await vote(top[5], "no")).status).toBe(409)
    const closed = await (await fetch(url(`/api/v1/agent/proposals/${proposal.id}`), { headers: top[0].auth })).json()
    expect(closed).toMatchObject({
      status: "passed",
      tally: { yes: 9_800_000, no: 5_700_000, abstain: 0, votesCast: 10 }
    })

    const vetoPath = `/api/dashboard/governance/proposals/${proposal.id}/veto`
    const notFounder = await post(vetoPath, { cookie: top[0].cookie }, { reason: "I disagree" })
    expect(notFounder.status).toBe(403)
    const noSession = await post(vetoPath, {}, { reason: "anonymous" })
    expect(noSession.status).toBe(401)
    const veto = await post(vetoPath, { cookie: founderCookie }, { reason: "Not this year" })
    expect(veto.status).toBe(200)
    expect(await veto.json()).toMatchObject({
      status: "vetoed",
      veto: { reason: "Not this year", byAccountId: FOUNDER }
    })
    const after = await (await fetch(url(`/api/v1/agent/proposals/${proposal.id}`), { headers: smallest.auth })).json()
    expect(after.status).toBe("vetoed")
    expect((await post(vetoPath, { cookie: founderCookie }, { reason: "again" })).status).toBe(409)
    const list = await (await fetch(url("/api/v1/agent/proposals?limit=5"), { headers: smallest.auth })).json()
    expect(list[0].id).toBe(proposal.id)
    expect((await fetch(url("/api/v1/agent/proposals/prop_missing"), { headers: smallest.auth })).status).toBe(404)
  }, 60_000)
})
