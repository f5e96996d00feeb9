// The calls MCP and A2A make in process carry their own Idempotency-Key (the tool call's
// `_meta.idempotencyKey`, the A2A message's `metadata.idempotencyKey`) or none — never the key of
// the HTTP request that carried the envelope. A buyer's two different purchases are two purchases,
// whatever header the envelope had; the same per-call key replays the first purchase.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { storageCases } from "../fixtures/db.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const COMMERCE = "/api/v1/agent/commerce"
type Json = Record<string, unknown>
/** A purchase as the REST answer, the tool's structuredContent and the skill's data part carry it. */
interface Purchase {
  readonly transaction: { readonly id: string; readonly priceCents: number }
}

let server: TestServer

/** A REST call; `B` is the answer's shape as the test reads it. */
const rest = async <B = unknown>(
  agent: AgentKey,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...agent.auth, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: res.status, body: (await res.json()) as B }
}

/** A funded buyer: 100.00 in the wallet. */
const buyer = async () => {
  const agent = await createAgentKey(server.baseUrl, ["commerce:*"])
  expect((await rest(agent, "POST", `${COMMERCE}/wallet/topup`, { amountCents: 10_000 })).status).toBe(201)
  return agent
}
const balance = async (agent: AgentKey) =>
  (await rest<{ balanceCents: number }>(agent, "GET", `${COMMERCE}/wallet`)).body.balanceCents
const transactions = async (agent: AgentKey) =>
  (await rest<{ data: Array<{ id: string }> }>(agent, "GET", `${COMMERCE}/transactions?role=buyer&limit=100`)).body.data
    .map((t) => t.id)
    .sort()

let rpcId = 0
/** One JSON-RPC message POSTed as it is, with the envelope's own headers. */
const rpc = async <B>(path: string, agent: AgentKey, message: Json, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: {
      ...agent.auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, ...message })
  })
  return { status: res.status, body: (await res.json()) as B }
}

const buyTool = (agent: AgentKey, args: Json, meta?: Json, headers?: Record<string, string>) =>
  rpc<{ result: { isError?: boolean; structuredContent: Purchase } }>(
    "/mcp",
    agent,
    { method: "tools/call", params: { name: "buy", arguments: args, ...(meta ? { _meta: meta } : {}) } },
    headers
  ).then((r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body.result
  })

/** A SendMessage answer: the message with the skill's parts, or a JSON-RPC error. */
interface SkillAnswer {
  readonly result: { readonly message: { readonly parts: ReadonlyArray<{ readonly data?: Purchase }> } }
  readonly error?: unknown
}
const buySkill = (agent: AgentKey, args: Json, metadata?: Json, headers?: Record<string, string>) =>
  rpc<SkillAnswer>(
    "/a2a",
    agent,
    {
      method: "SendMessage",
      params: {
        message: {
          messageId: `m-${rpcId}`,
          role: "ROLE_USER",
          parts: [{ data: { skill: "buy", ...args } }],
          ...(metadata ? { metadata } : {})
        }
      }
    },
    headers
  ).then((r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  })
/** The purchase in the answer's data part (undefined parts fail at the read, as the test means them to). */
const skillData = (answer: SkillAnswer) =>
  answer.result.message.parts.find((p) => p.data !== undefined)?.data as Purchase

const TRANSLATE = { serviceId: "svc_doc_translate", tierId: "starter" }

