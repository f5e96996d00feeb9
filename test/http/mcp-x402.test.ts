// x402 over MCP (x402 v2's MCP transport), end to end with stock clients: the MCP SDK's client over
// Streamable HTTP and x402's own client signing the payment (`@x402/fetch`'s x402Client with
// `@x402/evm`'s exact scheme and a viem account), against the simulated chain. What an x402 MCP
// client is promised: at `/mcp?payment=x402` a paid tool answers x402's payment-required tool result
// (isError, structuredContent the PaymentRequired, content[0].text its `x402/error` wrapper); the
// payment sent in `_meta["x402/payment"]` pays the call once (the asset moves once, a replay moves
// nothing) and the settlement comes back in `result._meta["x402/payment-response"]`; an MPP client at
// `/mcp` still gets MPP's -32042, with x402's offer beside its challenges.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm"
import { x402Client } from "@x402/fetch"
import { Effect, Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, expect, it } from "vitest"
import { simulatedChainOf } from "../../src/layers/x402/simulated.js"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { x402Account } from "../../src/schema/x402/x402.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import type { X402Config } from "../../src/services/platform/AppConfig.js"
import { createAgentKey } from "../fixtures/agents.js"
import { type RuntimeServer, startRuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { simulatedX402Config } from "../fixtures/x402.js"

const SERVICE = "svc_translate_pro" // per_call: standard 2 cents = 20,000 units
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

describeEachStorage("x402 over MCP", (storage) => {
  let server: RuntimeServer
  const config: X402Config = simulatedX402Config()
  const chain = () => simulatedChainOf(config)
  const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000, workers: false, x402: Option.some(config) }
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  const connect = async (secret: string, path: string) => {
    const client = new Client({ name: "mcp-x402-test", version: "1.0.0" })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.baseUrl}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${secret}` } }
      })
    )
    return client
  }
  const invoke = { name: "mpp_invoke", arguments: { id: SERVICE, tier: "standard", input: { text: "over MCP" } } }

  it("at /mcp?payment=x402 a paid tool answers x402's payment required; the payment in _meta pays it once, the settlement in result._meta", async () => {
    const agent = await createAgentKey(server.baseUrl, ["commerce:buy"])
    const client = await connect(agent.secret, "/mcp?payment=x402")
    const refused = await client.callTool(invoke)
    expect(refused.isError).toBe(true)
    const required = refused.structuredContent as Json
    expect(required).toMatchObject({
      x402Version: 2,
      accepts: [{ scheme: "exact", network: config.network, amount: "20000", asset: config.asset, payTo: config.payTo }]
    })
    const text = JSON.parse((refused.content as Array<{ text: string }>)[0]!.text) as Json
    expect(text["x402/error"]).toMatchObject({ code: 402, data: required })

    // The payer signs with x402's own client; the call carries it in _meta.
    const account = privateKeyToAccount(generatePrivateKey())
    const signer = x402Client.fromConfig({
      schemes: [
        { network: config.network as `${string}:${string}`, client: new ExactEvmScheme(toClientEvmSigner(account)) }
      ],
      spendControls: { allowedAssets: true }
    })
    const payment = await signer.createPaymentPayload(required)
    const railBefore = await balance(x402Account(config.network, config.asset))
    const before = chain().balanceOf(account.address)
    const paid = await client.callTool({ ...invoke, _meta: { "x402/payment": payment } })
    expect(paid.isError).toBeFalsy()
    expect(paid.structuredContent).toMatchObject({ serviceId: SERVICE, chargedCents: 2 })
    expect((paid._meta as Json)["x402/payment-response"]).toMatchObject({
      success: true,
      network: config.network,
      payer: account.address.toLowerCase()
    })
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
    expect(await balance(x402Account(config.network, config.asset))).toBe(railBefore - 2)
    // The keyed agent's purchase: the payment came in and paid the call; nothing left over.
    expect(await balance(walletAccount(agent.agentId))).toBe(0)

    // The same payment again: the first outcome, nothing moves.
    const transfers = chain().transfers.length
    const again = await client.callTool({ ...invoke, _meta: { "x402/payment": payment } })
    expect(again.structuredContent).toEqual(paid.structuredContent)
    expect(chain().transfers.length).toBe(transfers)
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
    await client.close()
  })

  it("a payment the facilitator refuses (another amount) is x402's tool result with the settle's failure; nothing moves", async () => {
    const agent = await createAgentKey(server.baseUrl, ["commerce:buy"])
    const client = await connect(agent.secret, "/mcp?payment=x402")
    const required = (await client.callTool(invoke)).structuredContent as Json
    const account = privateKeyToAccount(generatePrivateKey())
    const signer = x402Client.fromConfig({
      schemes: [
        { network: config.network as `${string}:${string}`, client: new ExactEvmScheme(toClientEvmSigner(account)) }
      ],
      spendControls: { allowedAssets: true }
    })
    // Signed for 1 unit where 20,000 are asked.
    const cheap = await signer.createPaymentPayload({
      ...required,
      accepts: [{ ...required.accepts[0], amount: "1" }]
    })
    const transfers = chain().transfers.length
    const refused = await client.callTool({ ...invoke, _meta: { "x402/payment": cheap } })
    expect(refused.isError).toBe(true)
    expect(refused.structuredContent).toMatchObject({
      x402Version: 2,
      error: "invalid_payment_requirements",
      "x402/payment-response": { success: false, errorReason: "invalid_payment_requirements" }
    })
    expect((refused._meta as Json)["x402/payment-response"]).toMatchObject({ success: false })
    expect(chain().transfers.length).toBe(transfers)
    expect(await balance(walletAccount(agent.agentId))).toBe(0)
    await client.close()
  })

  it("at /mcp an MPP client still gets -32042 with its challenges, and x402's offer beside them in data.x402", async () => {
    const agent = await createAgentKey(server.baseUrl, ["commerce:buy"])
    const client = await connect(agent.secret, "/mcp")
    const refused = await client.callTool(invoke).then(
      () => undefined,
      (e: unknown) => e as { code: number; data: Json }
    )
    expect(refused?.code).toBe(-32042)
    expect(refused?.data.challenges[0]).toMatchObject({ method: "credits", intent: "charge" })
    expect(refused?.data.x402).toMatchObject({ x402Version: 2, accepts: [{ amount: "20000", payTo: config.payTo }] })
    await client.close()
  })
})
