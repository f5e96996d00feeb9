// `npm run devnet` (docs/devnet.md): what a developer gets is a real chain, a real EIP-3009 token on it
// and an x402 facilitator they reach over HTTP — so a payment made by the stock x402 client moves the
// token on the chain, once, and the environment it prints is enough to point a server at it.
import {
  HTTPFacilitatorClient,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader
} from "@x402/core/http"
import type { PaymentRequirements } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment, x402Client } from "@x402/fetch"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createWalletClient, http, isAddress, parseAbi, parseSignature, parseTransaction, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { Effect, Option, Redacted } from "effect"
import type { DevnetInfo } from "../../devnet/start.js"
import { viemChain } from "../../src/layers/x402/chain.viem.js"
import type { X402Config } from "../../src/services/platform/AppConfig.js"
import { createAgentKey } from "../fixtures/agents.js"
import { startRuntimeServer } from "../fixtures/runtimeServer.js"
import { x402Books } from "../../src/services/x402/books.js"
import { Refunds, type RefundsService, type SignedRefund } from "../../src/services/x402/ports.js"
import { reader, startDevnetProcess, tokenAbi, type RunningDevnet } from "./fixture.js"

const serverEnvNames = [
  "X402_ASSET",
  "X402_ASSET_DECIMALS",
  "X402_ASSET_NAME",
  "X402_ASSET_VERSION",
  "X402_FACILITATOR_URL",
  "X402_NETWORK",
  "X402_PAY_TO",
  "X402_REFUND_PRIVATE_KEY",
  "X402_RPC_URL"
]

/** 5 cents of a 6-decimal stablecoin. */
const price = 50_000n

