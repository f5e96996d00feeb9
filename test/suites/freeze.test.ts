// The freeze switch, end to end on every storage: while an agent's wallet is frozen no debit path
// moves a cent (buy, an approval's execution, a saga's escrow, a paid call, an investment, a
// project's creation charge) and each refusal is a 403 naming the freeze; the agent's own key may
// freeze but never unfreeze; the owner's unfreeze gives back exactly the limits the wallet had.
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { Invest } from "../../src/services/invest/Invest.js"
import { Builder } from "../../src/services/projects/Builder.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"
const DASH = "/api/dashboard/commerce"
const SERVICE = "svc_translate_pro" // seeded, per call: standard 2 cents
const FREEZE = /frozen by its owner/

const parseChallenge = (header: string) => {
  const params: Record<string, string> = {}
  for (const m of header.slice(8).matchAll(/([a-z]+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]] = m[2].replace(/\\(.)/g, "$1")
  return params
}
const credentialFor = (c: Record<string, string>) =>
  `Payment ${Buffer.from(
    JSON.stringify({
      challenge: {
        id: c.id,
        realm: c.realm,
        method: c.method,
        intent: c.intent,
        request: c.request,
        expires: c.expires,
        digest: c.digest,
        header: c.header,
        opaque: c.opaque
      },
      payload: {}
    })
  ).toString("base64url")}`

describeEachStorage("freeze", (storage) => {
  let server: RuntimeServer
  const url = (p: string) => `${server.baseUrl}${p}`
  const send = (path: string, method: string, headers: Record<string, string>, body?: unknown) =>
    fetch(url(path), {
      method,
      headers: { ...headers, "content-type": "application/json", "idempotency-key": randomUUID() },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  const owner = (k: AgentKey) => ({ cookie: k.cookie })
  const balance = (agentId: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId))))
  const fund = (agentId: string, amount: number) =>
    server.run(
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${agentId}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(agentId),
          amount
        })
      )
    )
  const buy = (k: AgentKey) =>
    send(`${COMMERCE}/buy`, "POST", k.auth, { serviceId: SERVICE, tierId: "standard", input: { text: "hi", to: "en" } })

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("the freeze is named first: a frozen agent whose purchase other rules refuse too is told it is frozen", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
    await fund(k.agentId, 10_000)
    // Tightening with the agent's own key: only another seller, only another category, then frozen.
    const tightened = { allowedSellers: ["agt_someone_else"], allowedCategories: ["nothing-sold-here"], frozen: true }
    expect((await send(`${COMMERCE}/wallet`, "PATCH", k.auth, tightened)).status).toBe(200)
    const refused = await buy(k)
    expect(refused.status).toBe(403)
    const body = await refused.json()
    expect(body).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })
    expect(body.message).toMatch(FREEZE)
    expect(await balance(k.agentId)).toBe(10_000)
  })

  it("a frozen agent moves no cent on any debit path; each refusal is a 403 naming the freeze; pending approvals wait", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
    await fund(k.agentId, 10_000)
    // One purchase waits for the owner before the freeze (threshold 1 cent).
    const strict = { autonomyLevel: "semi_auto", approvalThresholdCents: 1 }
    expect((await send(`${DASH}/wallets/${k.agentId}`, "PATCH", owner(k), strict)).status).toBe(200)
    const waiting = await (await buy(k)).json()
    expect(waiting.status).toBe("pending_approval")
    expect((await send(`${DASH}/wallets/${k.agentId}`, "PATCH", owner(k), { autonomyLevel: "full_auto" })).status).toBe(
      200
    )

    // The agent's own key freezes its wallet (tightening); the view says so.
    const frozen = await send(`${COMMERCE}/wallet`, "PATCH", k.auth, { frozen: true })
    expect(frozen.status).toBe(200)
    expect((await frozen.json()).policies.frozen).toBe(true)

    const refusedBody = async (res: Response) => {
      expect(res.status).toBe(403)
      const body = await res.json()
      expect(body).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })
      expect(body.message).toMatch(FREEZE)
    }
    // buy
    await refusedBody(await buy(k))
    // the approval's execution: 403, and the approval is still pending
    await refusedBody(await send(`${DASH}/approvals/${waiting.approval.id}/approve`, "POST", owner(k)))
    const inbox = await (await fetch(url(`${DASH}/approvals?status=pending`), { headers: owner(k) })).json()
    expect(inbox.data.map((a: { id: string }) => a.id)).toContain(waiting.approval.id)
    // a saga: compensated at its first money step, naming the freeze
    const saga = await server.run(
      Sagas.pipe(
        Effect.flatMap((s) =>
          s.start({ agentId: k.agentId, accountId: k.accountId }, { serviceId: SERVICE, tierId: "standard" })
        )
      )
    )
    expect(saga.status).toBe("compensated")
    expect(saga.failure?.reason ?? JSON.stringify(saga.failure)).toMatch(FREEZE)
    // a paid call: the challenge is issued (it charges nothing), the credential is refused with 403
    const body = { input: { text: "Olá", to: "en" } }
    const invoke = (credential?: string) =>
      fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=standard`), {
        method: "POST",
        headers: {
          ...k.auth,
          "content-type": "application/json",
          ...(credential ? { "payment-authorization": credential } : {})
        },
        body: JSON.stringify(body)
      })
    const asked = await invoke()
    expect(asked.status).toBe(402)
    await refusedBody(await invoke(credentialFor(parseChallenge(asked.headers.get("www-authenticate")!))))
    // an investment and a project's creation charge
    const invest = await server.run(
      Effect.flip(Invest.pipe(Effect.flatMap((i) => i.invest(k.agentId, { amountCents: 500 } as never))))
    )
    expect(invest).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })
    const build = await server.run(
      Effect.flip(
        Builder.pipe(
          Effect.flatMap((b) =>
            b.create(
              { accountId: k.accountId, agentId: k.agentId },
              { name: "frozen", description: "a project while frozen" }
            )
          )
        )
      )
    )
    expect(build).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })

    expect(await balance(k.agentId)).toBe(10_000)
  })

  it("a key may freeze but not unfreeze; the owner's unfreeze restores exactly the previous limits", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
    await fund(k.agentId, 1_000)
    const limits = {
      perTransactionLimitCents: 700,
      dailyLimitCents: 900,
      monthlyLimitCents: 5_000,
      autonomyLevel: "semi_auto",
      approvalThresholdCents: 300,
      allowedCategories: ["translation"]
    }
    const before = (await (await send(`${DASH}/wallets/${k.agentId}`, "PATCH", owner(k), limits)).json()).policies
    expect((await send(`${COMMERCE}/wallet`, "PATCH", k.auth, { frozen: true })).status).toBe(200)
    const unfreezeByKey = await send(`${COMMERCE}/wallet`, "PATCH", k.auth, { frozen: false })
    expect(unfreezeByKey.status).toBe(403)
    expect((await unfreezeByKey.json()).message).toMatch(/frozen/)
    // The owner sees the freeze, and lifts it.
    const seen = await (await fetch(url(`${DASH}/wallets/${k.agentId}`), { headers: owner(k) })).json()
    expect(seen.policies).toEqual({ ...before, frozen: true })
    const lifted = await send(`${DASH}/wallets/${k.agentId}`, "PATCH", owner(k), { frozen: false })
    expect(lifted.status).toBe(200)
    expect((await lifted.json()).policies).toEqual(before)
    // Spending works again within those limits.
    const bought = await (await buy(k)).json()
    expect(bought.status).toBe("completed")
    expect(await balance(k.agentId)).toBe(998)
  })
})
