// An agent seller that misses its deadline on an order paid with x402 (docs/x402.md), on every
// storage: the order expires, its escrow goes back out through the rail's ledger account, and the
// payer is refunded on the (simulated) chain; the payment reads `refunded` with its transaction.
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm"
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch"
import { Clock, Effect, Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, expect, it } from "vitest"
import { simulatedChainOf } from "../../src/layers/x402/simulated.js"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { x402Account } from "../../src/schema/x402/x402.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import type { X402Config } from "../../src/services/platform/AppConfig.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { X402 } from "../../src/services/x402/X402.js"
import { createAgentKey } from "../fixtures/agents.js"
import { setClock } from "../fixtures/clock.js"
import { type RuntimeServer, startRuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { simulatedX402Config } from "../fixtures/x402.js"

const C = "/api/v1/agent/commerce"
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any
describeEachStorage("x402: an order whose seller misses its deadline", (storage) => {
  let server: RuntimeServer
  const clock = setClock(Date.now())
  const config: X402Config = simulatedX402Config()
  const chain = () => simulatedChainOf(config)
  const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      clock: clock.clock,
      config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000, workers: false, x402: Option.some(config) }
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("expired: the rail's account gives back what it took, the payer is refunded on the chain", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const published = await fetch(`${server.baseUrl}${C}/services`, {
      method: "POST",
      headers: { ...seller.auth, "content-type": "application/json" },
      body: JSON.stringify({
        name: "Slow calls",
        description: "a per-call service whose seller never answers",
        category: "testing",
        pricingModel: "per_call",
        tiers: [
          {
            id: "unit",
            name: "Unit",
            priceCents: 50,
            unit: "call",
            includedUnits: null,
            sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
          }
        ]
      })
    })
    expect(published.status).toBe(201)
    const serviceId = ((await published.json()) as Json).id as string
    const account = privateKeyToAccount(generatePrivateKey())
    const client = x402Client.fromConfig({
      schemes: [
        { network: config.network as `${string}:${string}`, client: new ExactEvmScheme(toClientEvmSigner(account)) }
      ],
      spendControls: { allowedAssets: true }
    })
    const rail = x402Account(config.network, config.asset)
    const railBefore = await balance(rail)
    const startBalance = chain().balanceOf(account.address)
    const res = await wrapFetchWithPayment(fetch, client)(
      `${server.baseUrl}${C}/services/${serviceId}/invoke?tier=unit`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: { text: "hello" } })
      }
    )
    expect(res.status).toBe(202)
    expect(await balance(rail)).toBe(railBefore - 50)
    expect(chain().balanceOf(account.address)).toBe(startBalance - 500_000n)

    clock.advance(2 * 86_400_000)
    // The orders' own sweep may expire it first; either way it is expired now (at the test's time).
    await server.run(
      Effect.provideService(
        Effect.flatMap(Orders, (o) => o.expireDue),
        Clock.Clock,
        clock.clock
      )
    )
    await server.run(Effect.flatMap(X402, (x) => x.reconcile))

    expect(await balance(rail)).toBe(railBefore)
    expect(await balance(walletAccount(`agt_x402_${account.address.toLowerCase().slice(2)}`))).toBe(0)
    expect(await balance(walletAccount(seller.agentId))).toBe(0)
    expect(chain().balanceOf(account.address)).toBe(startBalance)
    const meta = (decodePaymentResponseHeader(res.headers.get("payment-response")!).extensions as Json)[
      "agent-commerce"
    ]
    const view = (await (
      await fetch(`${server.baseUrl}${meta.payment}`, { headers: { "x-payment-token": meta.token } })
    ).json()) as Json
    const refund = chain().transfers.find(
      (t) => t.kind === "refund" && t.to.toLowerCase() === account.address.toLowerCase()
    )
    expect(view).toMatchObject({ status: "refunded", purchaseStatus: "failed", refundTransaction: refund!.transaction })
  })
})
