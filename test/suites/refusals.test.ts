// Refusals as records, end to end on every storage: every debit the wallet refuses (a limit, an
// allow-list, the balance, the freeze), on every path (buy, an approval's execution, a saga, a paid
// call, an investment, a project's creation), appears exactly once in the owner's list with its
// reason, the service's name and the amount; the agent's key reads its own; an agent of another
// account is 404 to the owner; pages follow each other without gaps or repeats.
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { Invest } from "../../src/services/invest/Invest.js"
import { Builder } from "../../src/services/projects/Builder.js"
import { createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"
const DASH = "/api/dashboard/commerce"
const SERVICE = "svc_translate_pro" // seeded, per call: standard 2 cents, category translation
const INPUT = { text: "hi", to: "en" }

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

interface Row {
  readonly id: string
  readonly agentId: string
  readonly serviceId: string | null
  readonly serviceName: string | null
  readonly priceCents: number
  readonly reason: string
  readonly path: string
  readonly message: string
}

describeEachStorage("refusals", (storage) => {
  let server: RuntimeServer
  const url = (p: string) => `${server.baseUrl}${p}`
  const send = (path: string, method: string, headers: Record<string, string>, body?: unknown) =>
    fetch(url(path), {
      method,
      headers: { ...headers, "content-type": "application/json", "idempotency-key": randomUUID() },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  const get = async (path: string, headers: Record<string, string>) => {
    const res = await fetch(url(path), { headers })
    return { status: res.status, body: await res.json() }
  }
  const fund = (agentId: string, amount: number) =>
    server.run(
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${agentId}-${randomUUID()}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(agentId),
          amount
        })
      )
    )

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("every refusal on every path appears once in the owner's list, with its reason", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
    const owner = { cookie: k.cookie }
    const policy = async (body: Record<string, unknown>) =>
      expect((await send(`${DASH}/wallets/${k.agentId}`, "PATCH", owner, body)).status).toBe(200)
    const buy = () => send(`${COMMERCE}/buy`, "POST", k.auth, { serviceId: SERVICE, tierId: "standard", input: INPUT })
    const expected: Array<[path: string, reason: string]> = []
    const refusedBuy = async (reason: string, status = 403) => {
      expect((await buy()).status, reason).toBe(status)
      expected.push(["buy", reason])
    }

    // A buy with nothing in the wallet, then each policy in turn.
    await refusedBuy("insufficient_balance", 402)
    await fund(k.agentId, 10_000)
    await policy({ perTransactionLimitCents: 1 })
    await refusedBuy("per_purchase_limit")
    await policy({ perTransactionLimitCents: null, dailyLimitCents: 1 })
    await refusedBuy("daily_limit")
    await policy({ dailyLimitCents: null, monthlyLimitCents: 1 })
    await refusedBuy("monthly_limit")
    await policy({ monthlyLimitCents: null, allowedCategories: ["not-this-one"] })
    await refusedBuy("category")
    await policy({ allowedCategories: null, allowedSellers: ["agt_someone_else"] })
    await refusedBuy("seller_allowlist")
    await policy({ allowedSellers: null, frozen: true })
    await refusedBuy("frozen")

    // An approval executed after the owner tightened the limit: refused, kept as the approval's.
    await policy({ frozen: false, autonomyLevel: "semi_auto", approvalThresholdCents: 1 })
    const waiting = await (await buy()).json()
    expect(waiting.status).toBe("pending_approval")
    await policy({ perTransactionLimitCents: 1 })
    expect((await send(`${DASH}/approvals/${waiting.approval.id}/approve`, "POST", owner)).status).toBe(403)
    expected.push(["approval", "per_purchase_limit"])

    // A saga, refused by the limit at its quote.
    const saga = await server.run(
      Effect.flatMap(Sagas, (s) =>
        s.start({ agentId: k.agentId, accountId: k.accountId }, { serviceId: SERVICE, tierId: "standard" })
      )
    )
    expect(saga.status).toBe("compensated")
    expected.push(["saga", "per_purchase_limit"])

    // A paid call: the challenge charges nothing and is no refusal; its credential is refused.
    await policy({ perTransactionLimitCents: null, autonomyLevel: "full_auto", allowedSellers: ["agt_someone_else"] })
    const invoke = (credential?: string) =>
      fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=standard`), {
        method: "POST",
        headers: {
          ...k.auth,
          "content-type": "application/json",
          ...(credential ? { "payment-authorization": credential } : {})
        },
        body: JSON.stringify({ input: INPUT })
      })
    const asked = await invoke()
    expect(asked.status).toBe(402)
    expect((await invoke(credentialFor(parseChallenge(asked.headers.get("www-authenticate")!)))).status).toBe(403)
    expected.push(["paid_call", "seller_allowlist"])

    // An investment over the daily limit and a project's creation while frozen.
    await policy({ allowedSellers: null, dailyLimitCents: 100 })
    const invest = await server.run(
      Effect.flip(Effect.flatMap(Invest, (i) => i.invest(k.agentId, { amountCents: 500 } as never)))
    )
    expect(invest).toMatchObject({ _tag: "PolicyViolation", policy: "dailyLimit" })
    expected.push(["invest", "daily_limit"])
    await policy({ dailyLimitCents: null, frozen: true })
    const build = await server.run(
      Effect.flip(
        Effect.flatMap(Builder, (b) =>
          b.create({ accountId: k.accountId, agentId: k.agentId }, { name: "Atlas", description: "a refused project" })
        )
      )
    )
    expect(build).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })
    expected.push(["build", "frozen"])

    const list = await get(`${DASH}/refusals?agentId=${k.agentId}`, owner)
    expect(list.status).toBe(200)
    const rows = list.body.refusals as ReadonlyArray<Row>
    // Newest first, each refusal exactly once (two in one millisecond may come in either order).
    const key = (pair: ReadonlyArray<string>) => pair.join(" ")
    expect(rows.map((r) => key([r.path, r.reason])).sort()).toEqual(expected.map(key).sort())
    const times = rows.map((r) => Date.parse((r as unknown as { createdAt: string }).createdAt))
    expect(times).toEqual([...times].sort((x, y) => y - x))
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length)
    for (const r of rows) {
      expect(r.agentId).toBe(k.agentId)
      expect(r.message.length).toBeGreaterThan(0)
    }
    const bought = rows.filter((r) => r.serviceId === SERVICE)
    expect(bought.length).toBe(expected.length - 2)
    for (const r of bought) expect(r).toMatchObject({ serviceName: "Translate Pro", priceCents: 2 })
    expect(rows.find((r) => r.path === "invest")).toMatchObject({ serviceId: null, priceCents: 500 })
    expect(rows.find((r) => r.path === "build")).toMatchObject({ serviceId: null, serviceName: "project Atlas" })
    expect(rows.find((r) => r.reason === "frozen")?.message).toMatch(/frozen by its owner/)

    // The agent's key reads the same list; the account-wide list holds it too.
    const own = await get(`${COMMERCE}/refusals?limit=100`, k.auth)
    expect(own.body.refusals).toEqual(rows)
    expect((await get(`${DASH}/refusals`, owner)).body.refusals).toEqual(rows)

    // Pages of 4 follow each other, newest first, and end with a null cursor.
    const paged: Array<Row> = []
    let cursor: string | null = null
    do {
      const q: string = cursor === null ? "" : `&cursor=${cursor}`
      const page = await get(`${DASH}/refusals?agentId=${k.agentId}&limit=4${q}`, owner)
      expect(page.body.refusals.length).toBeLessThanOrEqual(4)
      paged.push(...page.body.refusals)
      cursor = page.body.nextCursor
    } while (cursor !== null)
    expect(paged).toEqual(rows)
  })

  it("another agent of the account has its own list; another account's agent is 404; a forged cursor is 400", async () => {
    const a = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
    const b = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"], {
      cookie: a.cookie,
      accountId: a.accountId
    })
    const stranger = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect(
      (await send(`${COMMERCE}/buy`, "POST", a.auth, { serviceId: SERVICE, tierId: "standard", input: INPUT })).status
    ).toBe(402)
    expect((await get(`${COMMERCE}/refusals`, b.auth)).body).toEqual({ refusals: [], nextCursor: null })
    expect((await get(`${COMMERCE}/refusals`, a.auth)).body.refusals).toHaveLength(1)
    expect((await get(`${DASH}/refusals?agentId=${a.agentId}`, { cookie: stranger.cookie })).status).toBe(404)
    expect((await get(`${DASH}/refusals`, { cookie: stranger.cookie })).body.refusals).toEqual([])
    const forged = await get(`${DASH}/refusals?cursor=not-a-cursor`, { cookie: a.cookie })
    expect(forged.status).toBe(400)
    expect(forged.body).toMatchObject({ field: "cursor" })
  })
})