// A resource server as small as x402 allows: a 402 with PAYMENT-REQUIRED, then a retry's
// PAYMENT-SIGNATURE verified and settled through the devnet's facilitator over HTTP (x402's own
// HTTPFacilitatorClient), answered with PAYMENT-RESPONSE. It keeps every signature it was sent.
const startResource = async (info: DevnetInfo) => {
  const facilitator = new HTTPFacilitatorClient({ url: info.facilitatorUrl })
  const requirements: PaymentRequirements = {
    scheme: "exact",
    network: info.network,
    asset: info.asset,
    amount: price.toString(),
    payTo: info.serverEnv.X402_PAY_TO,
    maxTimeoutSeconds: 120,
    extra: { name: info.serverEnv.X402_ASSET_NAME, version: info.serverEnv.X402_ASSET_VERSION }
  }
  const signatures: Array<string> = []
  const server: Server = createServer((req, res) => {
    const url = `http://${req.headers.host}${req.url}`
    const paymentRequired = (error?: string) => {
      res.writeHead(402, {
        "PAYMENT-REQUIRED": encodePaymentRequiredHeader({
          x402Version: 2,
          ...(error === undefined ? {} : { error }),
          resource: { url, description: "a test resource", mimeType: "application/json" },
          accepts: [requirements]
        }),
        "content-type": "application/json"
      })
      res.end("{}")
    }
    const header = req.headers["payment-signature"]
    if (typeof header !== "string") return paymentRequired()
    signatures.push(header)
    const payload = decodePaymentSignatureHeader(header)
    void (async () => {
      const verified = await facilitator.verify(payload, requirements)
      if (!verified.isValid) return paymentRequired(verified.invalidReason ?? "invalid")
      const settled = await facilitator.settle(payload, requirements)
      res.writeHead(settled.success ? 200 : 402, {
        "PAYMENT-RESPONSE": encodePaymentResponseHeader(settled),
        "content-type": "application/json"
      })
      res.end(JSON.stringify({ paid: settled.success }))
    })().catch((e: unknown) => {
      res.writeHead(500, { "content-type": "text/plain" })
      res.end(e instanceof Error ? e.message : String(e))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/paid`,
    requirements,
    facilitator,
    signatures,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

// The stock client pays only assets it knows (USDC on the public chains) unless told otherwise: the
// devnet's token is allowed by name, up to $1 a payment, as an agent configures it (docs/devnet.md).
const eip3009Abi = parseAbi([
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)"
])

const devnetViemChain = (info: DevnetInfo) => ({
  id: Number(info.network.split(":")[1]),
  name: "devnet",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [info.rpcUrl] } }
})

/** The stock paying client; `sent` sees each PAYMENT-SIGNATURE it sends. */
const payingFetch = (info: DevnetInfo, privateKey: Hex, sent: (signature: string) => void = () => undefined) =>
  wrapFetchWithPayment(
    (input, init) => {
      const header = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get(
        "payment-signature"
      )
      if (header !== null) sent(header)
      return fetch(input, init)
    },
    new x402Client().register(info.network, new ExactEvmScheme(privateKeyToAccount(privateKey))).setSpendControls({
      allowedAssets: [{ network: info.network, asset: info.asset, maxAmountPerPayment: "1000000" }]
    })
  )

/** The server's x402 configuration for the devnet, as its serverEnv names it. */
const devnetX402 = (info: DevnetInfo): X402Config => ({
  network: info.network,
  chainId: Number(info.network.split(":")[1]),
  asset: info.asset,
  assetName: info.serverEnv.X402_ASSET_NAME,
  assetVersion: info.serverEnv.X402_ASSET_VERSION,
  assetDecimals: Number(info.serverEnv.X402_ASSET_DECIMALS),
  payTo: info.serverEnv.X402_PAY_TO,
  facilitator: { _tag: "http", url: info.facilitatorUrl },
  refundPrivateKey: Option.some(Redacted.make(info.serverEnv.X402_REFUND_PRIVATE_KEY)),
  rpcUrl: Option.some(info.rpcUrl),
  maxTimeoutSeconds: 120,
  facilitatorTimeoutMs: 10_000,
  refundBumpAfterMs: 120_000
})

let devnet: RunningDevnet
let resource: Awaited<ReturnType<typeof startResource>>
beforeAll(async () => {
  devnet = await startDevnetProcess({ DEVNET_PAYERS: "3" })
  resource = await startResource(devnet.info)
})
afterAll(async () => {
  await resource?.close()
  await devnet?.stop()
})

describe("npm run devnet", () => {
  it("prints one line naming the chain, the token on it, the facilitator, funded payers and the server's environment", async () => {
    const { info } = devnet
    const chain = reader(info)
    expect(info.network).toBe(`eip155:${await chain.client.getChainId()}`)
    for (const url of [info.rpcUrl, info.facilitatorUrl]) expect(new URL(url).hostname).toBe("127.0.0.1")
    expect(Object.keys(info.serverEnv).sort()).toEqual(serverEnvNames)
    expect(info.serverEnv).toMatchObject({
      X402_NETWORK: info.network,
      X402_ASSET: info.asset,
      X402_FACILITATOR_URL: info.facilitatorUrl,
      X402_RPC_URL: info.rpcUrl
    })
    expect(isAddress(info.serverEnv.X402_PAY_TO)).toBe(true)
    expect(info.serverEnv.X402_REFUND_PRIVATE_KEY).toMatch(/^0x[0-9a-f]{64}$/)

    // The EIP-712 domain and decimals the server is told are the token's own.
    const read = (functionName: "name" | "version" | "decimals") =>
      chain.client.readContract({
        address: info.asset,
        abi: [
          {
            type: "function",
            name: functionName,
            stateMutability: "view",
            inputs: [],
            outputs: [{ type: functionName === "decimals" ? "uint8" : "string" }]
          }
        ],
        functionName
      })
    expect([await read("name"), await read("version"), String(await read("decimals"))]).toEqual([
      info.serverEnv.X402_ASSET_NAME,
      info.serverEnv.X402_ASSET_VERSION,
      info.serverEnv.X402_ASSET_DECIMALS
    ])

    expect(info.payerPrivateKeys).toHaveLength(3)
    for (const key of [...info.payerPrivateKeys, info.serverEnv.X402_REFUND_PRIVATE_KEY]) {
      const address = privateKeyToAddress(key)
      expect(await chain.balanceOf(address)).toBeGreaterThanOrEqual(1_000_000_000n) // $1,000
      expect(await chain.client.getBalance({ address })).toBeGreaterThan(10n ** 17n) // gas
    }
  })

  it("serves x402's facilitator API: GET /supported names the exact scheme on this network", async () => {
    const supported = await resource.facilitator.getSupported()
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, scheme: "exact", network: devnet.info.network })
    )
    expect(supported.signers).toEqual({ "eip155:*": [expect.stringMatching(/^0x[0-9a-fA-F]{40}$/)] })
  })

  it("the stock @x402/fetch client pays with no account: the token moves from the payer to payTo on the chain", async () => {
    const { info } = devnet
    const chain = reader(info)
    const payer = privateKeyToAddress(info.payerPrivateKeys[0]!)
    const payTo = info.serverEnv.X402_PAY_TO
    const before = { payer: await chain.balanceOf(payer), payTo: await chain.balanceOf(payTo) }

    const response = await payingFetch(info, info.payerPrivateKeys[0]!)(resource.url)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ paid: true })
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE")!)
    expect(settlement).toMatchObject({ success: true, network: info.network, payer })

    const receipt = await chain.client.getTransactionReceipt({ hash: settlement.transaction as Hex })
    expect(receipt.status).toBe("success")
    expect(await chain.balanceOf(payer)).toBe(before.payer - price)
    expect(await chain.balanceOf(payTo)).toBe(before.payTo + price)
  })

  it("a replayed authorization (the same signature, the same nonce) never moves the money twice", async () => {
    const { info } = devnet
    const chain = reader(info)
    const payerKey = info.payerPrivateKeys[1]!
    const payer = privateKeyToAddress(payerKey)
    const payTo = info.serverEnv.X402_PAY_TO
    const start = { payer: await chain.balanceOf(payer), payTo: await chain.balanceOf(payTo) }

    const first = await payingFetch(info, payerKey)(resource.url)
    expect(first.status).toBe(200)
    const signature = resource.signatures.at(-1)!
    const payload = decodePaymentSignatureHeader(signature)
    const nonce = (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce
    expect(
      await chain.client.readContract({
        address: info.asset,
        abi: tokenAbi,
        functionName: "authorizationState",
        args: [payer, nonce]
      })
    ).toBe(true)
    const paidOnce = { payer: start.payer - price, payTo: start.payTo + price }
    expect({ payer: await chain.balanceOf(payer), payTo: await chain.balanceOf(payTo) }).toEqual(paidOnce)

    // The same PAYMENT-SIGNATURE sent again to the resource: refused, with a fresh 402.
    const replay = await fetch(resource.url, { headers: { "PAYMENT-SIGNATURE": signature } })
    expect(replay.status).toBe(402)
    // And straight to the facilitator, both calls: not valid, not settled.
    const verified = await resource.facilitator.verify(payload, resource.requirements)
    expect(verified.isValid).toBe(false)
    const settled = await resource.facilitator.settle(payload, resource.requirements).catch((e: unknown) => e)
    expect(settled).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used" })
    // And to the token itself, by anyone, bypassing every facilitator: the chain refuses it.
    const authorization = (payload.payload as { authorization: Record<string, string> }).authorization
    const { r, s, v } = parseSignature((payload.payload as { signature: Hex }).signature)
    const submitter = createWalletClient({
      account: privateKeyToAccount(info.payerPrivateKeys[2]!),
      chain: devnetViemChain(info),
      transport: http(info.rpcUrl)
    })
    await expect(
      submitter.writeContract({
        address: info.asset,
        abi: eip3009Abi,
        functionName: "transferWithAuthorization",
        args: [
          authorization.from as Hex,
          authorization.to as Hex,
          BigInt(authorization.value!),
          BigInt(authorization.validAfter!),
          BigInt(authorization.validBefore!),
          authorization.nonce as Hex,
          Number(v),
          r,
          s
        ]
      })
    ).rejects.toThrow(/authorization is used or canceled/)

    expect({ payer: await chain.balanceOf(payer), payTo: await chain.balanceOf(payTo) }).toEqual(paidOnce)
  })

  it("the facilitator answers a malformed request with a 400 naming the field, and an unknown route with 404", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${devnet.info.facilitatorUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    const noVersion = await post("/verify", { paymentPayload: {}, paymentRequirements: {} })
    expect(noVersion.status).toBe(400)
    expect(await noVersion.json()).toEqual({ error: expect.stringContaining("x402Version") })
    const badPayload = await post("/settle", {
      x402Version: 2,
      paymentPayload: { x402Version: 2 },
      paymentRequirements: resource.requirements
    })
    expect(badPayload.status).toBe(400)
    expect(await badPayload.json()).toEqual({ error: expect.stringContaining("paymentPayload") })
    expect((await fetch(`${devnet.info.facilitatorUrl}/nowhere`)).status).toBe(404)
  })

  it("the refund wallet in serverEnv can send the token back to a payer on the chain", async () => {
    const { info } = devnet
    const chain = reader(info)
    const payer = privateKeyToAddress(info.payerPrivateKeys[2]!)
    const before = await chain.balanceOf(payer)
    const wallet = createWalletClient({
      account: privateKeyToAccount(info.serverEnv.X402_REFUND_PRIVATE_KEY),
      chain: devnetViemChain(info),
      transport: http(info.rpcUrl)
    })
    const hash = await wallet.writeContract({
      address: info.asset,
      abi: tokenAbi,
      functionName: "transfer",
      args: [payer, price]
    })
    expect((await chain.client.waitForTransactionReceipt({ hash })).status).toBe("success")
    expect(await chain.balanceOf(payer)).toBe(before + price)
  })

  /** The server's refunds port (viem) over the devnet, configured from its serverEnv. */
  const refundsOverDevnet = () => {
    const { info } = devnet
    const layer = viemChain(devnetX402(info))
    const run = <A, E>(f: (r: RefundsService) => Effect.Effect<A, E>) =>
      Effect.runPromise(Effect.provide(Effect.flatMap(Refunds, f), layer))
    return {
      sign: (to: Hex, amount: bigint, replacing?: SignedRefund) =>
        run((r) => r.sign({ asset: info.asset, to, amount, ...(replacing === undefined ? {} : { replacing }) })),
      send: (refund: SignedRefund) => run((r) => r.send(refund))
    }
  }
  const freshAddress = () => privateKeyToAddress(generatePrivateKey())

  it("a refund signed by the server moves nothing until sent; one whose send's answer was lost is the same transaction when sent again: paid once", async () => {
    const { info } = devnet
    const chain = reader(info)
    const refunds = refundsOverDevnet()
    const to = freshAddress()
    const signed = await refunds.sign(to, price)
    expect(await chain.balanceOf(to)).toBe(0n)
    // Broadcast as the server's send would, and its answer never arrives (a timeout, a crash).
    await chain.client.sendRawTransaction({ serializedTransaction: signed.raw as Hex })
    await chain.client.waitForTransactionReceipt({ hash: signed.transaction as Hex })
    expect(await chain.balanceOf(to)).toBe(price)
    // The next pass sends what it recorded: the chain already has it.
    expect(await refunds.send(signed)).toEqual({ _tag: "Mined", success: true, transaction: signed.transaction })
    expect(await refunds.send(signed)).toEqual({ _tag: "Mined", success: true, transaction: signed.transaction })
    expect(await chain.balanceOf(to)).toBe(price)
  })

  it("a refund whose nonce the refund wallet spent on another transaction is dropped: never mined, the next one signed at the next nonce", async () => {
    const { info } = devnet
    const chain = reader(info)
    const refunds = refundsOverDevnet()
    const to = freshAddress()
    const signed = await refunds.sign(to, price)
    // The operator's wallet sends something else first, at the same nonce.
    const wallet = createWalletClient({
      account: privateKeyToAccount(info.serverEnv.X402_REFUND_PRIVATE_KEY),
      chain: devnetViemChain(info),
      transport: http(info.rpcUrl)
    })
    const other = await wallet.writeContract({
      address: info.asset,
      abi: tokenAbi,
      functionName: "transfer",
      args: [freshAddress(), 1n],
      nonce: signed.nonce
    })
    await chain.client.waitForTransactionReceipt({ hash: other })
    expect(await refunds.send(signed)).toEqual({ _tag: "Dropped" })
    expect(await chain.balanceOf(to)).toBe(0n)
    const again = await refunds.sign(to, price)
    expect(again.nonce).toBe(signed.nonce + 1)
    expect(await refunds.send(again)).toEqual({ _tag: "Mined", success: true, transaction: again.transaction })
    expect(await refunds.send(signed)).toEqual({ _tag: "Dropped" })
    expect(await chain.balanceOf(to)).toBe(price)
  })

  it("a refund replaced at its nonce (a fee bump) pays fees an eighth higher; whichever of the two the chain mines is the refund, the other never is", async () => {
    const { info } = devnet
    const chain = reader(info)
    const refunds = refundsOverDevnet()
    const to = freshAddress()
    const stuck = await refunds.sign(to, price)
    const bump = await refunds.sign(to, price, stuck)
    expect(bump.nonce).toBe(stuck.nonce)
    expect(bump.transaction).not.toBe(stuck.transaction)
    const [a, b] = [parseTransaction(stuck.raw as Hex), parseTransaction(bump.raw as Hex)]
    expect(b.maxFeePerGas! * 8n).toBeGreaterThanOrEqual(a.maxFeePerGas! * 9n)
    expect(b.maxPriorityFeePerGas! * 8n).toBeGreaterThanOrEqual(a.maxPriorityFeePerGas! * 9n)
    // The stuck one is mined after all (a miner that never saw the replacement): read through the
    // replacement, it is the refund; the replacement alone is dropped.
    await chain.client.sendRawTransaction({ serializedTransaction: stuck.raw as Hex })
    await chain.client.waitForTransactionReceipt({ hash: stuck.transaction as Hex })
    expect(await refunds.send({ ...bump, replaces: [stuck.transaction] })).toEqual({
      _tag: "Mined",
      success: true,
      transaction: stuck.transaction
    })
    expect(await refunds.send(bump)).toEqual({ _tag: "Dropped" })
    expect(await chain.balanceOf(to)).toBe(price)
  })

  it("through the server: an agent seller's x402 call paid on the chain, the seller fails, and the payer gets the token back from the refund wallet", async () => {
    const { info } = devnet
    const chain = reader(info)
    const server = await startRuntimeServer({
      config: {
        rateLimitPerMinute: 10_000,
        rateLimitPerDay: 100_000,
        workers: false,
        x402: Option.some({ ...devnetX402(info), facilitator: { _tag: "http", url: info.facilitatorUrl } })
      }
    })
    try {
      const C = "/api/v1/agent/commerce"
      const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
      const call = (path: string, body: unknown) =>
        fetch(`${server.baseUrl}${C}${path}`, {
          method: "POST",
          headers: { ...seller.auth, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const published = await call("/services", {
        name: "Real calls",
        description: "a per-call service its seller fulfils",
        category: "testing",
        pricingModel: "per_call",
        tiers: [
          {
            id: "unit",
            name: "Unit",
            priceCents: 5,
            unit: "call",
            includedUnits: null,
            sla: { uptimePct: 99, p95LatencyMs: 1_000, supportWindow: "24/7" }
          }
        ]
      })
      expect(published.status).toBe(201)
      const serviceId = ((await published.json()) as { id: string }).id
      const payerKey = info.payerPrivateKeys[1]!
      const payer = privateKeyToAddress(payerKey)
      const before = await chain.balanceOf(payer)
      const url = `${server.baseUrl}${C}/services/${serviceId}/invoke?tier=unit`
      const init = {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: { text: "hello" } })
      }
      let signature: string | undefined
      const res = await payingFetch(info, payerKey, (header) => (signature = header))(url, init)
      expect(res.status).toBe(202)
      expect(await chain.balanceOf(payer)).toBe(before - price)
      const body = await res.json()
      const txId = (body as { transactionId: string }).transactionId
      // The same PAYMENT-SIGNATURE again: the first answer, and the token moved once.
      const replay = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": signature! } })
      expect(replay.status).toBe(202)
      expect(await replay.json()).toEqual(body)
      expect(await chain.balanceOf(payer)).toBe(before - price)
      expect((await call(`/orders/${txId}/fail`, { error: "model unavailable" })).status).toBe(200)
      const meta = (
        decodePaymentResponseHeader(res.headers.get("payment-response")!).extensions as Record<
          string,
          { payment: string; token: string }
        >
      )["agent-commerce"]
      const view = async () =>
        (await (
          await fetch(`${server.baseUrl}${meta.payment}`, { headers: { "x-payment-token": meta.token } })
        ).json()) as { status: string; refundTransaction: string | null }
      // Reading the payment reconciles it: the refund is signed, recorded, sent and mined.
      await vi.waitFor(async () => expect((await view()).status).toBe("refunded"), { timeout: 30_000, interval: 200 })
      const refunded = await view()
      const receipt = await chain.client.getTransactionReceipt({ hash: refunded.refundTransaction as Hex })
      expect(receipt.status).toBe("success")
      expect(await chain.balanceOf(payer)).toBe(before)
      // The books check (npm run check's x402 part) passes against the chain: the settle and the refund read there.
      const books = await server.run(x402Books(devnetX402(info), true))
      expect(books).toMatchObject({ ok: true, chain: "compared", payments: 1, open: 0, drift: [] })
      expect(books.rails).toEqual([
        { account: expect.stringContaining(info.asset.toLowerCase()), balanceCents: 0, expectedCents: 0 }
      ])
    } finally {
      await server.close()
    }
  })

  it("SIGTERM stops the facilitator and the chain, and the command exits 0", async () => {
    const { info } = devnet
    expect(await devnet.stop()).toEqual({ code: 0, signal: null })
    await expect(fetch(`${info.facilitatorUrl}/supported`)).rejects.toThrow()
    await expect(
      fetch(info.rpcUrl, { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' })
    ).rejects.toThrow()
    expect(devnet.log()).toMatch(/SIGTERM: stopping/)
  })
})
