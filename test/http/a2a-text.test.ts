// A2A 1.0: a text message is answered, never refused (docs/a2a.md "Text"). With the stock
// @a2a-js/sdk client, on every storage: each row of the intent table runs the route it names and
// answers what REST answers, with a sentence for a reader; a text no row matches gets the skills and
// how to call them.
import { Role } from "@a2a-js/sdk"
import { a2aClientAt } from "../fixtures/a2aClient.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { intentOf } from "../../src/http/a2a/intents.js"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const C = "/api/v1/agent/commerce"
type Json = Record<string, unknown>

describe("the intent table (docs/a2a.md), row by row", () => {
  it.each([
    ["list services", { intent: "list_services", tool: "list_services", args: { limit: 10 } }],
    ["What services are for sale?", { intent: "list_services", tool: "list_services", args: { limit: 10 } }],
    [
      "list services for translation",
      { intent: "list_services", tool: "list_services", args: { q: "translation", limit: 10 } }
    ],
    ["browse translation", { intent: "list_services", tool: "list_services", args: { q: "translation", limit: 10 } }],
    ["price of svc_doc_translate", { intent: "price", tool: "get_service", args: { id: "svc_doc_translate" } }],
    ["how much is translation?", { intent: "price", tool: "list_services", args: { q: "translation", limit: 10 } }],
    [
      "buy svc_doc_translate tier starter",
      { intent: "buy", tool: "buy", args: { serviceId: "svc_doc_translate", tierId: "starter" } }
    ],
    [
      "please buy svc_doc_translate starter",
      { intent: "buy", tool: "buy", args: { serviceId: "svc_doc_translate", tierId: "starter" } }
    ],
    ["buy svc_doc_translate", { intent: "tiers", tool: "get_service", args: { id: "svc_doc_translate" } }],
    ["buy a translation", { intent: "list_services", tool: "list_services", args: { q: "a translation", limit: 10 } }],
    ["status of tx_abc123", { intent: "status", tool: "transaction", args: { id: "tx_abc123" } }],
    ["where is tx_abc123?", { intent: "status", tool: "transaction", args: { id: "tx_abc123" } }],
    ["check apr_9", { intent: "status", tool: "transaction", args: { id: "apr_9" } }],
    ["status of my order", { intent: "help", hint: expect.stringMatching(/tx_/) }],
    ["hello", { intent: "help" }],
    ["", { intent: "help" }]
  ])("%j", (text, expected) => {
    expect(intentOf(text)).toEqual(expected)
  })
})

describeEachStorage("A2A 1.0 text messages", (storage) => {
  let server: RuntimeServer
  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  const client = (k: AgentKey) => a2aClientAt(server.baseUrl, k.auth)
  let n = 0
  /** Sends `text` as the stock client does a plain text message; the agent's reply. */
  const say = async (k: AgentKey, text: string) => {
    const reply = (await (
      await client(k)
    ).sendMessage({
      tenant: "",
      message: {
        messageId: `t-${++n}`,
        contextId: "chat-1",
        taskId: "",
        role: Role.ROLE_USER,
        parts: [
          { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: []
      },
      configuration: undefined,
      metadata: undefined
    })) as {
      role: number
      contextId: string
      parts: Array<{ content?: { $case: string; value: unknown } }>
      metadata: Json
    }
    expect(reply.role).toBe(Role.ROLE_AGENT)
    expect(reply.contextId).toBe("chat-1")
    return {
      text: reply.parts.find((p) => p.content?.$case === "text")?.content?.value as string,
      data: reply.parts.find((p) => p.content?.$case === "data")?.content?.value as Json,
      metadata: reply.metadata
    }
  }
  const rest = async (k: AgentKey, path: string) =>
    (await fetch(`${server.baseUrl}${path}`, { headers: k.auth })).json()

  it("list services, price of, buy, status of: each answers what its REST route answers, with a sentence naming the next step", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    await fetch(`${server.baseUrl}${C}/wallet/topup`, {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json", "idempotency-key": `t-${k.agentId}` },
      body: JSON.stringify({ amountCents: 5_000 })
    })

    const listed = await say(k, "list services for translation")
    expect(listed.metadata).toMatchObject({
      intent: "list_services",
      skill: "browse_services",
      httpStatus: 200,
      ok: true
    })
    expect(listed.data).toEqual(await rest(k, `${C}/services?q=translation&limit=10`))
    expect(listed.text).toMatch(/svc_doc_translate "[^"]+": starter \$19\.00/)
    expect(listed.text).toMatch(/buy <service id> tier <tier id>/)

    const price = await say(k, "price of svc_doc_translate")
    expect(price.metadata).toMatchObject({ intent: "price", httpStatus: 200, ok: true })
    expect(price.data).toEqual(await rest(k, `${C}/services/svc_doc_translate`))
    expect(price.text).toMatch(/^svc_doc_translate "[^"]+": starter \$19\.00 per /)

    const tiers = await say(k, "buy svc_doc_translate")
    expect(tiers.metadata).toMatchObject({ intent: "tiers", httpStatus: 200 })
    expect(tiers.text).toMatch(/Name a tier: buy svc_doc_translate tier <tier id>/)
    // Asking for the tiers bought nothing.
    expect(await rest(k, `${C}/wallet`)).toMatchObject({ balanceCents: 5_000 })

    const bought = await say(k, "buy svc_doc_translate tier starter")
    expect(bought.metadata).toMatchObject({ intent: "buy", skill: "buy", httpStatus: 201, ok: true })
    const tx = (bought.data as { status: string; transaction: { id: string } }).transaction
    expect(bought.data).toMatchObject({ status: "completed" })
    expect(bought.text).toBe(`${tx.id}: completed, svc_doc_translate/starter for $19.00.`)
    expect(await rest(k, `${C}/wallet`)).toMatchObject({ balanceCents: 3_100 })

    const status = await say(k, `status of ${tx.id}`)
    expect(status.metadata).toMatchObject({ intent: "status", skill: "check_transaction", httpStatus: 200 })
    expect(status.data).toEqual(await rest(k, `${C}/transactions/${tx.id}`))
    expect(status.text).toBe(`${tx.id}: completed, svc_doc_translate/starter for $19.00.`)
  })

  it("a text no row matches gets the skills and how to call them; a refusal is a sentence with the route's reason", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    const help = await say(k, "hello there")
    expect(help.metadata).toEqual({ intent: "help", ok: true })
    expect((help.data.skills as Array<{ id: string }>).map((s) => s.id)).toEqual([
      "browse_services",
      "buy",
      "buy_saga",
      "negotiate",
      "check_transaction",
      "list_orders",
      "deliver_order",
      "fail_order"
    ])
    for (const phrase of ["list services", "price of svc_", "buy svc_", "status of tx_"])
      expect(help.text).toContain(phrase)
    expect(help.text).toContain(`{"skill":"buy"`)

    const hinted = await say(k, "status of my purchase")
    expect(hinted.metadata).toMatchObject({ intent: "help" })
    expect(hinted.text).toMatch(/^To check a purchase, name the purchase: status of tx_/)

    // Nothing in the wallet: the buy is refused, as REST refuses it, in a sentence.
    const refused = await say(k, "buy svc_doc_translate tier starter")
    expect(refused.metadata).toMatchObject({ intent: "buy", httpStatus: 402, ok: false })
    expect(refused.text).toMatch(/^Refused \(402\): /)
    const unknown = await say(k, "status of tx_nope")
    expect(unknown.metadata).toMatchObject({ intent: "status", httpStatus: 404, ok: false })
  })
})
