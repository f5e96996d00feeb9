// A new agent is safe from its first minute: its wallet starts with the documented conservative
// policy (docs/money.md, "Defaults"; docs/dashboard.md), a purchase over the approval threshold
// waits for the owner and one over the per-purchase limit is refused; the owner may set other
// limits while creating the agent, in the same request. On every storage.
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { PLATFORM_SELLERS_ACCOUNT } from "../../src/layers/seed/seedCommerce.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { createAgentKey, signUp } from "../fixtures/agents.js"
import { agentCaller, serviceBody, tier } from "../fixtures/money.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

/** The documented defaults, restated from docs/money.md rather than imported. */
const DOCUMENTED = {
  perTransactionLimitCents: 2_000,
  dailyLimitCents: 5_000,
  monthlyLimitCents: 50_000,
  allowedCategories: null,
  allowedSellers: null,
  approvalThresholdCents: 500,
  autonomyLevel: "semi_auto",
  autoRecharge: { enabled: false, thresholdCents: 0, amountCents: 1_000 },
  frozen: false
}

describeEachStorage("safe defaults", (storage) => {
  let server: RuntimeServer
  const url = (p: string) => `${server.baseUrl}${p}`
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(url(path), {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "idempotency-key": randomUUID() },
      body: JSON.stringify(body)
    })
  const walletOf = async (cookie: string, agentId: string) =>
    (await fetch(url(`/api/dashboard/commerce/wallets/${agentId}`), { headers: { cookie } })).json()

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("a new agent's wallet has the documented limits: 400 cents buys, 600 waits for the owner, 2,500 is refused", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"], { wallet: null })
    const wallet = await walletOf(k.cookie, k.agentId)
    expect(wallet.policies).toEqual(DOCUMENTED)
    expect(wallet).toMatchObject({
      autonomyLevel: "semi_auto",
      remainingTodayCents: 5_000,
      remainingThisMonthCents: 50_000
    })

    const service = await server.run(
      Effect.gen(function* () {
        const ids = randomUUID().slice(0, 8)
        const seller = yield* Effect.flatMap(Keys, (keys) =>
          keys.createAgent(PLATFORM_SELLERS_ACCOUNT, { name: `seller ${ids}` })
        )
        yield* Effect.flatMap(Ledger, (l) =>
          l.transfer({
            kind: "grant",
            reference: `fund-${k.agentId}`,
            from: EXTERNAL_GRANTS,
            to: walletAccount(k.agentId),
            amount: 10_000
          })
        )
        return yield* Effect.flatMap(Catalog, (c) =>
          c.publish(
            agentCaller(seller.id, PLATFORM_SELLERS_ACCOUNT),
            serviceBody(`Defaults ${ids}`, [tier("p400", 400), tier("p600", 600), tier("p2500", 2_500)])
          )
        )
      })
    )
    const buy = async (tierId: string) => {
      const res = await post("/api/v1/agent/commerce/buy", k.auth, { serviceId: service.id, tierId, input: null })
      return { status: res.status, body: await res.json() }
    }
    expect(await buy("p400")).toMatchObject({ status: 201, body: { status: "completed" } })
    expect(await buy("p600")).toMatchObject({
      status: 201,
      body: { status: "pending_approval", approval: { reason: "approvalThreshold" } }
    })
    expect(await buy("p2500")).toMatchObject({
      status: 403,
      body: { _tag: "PolicyViolation", policy: "perTransactionLimit", limitCents: 2_000, attemptedCents: 2_500 }
    })
    expect(await server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(k.agentId))))).toBe(9_600)
  })

  it("the owner sets other limits while creating the agent; an invalid set creates no agent", async () => {
    const { cookie } = await signUp(server.baseUrl)
    const created = await post(
      "/api/dashboard/agents",
      { cookie },
      {
        name: "careful",
        wallet: { dailyLimitCents: 1_000, autonomyLevel: "manual", allowedCategories: ["translation"] }
      }
    )
    expect(created.status).toBe(201)
    const agent = await created.json()
    expect((await walletOf(cookie, agent.id)).policies).toEqual({
      ...DOCUMENTED,
      dailyLimitCents: 1_000,
      autonomyLevel: "manual",
      allowedCategories: ["translation"]
    })
    // Loosening while creating is the owner's to do, too.
    const free = await post(
      "/api/dashboard/agents",
      { cookie },
      { name: "free", wallet: { perTransactionLimitCents: null } }
    )
    expect((await walletOf(cookie, (await free.json()).id)).policies.perTransactionLimitCents).toBeNull()

    const listed = async () =>
      (await (await fetch(url("/api/dashboard/agents"), { headers: { cookie } })).json()).length
    const before = await listed()
    const invalid = await post(
      "/api/dashboard/agents",
      { cookie },
      { name: "invalid", wallet: { dailyLimitCents: 60_000 } }
    )
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toMatchObject({ field: "dailyLimitCents" })
    expect(await listed()).toBe(before)
  })
})