// One suite per storage: the idempotency and rate-limit stores differ.
for (const { name: storage, skip } of storageCases) {
  describe.skipIf(skip !== undefined)(`[${storage}]${skip ? ` — ${skip}` : ""}`, () => {
    beforeAll(async () => {
      server = await startServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
    }, 60_000)
    afterAll(async () => {
      await server?.close()
    })

    describe(`MCP tool calls carry their own Idempotency-Key [${storage}]`, () => {
      it("two different buys in two MCP requests with the same Idempotency-Key header are two purchases", async () => {
        const agent = await buyer()
        const before = await balance(agent)
        const first = await buyTool(agent, { ...TRANSLATE, input: "first" }, undefined, {
          "idempotency-key": "envelope-1"
        })
        const second = await buyTool(agent, { ...TRANSLATE, input: "second" }, undefined, {
          "idempotency-key": "envelope-1"
        })
        expect(first.isError, JSON.stringify(first)).toBeFalsy()
        expect(second.isError, JSON.stringify(second)).toBeFalsy()
        expect(second.structuredContent.transaction.id).not.toBe(first.structuredContent.transaction.id)
        expect(await transactions(agent)).toHaveLength(2)
        const price = first.structuredContent.transaction.priceCents
        expect(await balance(agent)).toBe(before - 2 * price)
      })

      it("a buy inside an MCP request whose header key a REST buy already used is its own purchase, not the REST one's replay", async () => {
        const agent = await buyer()
        const byRest = await rest<Purchase>(
          agent,
          "POST",
          `${COMMERCE}/buy`,
          { ...TRANSLATE, input: "rest" },
          { "idempotency-key": "shared-1" }
        )
        expect(byRest.status).toBe(201)
        const byTool = await buyTool(agent, { ...TRANSLATE, input: "tool" }, undefined, {
          "idempotency-key": "shared-1"
        })
        expect(byTool.isError, JSON.stringify(byTool)).toBeFalsy()
        expect(byTool.structuredContent.transaction.id).not.toBe(byRest.body.transaction.id)
        expect(await transactions(agent)).toHaveLength(2)
      })

      it("the same _meta.idempotencyKey on a repeated call replays the first purchase: one charge", async () => {
        const agent = await buyer()
        const before = await balance(agent)
        const first = await buyTool(agent, { ...TRANSLATE, input: "once" }, { idempotencyKey: "tool-buy-1" })
        const again = await buyTool(agent, { ...TRANSLATE, input: "once" }, { idempotencyKey: "tool-buy-1" })
        expect(again.structuredContent.transaction.id).toBe(first.structuredContent.transaction.id)
        expect(await transactions(agent)).toEqual([first.structuredContent.transaction.id])
        expect(await balance(agent)).toBe(before - first.structuredContent.transaction.priceCents)
      })

      it("a _meta.idempotencyKey that is not 1–255 visible ASCII characters is refused naming it, nothing bought", async () => {
        const agent = await buyer()
        const refused = await buyTool(agent, TRANSLATE, { idempotencyKey: "has space" })
        expect(refused.isError).toBe(true)
        expect(refused.structuredContent).toMatchObject({
          status: 400,
          type: "InvalidInput",
          field: "_meta.idempotencyKey"
        })
        expect(await transactions(agent)).toEqual([])
      })
    })

    describe(`A2A messages carry their own Idempotency-Key [${storage}]`, () => {
      it("two different buys in two A2A requests with the same Idempotency-Key header are two purchases", async () => {
        const agent = await buyer()
        const first = skillData(
          await buySkill(agent, { ...TRANSLATE, input: "first" }, undefined, { "idempotency-key": "envelope-2" })
        )
        const second = skillData(
          await buySkill(agent, { ...TRANSLATE, input: "second" }, undefined, { "idempotency-key": "envelope-2" })
        )
        expect(first.transaction?.id, JSON.stringify(first)).toBeDefined()
        expect(second.transaction?.id, JSON.stringify(second)).toBeDefined()
        expect(second.transaction.id).not.toBe(first.transaction.id)
        expect(await transactions(agent)).toHaveLength(2)
      })

      it("a buy inside an A2A request whose header key a REST buy already used is its own purchase", async () => {
        const agent = await buyer()
        const byRest = await rest<Purchase>(
          agent,
          "POST",
          `${COMMERCE}/buy`,
          { ...TRANSLATE, input: "rest" },
          { "idempotency-key": "shared-2" }
        )
        const bySkill = skillData(
          await buySkill(agent, { ...TRANSLATE, input: "skill" }, undefined, { "idempotency-key": "shared-2" })
        )
        expect(bySkill.transaction?.id, JSON.stringify(bySkill)).toBeDefined()
        expect(bySkill.transaction.id).not.toBe(byRest.body.transaction.id)
        expect(await transactions(agent)).toHaveLength(2)
      })

      it("the same message metadata idempotencyKey on a repeated message replays the first purchase: one charge", async () => {
        const agent = await buyer()
        const before = await balance(agent)
        const first = skillData(
          await buySkill(agent, { ...TRANSLATE, input: "once" }, { idempotencyKey: "skill-buy-1" })
        )
        const again = skillData(
          await buySkill(agent, { ...TRANSLATE, input: "once" }, { idempotencyKey: "skill-buy-1" })
        )
        expect(again.transaction.id).toBe(first.transaction.id)
        expect(await transactions(agent)).toEqual([first.transaction.id])
        expect(await balance(agent)).toBe(before - first.transaction.priceCents)
      })

      it("a message metadata idempotencyKey that is not 1–255 visible ASCII characters is refused naming it, nothing bought", async () => {
        const agent = await buyer()
        const refused = await buySkill(agent, TRANSLATE, { idempotencyKey: "" })
        expect(refused.error).toMatchObject({ code: -32602, data: { field: "message.metadata.idempotencyKey" } })
        expect(await transactions(agent)).toEqual([])
      })
    })
  })
}
