// The facilitator over HTTP (src/layers/x402/Facilitator.http.ts), offline: a facilitator on
// loopback speaking x402's facilitator API (POST /verify and /settle with {x402Version,
// paymentPayload, paymentRequirements}, GET /supported), backed by the simulated chain's real
// EIP-3009 checks. The stock client pays a call through it; a settle that moves the money but
// answers after the server's timeout is kept settlement_pending (202), never a fresh 402.
import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm"
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch"
import { Option, Redacted } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimulatedChain } from "../../src/layers/x402/simulated.js"
import type { X402Config } from "../../src/services/platform/AppConfig.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const address = () => `0x${randomBytes(20).toString("hex")}`
const x402 = {
  network: "eip155:31337",
  chainId: 31337,
  asset: address(),
  assetName: "Test Dollar",
  assetVersion: "1",
  payTo: address()
}
const chain = new SimulatedChain(x402, 1_000_000_000n)
const seen: Array<{ path: string; body: Record<string, unknown> }> = []
let slowNextSettle = false
let facilitator: Server
let server: TestServer

beforeAll(async () => {
  facilitator = createServer((req, res) => {
    let text = ""
    req.on("data", (c) => (text += c))
    req.on("end", () => {
      const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>)
      seen.push({ path: req.url ?? "", body })
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(json))
      }
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const { paymentPayload, paymentRequirements } = body as any
      if (req.method === "GET" && req.url === "/supported") {
        return answer(200, {
          kinds: [{ x402Version: 2, scheme: "exact", network: x402.network }],
          extensions: [],
          signers: {}
        })
      }
      if (req.url === "/verify") {
        void chain.verify(paymentPayload, paymentRequirements).then(({ parsed: _p, ...v }) => answer(200, v))
        return
      }
      if (req.url === "/settle") {
        const slow = slowNextSettle
        slowNextSettle = false
        void chain.settle(paymentPayload, paymentRequirements).then((s) => {
          if (slow) setTimeout(() => answer(200, s), 1_500)
          else answer(200, s)
        })
        return
      }
      answer(404, { error: "not found" })
    })
  })
  await new Promise<void>((resolve) => facilitator.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}`
  const config: X402Config = {
    ...x402,
    assetDecimals: 6,
    facilitator: { _tag: "http", url },
    refundPrivateKey: Option.some(Redacted.make(`0x${"22".repeat(32)}`)),
    rpcUrl: Option.some("http://127.0.0.1:9"),
    maxTimeoutSeconds: 300,
    facilitatorTimeoutMs: 500,
    refundBumpAfterMs: 120_000
  }
  server = await startServer({ config: { workers: false, x402: Option.some(config) } })
})
afterAll(async () => {
  await server?.close()
  await new Promise((resolve) => facilitator?.close(resolve))
})

const pay = () => {
  const account = privateKeyToAccount(generatePrivateKey())
  const client = x402Client.fromConfig({
    schemes: [
      { network: x402.network as `${string}:${string}`, client: new ExactEvmScheme(toClientEvmSigner(account)) }
    ],
    spendControls: { allowedAssets: true }
  })
  return { account, fetch: wrapFetchWithPayment(fetch, client) }
}
const call = () =>
  [
    `${server.baseUrl}/api/v1/agent/commerce/services/svc_translate_pro/invoke?tier=standard`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: { text: "hi" } }) }
  ] as const

describe("x402 through a facilitator over HTTP", () => {
  it("verify, then settle, with the facilitator API's bodies; the asset moves once; PAYMENT-RESPONSE names its transaction", async () => {
    const { account, fetch: payingFetch } = pay()
    seen.length = 0
    const res = await payingFetch(...call())
    expect(res.status).toBe(200)
    expect(seen.map((s) => s.path)).toEqual(["/verify", "/settle"])
    for (const s of seen) {
      expect(s.body).toMatchObject({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: { scheme: "exact", network: x402.network, amount: "20000" } },
        paymentRequirements: { scheme: "exact", network: x402.network, amount: "20000", payTo: x402.payTo }
      })
    }
    const settle = decodePaymentResponseHeader(res.headers.get("payment-response")!)
    const moved = chain.transfers.filter((t) => t.from.toLowerCase() === account.address.toLowerCase())
    expect(moved.map((t) => [t.amount, t.transaction])).toEqual([[20_000n, settle.transaction]])
  })

  it("a settle answered after the timeout: 202 settlement_pending, not a 402; the money moved once", async () => {
    const { account, fetch: payingFetch } = pay()
    slowNextSettle = true
    const res = await payingFetch(...call())
    expect(res.status).toBe(202)
    expect(await res.json()).toMatchObject({ status: "settlement_pending" })
    expect(chain.transfers.filter((t) => t.from.toLowerCase() === account.address.toLowerCase())).toHaveLength(1)
  })
})
