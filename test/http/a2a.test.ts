// A2A 1.0 end to end with the stock @a2a-js/sdk client: it reads /.well-known/agent-card.json,
// picks the JSON-RPC interface, and completes each skill (browse services, buy, negotiate, check a
// transaction) — answered by the same routes REST and MCP call, with the caller's key.
import { Role } from "@a2a-js/sdk"
import { a2aClientAt, dataMessage } from "../fixtures/a2aClient.js"
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"
type Json = Record<string, unknown>

/** A stock client for the card at `base`, sending `headers` (the API key) on every request. */
const a2aClient = a2aClientAt

let counter = 0
/** A user message asking for one skill: a data part {skill, …arguments}. */
const ask = (data: Json) => dataMessage(data, { messageId: `m-${++counter}`, contextId: "ctx-1" })

/** The reply's data part and metadata (the skill answers with a Message). */
const replyOf = (result: unknown) => {
  const message = result as {
    role: number
    contextId: string
    parts: Array<{ content?: { $case: string; value: unknown } }>
    metadata: Json
  }
  expect(message.role).toBe(Role.ROLE_AGENT)
  const data = message.parts.find((p) => p.content?.$case === "data")?.content?.value as Json
  const text = message.parts.find((p) => p.content?.$case === "text")?.content?.value as string
  return { data, text, metadata: message.metadata, contextId: message.contextId }
}

describeEachStorage("A2A 1.0", (storage) => {
  let server: RuntimeServer
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

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, negotiationDelayMs: 50 }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("the agent card has every field A2A 1.0 requires, and its interface is the JSON-RPC endpoint", async () => {
    const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as Json & {
      supportedInterfaces: Array<Json>
      skills: Array<Json>
    }
    for (const field of ["name", "description", "version"]) expect(typeof card[field], field).toBe("string")
    expect(card.supportedInterfaces).toEqual([
      { url: `${server.baseUrl}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }
    ])
    expect(card.capabilities).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: true })
    expect(card.defaultInputModes).toEqual(["application/json", "text/plain"])
    expect(card.defaultOutputModes).toEqual(["application/json", "text/plain"])
    expect(card.skills.map((s) => s.id)).toEqual([
      "browse_services",
      "buy",
      "buy_saga",
      "negotiate",
      "check_transaction",
      "list_orders",
      "deliver_order",
      "fail_order"
    ])
    for (const s of card.skills) {
      for (const field of ["id", "name", "description"])
        expect(typeof s[field], `${String(s.id)}.${field}`).toBe("string")
      expect(Array.isArray(s.tags) && s.tags.length > 0).toBe(true)
    }
    // No pre-1.0 members left.
    for (const old of ["url", "preferredTransport", "protocolVersion", "security"])
      expect(card[old], old).toBeUndefined()
  })

  it("the stock client reads the card and completes every skill; the answers are the REST routes'", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    await fund(k.agentId, 5000)
    const client = await a2aClient(server.baseUrl, { authorization: `Bearer ${k.secret}` })

    const browse = replyOf(
      await client.sendMessage(ask({ skill: "browse_services", category: "translation", limit: 2 }))
    )
    expect(browse.metadata).toMatchObject({ skill: "browse_services", httpStatus: 200, ok: true })
    expect(browse.contextId).toBe("ctx-1")
    const rest = await (
      await fetch(`${server.baseUrl}${COMMERCE}/services?category=translation&limit=2`, { headers: k.auth })
    ).json()
    expect(browse.data).toEqual(rest)

    const bought = replyOf(
      await client.sendMessage(
        ask({ skill: "buy", serviceId: "svc_doc_translate", tierId: "starter", input: { doc: "a.pdf" } })
      )
    )
    expect(bought.metadata).toMatchObject({ skill: "buy", httpStatus: 201, ok: true })
    expect(bought.data).toMatchObject({
      status: "completed",
      transaction: { serviceId: "svc_doc_translate", tierId: "starter" }
    })
    const txId = (bought.data as { transaction: { id: string } }).transaction.id

    const checked = replyOf(await client.sendMessage(ask({ skill: "check_transaction", id: txId })))
    expect(checked.metadata).toMatchObject({ httpStatus: 200, ok: true })
    expect(checked.data).toEqual(
      await (await fetch(`${server.baseUrl}${COMMERCE}/transactions/${txId}`, { headers: k.auth })).json()
    )

    const offer = replyOf(
      await client.sendMessage(
        ask({ skill: "negotiate", serviceId: "svc_doc_translate", tierId: "starter", proposedPriceCents: 1500 })
      )
    )
    expect(offer.metadata).toMatchObject({ skill: "negotiate", ok: true })
    expect(offer.data).toMatchObject({ serviceId: "svc_doc_translate", tierId: "starter" })
    expect(typeof (offer.data as { id: unknown }).id).toBe("string")
  })

  it("refusals: a route's typed error comes back in the reply; unknown skill and tasks are JSON-RPC errors; no key is 401", async () => {
    const poor = await createAgentKey(server.baseUrl, ["commerce:*"])
    const client = await a2aClient(server.baseUrl, { "x-api-key": poor.secret })
    const refused = replyOf(
      await client.sendMessage(ask({ skill: "buy", serviceId: "svc_doc_translate", tierId: "starter" }))
    )
    expect(refused.metadata).toMatchObject({ skill: "buy", httpStatus: 402, ok: false })
    expect(refused.data).toMatchObject({
      type: "tag:ai2aic-commerce,2026:problems/wallet-insufficient-funds",
      missingCents: 1900
    })
    expect(refused.text).toMatch(/^Buy a service: refused \(402\)/)
    await expect(client.sendMessage(ask({ skill: "teleport" }))).rejects.toMatchObject({
      envelopeCode: -32602,
      reason: "INVALID_PARAMS"
    })
    await expect(client.getTask({ tenant: "", id: "task_1", historyLength: undefined })).rejects.toMatchObject({
      envelopeCode: -32001
    })

    const anonymous = await fetch(`${server.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} })
    })
    expect(anonymous.status).toBe(401)
    const wrongVersion = await fetch(`${server.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "2.0", authorization: `Bearer ${poor.secret}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} })
    })
    expect(((await wrongVersion.json()) as { error: { code: number } }).error.code).toBe(-32009)
  })
})
