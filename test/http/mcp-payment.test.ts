// MPP over MCP, end to end with stock clients only: the MCP SDK's client over Streamable HTTP,
// wrapped by mppx's McpClient.wrap (with the credits method, test/fixtures/mppxCredits.ts). A paid
// tool answers -32042 with data.challenges; mppx pays through params._meta and gets the receipt in
// result._meta; a refused credential is -32043 with a fresh challenge. Also: the negotiated protocol
// revision (2025-11-25) and the payment capability, as the manifest publishes them.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { McpClient } from "mppx/mcp/client"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { creditsClient } from "../fixtures/mppxCredits.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const SERVICE = "svc_translate_pro" // per_call: standard 2 cents
const PROBLEMS = "https://paymentauth.org/problems/"

describeEachStorage("MPP over MCP", (storage) => {
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
  const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))
  const connect = async (secret: string) => {
    const client = new Client({ name: "mcp-payment-test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${secret}` } }
    })
    await client.connect(transport)
    return { client, transport }
  }
  const invokeArgs = { id: SERVICE, tier: "standard", input: { text: "over MCP" } }

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("negotiates 2025-11-25 and advertises capabilities.experimental.payment, as /.well-known/mcp.json says", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
    const { client, transport } = await connect(k.secret)
    expect(transport.protocolVersion).toBe("2025-11-25")
    const manifest = (await (await fetch(`${server.baseUrl}/.well-known/mcp.json`)).json()) as {
      protocolVersion: string
      capabilities: unknown
    }
    expect(manifest.protocolVersion).toBe("2025-11-25")
    expect(client.getServerCapabilities()).toEqual(manifest.capabilities)
    expect(client.getServerCapabilities()?.experimental).toEqual({
      payment: { methods: { credits: { intents: ["charge"] } } }
    })
    await client.close()
  })

  it("a paid tool: -32042 with data.challenges for a plain client; mppx's McpClient pays and gets the receipt in result._meta", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
    await fund(k.agentId, 10)
    const { client } = await connect(k.secret)
    // Unwrapped: the JSON-RPC error, as the MCP transport draft writes it.
    const refused = await client.callTool({ name: "mpp_invoke", arguments: invokeArgs }).then(
      () => undefined,
      (e: unknown) =>
        e as {
          code: number
          data: { httpStatus: number; challenges: Array<Record<string, unknown>>; problem: Record<string, unknown> }
        }
    )
    expect(refused?.code).toBe(-32042)
    expect(refused?.data.httpStatus).toBe(402)
    expect(refused?.data.problem).toMatchObject({
      type: `${PROBLEMS}payment-required`,
      title: "Payment Required",
      status: 402
    })
    expect(refused?.data.challenges).toHaveLength(1)
    const offered = refused!.data.challenges[0]
    expect(offered).toMatchObject({
      realm: "ai2aic-commerce",
      method: "credits",
      intent: "charge",
      request: { amount: "2", currency: "usd" }
    })
    expect(refused?.data.problem.challengeId).toBe(offered.id)
    expect(await balance(walletAccount(k.agentId))).toBe(10)

    // Wrapped by mppx (a second connection: wrap patches the client it is given): pays with the
    // challenge and calls again, no code of ours in between.
    const second = await connect(k.secret)
    const paying = McpClient.wrap(second.client, { methods: [creditsClient] })
    const paid = await paying.callTool({ name: "mpp_invoke", arguments: invokeArgs })
    expect(paid.isError).toBeFalsy()
    expect(paid.structuredContent).toMatchObject({ serviceId: SERVICE, chargedCents: 2 })
    const receipt = (paid._meta as Record<string, Record<string, unknown>>)["org.paymentauth/receipt"]
    expect(receipt).toMatchObject({ status: "success", method: "credits", amount: "2", currency: "usd" })
    expect(paid.receipt).toEqual(receipt)
    expect(receipt.challengeId).not.toBe(offered.id) // the retry paid a fresh challenge of its own
    expect(await balance(walletAccount(k.agentId))).toBe(8)

    // The first challenge, paid through _meta by hand; then once more: refused (already used),
    // -32043 with a fresh challenge.
    const used = await client.callTool({
      name: "mpp_invoke",
      arguments: invokeArgs,
      _meta: { "org.paymentauth/credential": { challenge: { ...offered }, payload: {} } }
    })
    expect(used.isError).toBeFalsy() // the offered challenge was never paid: it pays now
    expect(await balance(walletAccount(k.agentId))).toBe(6)
    const again = await client
      .callTool({
        name: "mpp_invoke",
        arguments: invokeArgs,
        _meta: { "org.paymentauth/credential": { challenge: { ...offered }, payload: {} } }
      })
      .then(
        () => undefined,
        (e: unknown) =>
          e as { code: number; data: { challenges: Array<{ id: string }>; problem: Record<string, unknown> } }
      )
    expect(again?.code).toBe(-32043)
    expect(again?.data.problem).toMatchObject({ type: `${PROBLEMS}invalid-challenge`, status: 402 })
    expect(again?.data.challenges[0].id).not.toBe(offered.id)
    expect(await balance(walletAccount(k.agentId))).toBe(6)
    // A tool that costs nothing is not touched by payment: no receipt.
    const me = await paying.callTool({ name: "me", arguments: {} })
    expect(me._meta?.["org.paymentauth/receipt"]).toBeUndefined()
    await client.close()
    await second.client.close()
  })
})
