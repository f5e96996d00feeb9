// End to end, on every storage, offline: an agent with a stablecoin wallet and the stock x402 client
// (`@x402/fetch` with `@x402/evm`'s exact scheme and a viem account) pays a paid call with no API
// key; the simulated facilitator checks its EIP-3009 signature for real. What the payer is promised:
// a simulated seller's call is paid and answered at once (85/15); an agent seller's call is held in
// escrow until the seller delivers (85/15) or fails (refunded on the chain, the transaction readable
// with the payment's token), once however its refund's sends are lost, raced or dropped by the
// chain; a replayed signature moves nothing; a settle whose answer is lost is never a second payment; a keyed agent its owner's limit refuses is refused before any settle.
// Money is read from the ledger and the chain, not from the service's answers.
import { randomBytes } from "node:crypto"
import { Ajv2020 } from "ajv/dist/2020.js"
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch"
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm"
import { Effect, Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, expect, it, vi } from "vitest"
import { simulatedChainOf } from "../../src/layers/x402/simulated.js"
import { PLATFORM_FEES, splitSettlement, walletAccount } from "../../src/schema/ledger/ledger.js"
import { type PaymentRecord, x402Account } from "../../src/schema/x402/x402.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import type { X402Config } from "../../src/services/platform/AppConfig.js"
import { X402 } from "../../src/services/x402/X402.js"
import { X402Store } from "../../src/services/x402/X402Store.js"
import { x402Books } from "../../src/services/x402/books.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { type RuntimeServer, startRuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { postAs, publishAgentService as publishAgentServiceAt, simulatedX402Config } from "../fixtures/x402.js"

const C = "/api/v1/agent/commerce"
const SIMULATED = "svc_translate_pro" // a simulated seller, per_call, standard: 2 cents
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

describeEachStorage("x402 v2 on the paid call", { concurrent: "storages" }, (storage) => {
  let server: RuntimeServer
  const config: X402Config = simulatedX402Config()
  const chain = () => simulatedChainOf(config)
  const rail = x402Account(config.network, config.asset)
  const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))
  const reconcile = () => server.run(Effect.flatMap(X402, (x) => x.reconcile))

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000, workers: false, x402: Option.some(config) }
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  /** The stock client for a viem account: the exact scheme on the configured network, any asset (a test token). */
  const clientFor = (account: ReturnType<typeof privateKeyToAccount>) =>
    x402Client.fromConfig({
      schemes: [
        { network: config.network as `${string}:${string}`, client: new ExactEvmScheme(toClientEvmSigner(account)) }
      ],
      spendControls: { allowedAssets: true }
    })

  /** A payer: a fresh key, the stock client paying with it. */
  const payer = () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const client = clientFor(account)
    return { account, pay: wrapFetchWithPayment(fetch, client) }
  }
  const invoke = (serviceId: string, tier: string, input: unknown) =>
    [
      `${server.baseUrl}${C}/services/${serviceId}/invoke?tier=${tier}`,
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input }) }
    ] as const

  const post = (k: AgentKey, path: string, body: unknown) => postAs(server.baseUrl, k, path, body)
  const publishAgentService = () => publishAgentServiceAt(server.baseUrl)

  it("without a key or payment: 402 with PAYMENT-REQUIRED (x402 v2, exact, 1 cent = 10,000 units)", async () => {
    const [url, init] = invoke(SIMULATED, "standard", { text: "hi" })
    const res = await fetch(url, init)
    expect(res.status).toBe(402)
    const required = JSON.parse(Buffer.from(res.headers.get("payment-required")!, "base64").toString("utf8"))
    expect(required).toMatchObject({
      x402Version: 2,
      resource: { url },
      accepts: [
        {
          scheme: "exact",
          network: config.network,
          amount: "20000",
          asset: config.asset,
          payTo: config.payTo,
          extra: { name: "USD Coin", version: "2" }
        }
      ]
    })
  })

  it("the 402's bazaar extension describes the call for discovery catalogues, and its info validates against its own schema", async () => {
    const [url, init] = invoke(SIMULATED, "standard", { text: "hi" })
    const res = await fetch(url, init)
    const required = JSON.parse(Buffer.from(res.headers.get("payment-required")!, "base64").toString("utf8"))
    const bazaar = required.extensions.bazaar
    expect(bazaar.info).toMatchObject({
      input: { type: "http", method: "POST", bodyType: "json", body: { input: expect.anything() } },
      output: {
        type: "json",
        example: { status: "completed", serviceId: SIMULATED, tierId: "standard", chargedCents: 2 }
      }
    })
    const validate = new Ajv2020({ strict: false }).compile(bazaar.schema)
    expect(validate(bazaar.info)).toBe(true)
    // The schema refuses what the extension forbids: an info without its input.
    expect(validate({ output: bazaar.info.output })).toBe(false)
  })

  it("discovery states the rail: /api/discover's ai_commerce.x402 and llms.txt", async () => {
    const discover = (await (await fetch(`${server.baseUrl}/api/discover`)).json()) as Json
    expect(discover.ai_commerce.x402).toMatchObject({
      version: 2,
      scheme: "exact",
      network: config.network,
      asset: config.asset,
      pay_to: config.payTo,
      api_key_required: false,
      a2a_extension: "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2"
    })
    const llms = await (await fetch(`${server.baseUrl}/llms.txt`)).text()
    expect(llms).toContain(`x402 v2 (scheme exact, ${config.network}`)
    expect(llms).toContain("extension https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2")
  })

  it("the stock client pays a simulated seller's call with no key: the asset moves once, the ledger takes it in and splits 85/15", async () => {
    const { account, pay } = payer()
    const sellerWallet = walletAccount("agt_seller_pixelmint")
    const [feesBefore, railBefore, sellerBefore] = [
      await balance(PLATFORM_FEES),
      await balance(rail),
      await balance(sellerWallet)
    ]
    const startBalance = chain().balanceOf(account.address)
    const res = await pay(...invoke("svc_image_gen", "hd", { prompt: "a cat" }))
    expect(res.status).toBe(200)
    const body = (await res.json()) as Json
    expect(body).toMatchObject({ status: "completed", serviceId: "svc_image_gen", tierId: "hd", chargedCents: 12 })
    const settle = decodePaymentResponseHeader(res.headers.get("payment-response")!)
    expect(settle).toMatchObject({ success: true, network: config.network })
    // On the chain: 12 cents = 120,000 units from the payer to payTo, in the settle's transaction.
    expect(chain().balanceOf(account.address)).toBe(startBalance - 120_000n)
    const moved = chain().transfers.filter((t) => t.from.toLowerCase() === account.address.toLowerCase())
    expect(moved.map((t) => [t.to.toLowerCase(), t.amount, t.transaction])).toEqual([
      [config.payTo.toLowerCase(), 120_000n, settle.transaction]
    ])
    // In the ledger: 12 cents in from the rail's account, split 85/15 between the seller and the platform.
    const { sellerCents, feeCents } = splitSettlement(12)
    expect(feeCents).toBeGreaterThan(0)
    expect(await balance(rail)).toBe(railBefore - 12)
    expect((await balance(sellerWallet)) - sellerBefore).toBe(sellerCents)
    expect((await balance(PLATFORM_FEES)) - feesBefore).toBe(feeCents)
    expect(await balance(walletAccount(`agt_x402_${account.address.toLowerCase().slice(2)}`))).toBe(0)
  })

  it("an agent seller's call: held in escrow until the seller delivers, then 85 to the seller and 15 to the platform", async () => {
    const { seller, serviceId } = await publishAgentService()
    const { account, pay } = payer()
    const feesBefore = await balance(PLATFORM_FEES)
    const res = await pay(...invoke(serviceId, "unit", { text: "hello" }))
    expect(res.status).toBe(202)
    const body = (await res.json()) as Json
    expect(body).toMatchObject({ status: "pending", heldCents: 100 })
    const txId = body.transactionId as string
    const buyerWallet = walletAccount(`agt_x402_${account.address.toLowerCase().slice(2)}`)
    expect(await balance(buyerWallet)).toBe(0)
    expect(await balance(walletAccount(seller.agentId))).toBe(0)
    expect((await post(seller, `${C}/orders/${txId}/deliver`, { output: { text: "HELLO" } })).status).toBe(200)
    expect(await balance(walletAccount(seller.agentId))).toBe(85)
    expect((await balance(PLATFORM_FEES)) - feesBefore).toBe(15)
    await reconcile()
    const settle = decodePaymentResponseHeader(res.headers.get("payment-response")!)
    const meta = (settle.extensions as Json)["agent-commerce"]
    const view = await fetch(`${server.baseUrl}${meta.payment}`, { headers: { "x-payment-token": meta.token } })
    expect(view.status).toBe(200)
    expect(await view.json()).toMatchObject({
      status: "settled",
      purchaseStatus: "completed",
      output: { text: "HELLO" }
    })
  })

  it("an agent seller that fails: the escrow goes back out and the payer is refunded on the chain, the transaction on its payment", async () => {
    const { seller, serviceId } = await publishAgentService()
    const { account, pay } = payer()
    const railBefore = await balance(rail)
    const startBalance = chain().balanceOf(account.address)
    const res = await pay(...invoke(serviceId, "unit", { text: "hello" }))
    expect(res.status).toBe(202)
    const txId = ((await res.json()) as Json).transactionId as string
    expect(chain().balanceOf(account.address)).toBe(startBalance - 1_000_000n)
    expect((await post(seller, `${C}/orders/${txId}/fail`, { error: "model unavailable" })).status).toBe(200)
    await reconcile()
    // The ledger: 100 in and 100 back out of the rail's account; nothing left in the payer's wallet.
    expect(await balance(rail)).toBe(railBefore)
    expect(await balance(walletAccount(`agt_x402_${account.address.toLowerCase().slice(2)}`))).toBe(0)
    expect(await balance(walletAccount(seller.agentId))).toBe(0)
    // The chain: refunded from the refund wallet.
    expect(chain().balanceOf(account.address)).toBe(startBalance)
    const refund = chain().transfers.find(
      (t) => t.kind === "refund" && t.to.toLowerCase() === account.address.toLowerCase()
    )
    expect(refund?.amount).toBe(1_000_000n)
    const meta = (decodePaymentResponseHeader(res.headers.get("payment-response")!).extensions as Json)[
      "agent-commerce"
    ]
    const view = (await (
      await fetch(`${server.baseUrl}${meta.payment}`, { headers: { "x-payment-token": meta.token } })
    ).json()) as Json
    expect(view).toMatchObject({ status: "refunded", purchaseStatus: "failed", refundTransaction: refund!.transaction })
    // Another token reads nothing.
    const other = await fetch(`${server.baseUrl}${meta.payment}`, { headers: { "x-payment-token": "x".repeat(32) } })
    expect(other.status).toBe(404)
  })

  /** An agent seller's call paid by a fresh payer, then failed by its seller: the payment waits to be refunded. */
  const failedPayment = async () => {
    const { seller, serviceId } = await publishAgentService()
    const { account, pay } = payer()
    const startBalance = chain().balanceOf(account.address)
    const res = await pay(...invoke(serviceId, "unit", { text: "hello" }))
    expect(res.status).toBe(202)
    const txId = ((await res.json()) as Json).transactionId as string
    const meta = (decodePaymentResponseHeader(res.headers.get("payment-response")!).extensions as Json)[
      "agent-commerce"
    ]
    expect((await post(seller, `${C}/orders/${txId}/fail`, { error: "model unavailable" })).status).toBe(200)
    const stored = () => server.run(Effect.flatMap(X402Store, (s) => s.get(meta.paymentId as string)))
    const refundsTo = () =>
      chain().transfers.filter((t) => t.kind === "refund" && t.to.toLowerCase() === account.address.toLowerCase())
    return { account, startBalance, stored, refundsTo }
  }

  it("a refund whose send timed out, then whose receipt was lost, is sent again as the same transaction: the payer is refunded once", async () => {
    const { account, startBalance, stored, refundsTo } = await failedPayment()
    const signed = chain().refundsSigned
    chain().failNextRefund("timeout", "lost")
    await reconcile() // signed and recorded, then the node times out: nothing broadcast
    const recorded = await stored()
    expect(recorded).toMatchObject({ status: "refunding", refundTransaction: null })
    expect(recorded?.refundAttempt?.transaction).toMatch(/^0x/)
    expect(refundsTo()).toEqual([])
    await reconcile() // the same transaction sent: mined, but its receipt never arrives
    expect(refundsTo().map((t) => t.transaction)).toEqual([recorded!.refundAttempt!.transaction])
    expect((await stored())?.status).toBe("refunding")
    await reconcile() // sent again: the chain already has it
    await reconcile()
    expect(refundsTo()).toHaveLength(1)
    expect(chain().balanceOf(account.address)).toBe(startBalance)
    expect(chain().refundsSigned - signed).toBe(1)
    expect(await stored()).toMatchObject({
      status: "refunded",
      refundTransaction: recorded!.refundAttempt!.transaction,
      refundAttempt: null
    })
  })

  it("passes running at once record one refund and send only it: the payer is refunded once", async () => {
    const { account, startBalance, stored, refundsTo } = await failedPayment()
    // Three passes read the payment with no refund recorded and all sign one before any records it
    // (the first moves it from held to refunding; the others find it refunding); each then records
    // what it may before any send is answered.
    const signing = chain().holdRefunds("sign")
    const sending = chain().holdRefunds("send")
    const first = reconcile()
    await vi.waitFor(() => expect(signing.waiting()).toBe(1))
    const passes = Promise.all([first, reconcile(), reconcile()])
    await vi.waitFor(() => expect(signing.waiting()).toBe(3))
    signing.release()
    await vi.waitFor(() => expect(sending.waiting()).toBe(3))
    sending.release()
    await passes
    await reconcile()
    await reconcile()
    expect(refundsTo()).toHaveLength(1)
    expect(chain().balanceOf(account.address)).toBe(startBalance)
    expect(await stored()).toMatchObject({ status: "refunded", refundTransaction: refundsTo()[0]!.transaction })
  })

  /** Makes the payment's recorded refund look signed long ago (past X402_REFUND_BUMP_AFTER_MS). */
  const ageRefund = (paymentId: string) =>
    server.run(
      Effect.flatMap(X402Store, (s) =>
        Effect.flatMap(s.get(paymentId), (p) =>
          s.update({ ...p!, refundAttempt: { ...p!.refundAttempt!, signedAt: "2026-01-01T00:00:00.000Z" } })
        )
      )
    )

  it("a refund stuck below the going fee is replaced at its nonce with a higher fee once it has waited X402_REFUND_BUMP_AFTER_MS: the payer is refunded once, by the replacement", async () => {
    const { account, startBalance, stored, refundsTo } = await failedPayment()
    const signed = chain().refundsSigned
    try {
      chain().failNextRefund("timeout")
      await reconcile() // signed at the going fee and recorded; not broadcast
      const first = (await stored())!.refundAttempt!
      chain().setRefundFee(2) // the fee rises: the refund waits unmined
      await reconcile()
      expect(await stored()).toMatchObject({ status: "refunding", refundAttempt: { transaction: first.transaction } })
      expect(refundsTo()).toEqual([])
      await ageRefund((await stored())!.id)
      await reconcile() // still unmined, and old: replaced at its nonce with a higher fee, which is mined
      const refunds = refundsTo()
      expect(refunds).toHaveLength(1)
      expect(refunds[0]!.transaction).not.toBe(first.transaction)
      expect(refunds[0]!.nonce).toBe(String(first.nonce))
      expect(chain().refundsSigned - signed).toBe(2)
      expect(chain().balanceOf(account.address)).toBe(startBalance)
      expect(await stored()).toMatchObject({ status: "refunded", refundTransaction: refunds[0]!.transaction })
    } finally {
      chain().setRefundFee(1)
    }
  })

  it("a replacement the miners never saw, and the refund it replaced mined when the fee falls: that one is the refund, nothing is signed again", async () => {
    const { account, startBalance, stored, refundsTo } = await failedPayment()
    const signed = chain().refundsSigned
    try {
      chain().failNextRefund("timeout")
      await reconcile()
      const first = (await stored())!.refundAttempt!
      chain().setRefundFee(2)
      await reconcile() // broadcast, unmined
      await ageRefund((await stored())!.id)
      chain().keepNextReplacementUnseen()
      await reconcile() // replaced (recorded, sent), but the miners keep the first
      const replacement = (await stored())!.refundAttempt!
      expect(replacement.transaction).not.toBe(first.transaction)
      expect(replacement.replaces).toEqual([first.transaction])
      chain().setRefundFee(1) // the first is mined: the replacement never can be
      expect(refundsTo().map((t) => t.transaction)).toEqual([first.transaction])
      await reconcile() // the replacement's nonce is spent and it has no receipt — but the one it replaced has
      await reconcile()
      expect(refundsTo()).toHaveLength(1)
      expect(chain().refundsSigned - signed).toBe(2)
      expect(chain().balanceOf(account.address)).toBe(startBalance)
      expect(await stored()).toMatchObject({
        status: "refunded",
        refundTransaction: first.transaction,
        refundAttempt: null
      })
    } finally {
      chain().setRefundFee(1)
    }
  })

  it("a refund the chain can never mine (the wallet's nonce spent by another transaction) is signed anew, once: the payer is refunded once", async () => {
    const { account, startBalance, stored, refundsTo } = await failedPayment()
    const signed = chain().refundsSigned
    chain().failNextRefund("timeout")
    await reconcile() // recorded, not broadcast
    const first = (await stored())!.refundAttempt!
    chain().spendRefundNonce() // the operator's wallet sent something else at that nonce
    await reconcile() // the chain says it never can be mined: the attempt is let go
    expect(await stored()).toMatchObject({ status: "refunding", refundAttempt: null })
    expect(refundsTo()).toEqual([])
    await reconcile() // signed anew at the next nonce, sent, mined
    expect(refundsTo()).toHaveLength(1)
    expect(refundsTo()[0]!.transaction).not.toBe(first.transaction)
    expect(chain().refundsSigned - signed).toBe(2)
    expect(chain().balanceOf(account.address)).toBe(startBalance)
    expect(await stored()).toMatchObject({ status: "refunded", refundTransaction: refundsTo()[0]!.transaction })
  })

  it("a replayed PAYMENT-SIGNATURE answers the first outcome and moves nothing; the same signature for another request is 409", async () => {
    const { account } = payer()
    const client = clientFor(account)
    let signature: string | undefined
    const recording: typeof fetch = async (input, init) => {
      const header = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get(
        "payment-signature"
      )
      if (header !== null) signature = header
      return fetch(input, init)
    }
    const first = await wrapFetchWithPayment(recording, client)(...invoke(SIMULATED, "standard", { text: "once" }))
    expect(first.status).toBe(200)
    const firstBody = await first.json()
    const railAfterFirst = await balance(rail)
    const transfers = chain().transfers.length
    const settles = chain().settleCalls
    const [url, init] = invoke(SIMULATED, "standard", { text: "once" })
    const again = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": signature! } })
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual(firstBody)
    const [url2, init2] = invoke(SIMULATED, "standard", { text: "another" })
    const other = await fetch(url2, { ...init2, headers: { ...init2.headers, "payment-signature": signature! } })
    expect(other.status).toBe(409)
    expect(chain().transfers.length).toBe(transfers)
    expect(chain().settleCalls).toBe(settles)
    expect(await balance(rail)).toBe(railAfterFirst)
    const bad = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": "not base64!" } })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as Json).field).toBe("PAYMENT-SIGNATURE")
  })

  it("a payment-identifier names the payment: the same id and payload answer the first outcome, another payload under it is 409 and moves nothing", async () => {
    const { account } = payer()
    const client = clientFor(account)
    const [url, init] = invoke(SIMULATED, "standard", { text: "named" })
    const challenged = await fetch(url, init)
    const required = JSON.parse(Buffer.from(challenged.headers.get("payment-required")!, "base64").toString("utf8"))
    expect(required.extensions["payment-identifier"]).toBeDefined()
    const id = `pay_${randomBytes(12).toString("hex")}`
    const signed = async () => {
      const payload = await client.createPaymentPayload(required)
      return Buffer.from(
        JSON.stringify({ ...payload, extensions: { ...payload.extensions, "payment-identifier": { info: { id } } } })
      ).toString("base64")
    }
    const first = await signed()
    const paid = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": first } })
    expect(paid.status).toBe(200)
    const paidBody = await paid.json()
    const transfers = chain().transfers.length
    const railAfter = await balance(rail)
    const again = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": first } })
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual(paidBody)
    // A fresh authorization (another nonce) under the same payment id: another payment, refused.
    const other = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": await signed() } })
    expect(other.status).toBe(409)
    expect(((await other.json()) as Json)._tag).toBe("PaymentConflict")
    expect(chain().transfers.length).toBe(transfers)
    expect(await balance(rail)).toBe(railAfter)
  })

  it("a settle whose answer is lost: 202 settlement_pending, never a fresh 402; a retry pays nothing more; reconciled from the chain", async () => {
    const { account } = payer()
    const client = clientFor(account)
    let signature: string | undefined
    const recording: typeof fetch = async (input, init) => {
      const header = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get(
        "payment-signature"
      )
      if (header !== null) signature = header
      return fetch(input, init)
    }
    const railBefore = await balance(rail)
    const startBalance = chain().balanceOf(account.address)
    chain().failNextSettle("lost")
    const res = await wrapFetchWithPayment(recording, client)(...invoke(SIMULATED, "standard", { text: "lost" }))
    expect(res.status).toBe(202)
    const body = (await res.json()) as Json
    expect(body).toMatchObject({ status: "settlement_pending" })
    // The asset moved once (the answer was lost, not the transfer); the ledger has not taken it in yet.
    expect(chain().balanceOf(account.address)).toBe(startBalance - 20_000n)
    expect(await balance(rail)).toBe(railBefore)
    const [url, init] = invoke(SIMULATED, "standard", { text: "lost" })
    const retry = await fetch(url, { ...init, headers: { ...init.headers, "payment-signature": signature! } })
    expect(retry.status).toBe(202)
    expect(await retry.json()).toMatchObject({ status: "settlement_pending", paymentId: body.paymentId })
    expect(await reconcile()).toBeGreaterThanOrEqual(1)
    expect(await balance(rail)).toBe(railBefore - 2)
    expect(chain().balanceOf(account.address)).toBe(startBalance - 20_000n)
  })

  it("a keyed agent whose owner's limit refuses the purchase is refused before any settle: nothing moves", async () => {
    const agent = await createAgentKey(server.baseUrl, ["commerce:*"], {
      wallet: {
        perTransactionLimitCents: 1,
        dailyLimitCents: null,
        monthlyLimitCents: null,
        approvalThresholdCents: 10_000,
        autonomyLevel: "full_auto"
      }
    })
    const { account } = payer()
    const client = clientFor(account)
    const settles = chain().settleCalls
    const transfers = chain().transfers.length
    const [url, init] = invoke(SIMULATED, "standard", { text: "limited" })
    const challenged = await fetch(url, { ...init, headers: { ...init.headers, ...agent.auth } })
    expect(challenged.status).toBe(402)
    expect(challenged.headers.get("www-authenticate")).toMatch(/^Payment /)
    const required = JSON.parse(Buffer.from(challenged.headers.get("payment-required")!, "base64").toString("utf8"))
    const payload = await client.createPaymentPayload(required)
    const signature = Buffer.from(JSON.stringify(payload)).toString("base64")
    const res = await fetch(url, {
      ...init,
      headers: { ...init.headers, ...agent.auth, "payment-signature": signature }
    })
    expect(res.status).toBe(403)
    expect(((await res.json()) as Json)._tag).toBe("PolicyViolation")
    expect(decodePaymentResponseHeader(res.headers.get("payment-response")!)).toMatchObject({ success: false })
    expect(chain().settleCalls).toBe(settles)
    expect(chain().transfers.length).toBe(transfers)
    expect(await balance(walletAccount(agent.agentId))).toBe(0)
  })

  it("the books check against the chain: every payment's settle and refund are on the chain and the rail's balance is what they add up to; a refund that paid someone else, or a payment called failed whose money arrived, is named", async () => {
    // A paid call and a refunded one of its own (the payments of the tests above are checked too).
    const { pay } = payer()
    const paid = await pay(...invoke(SIMULATED, "standard", { text: "books" }))
    expect(paid.status).toBe(200)
    const paidId = (decodePaymentResponseHeader(paid.headers.get("payment-response")!).extensions as Json)[
      "agent-commerce"
    ].paymentId as string
    const settled = (await server.run(Effect.flatMap(X402Store, (s) => s.get(paidId))))!
    expect(settled.status).toBe("settled")
    const { stored } = await failedPayment()
    await reconcile()
    const refunded = (await stored())!
    expect(refunded.status).toBe("refunded")
    const books = () => server.run(x402Books(config, true))
    const clean = await books()
    expect(clean).toMatchObject({ ok: true, chain: "compared", drift: [] })
    expect(clean.payments).toBeGreaterThanOrEqual(2)
    expect(clean.rails).toEqual([
      { account: rail, balanceCents: await balance(rail), expectedCents: clean.rails[0]!.expectedCents }
    ])
    expect(clean.rails[0]!.balanceCents).toBe(clean.rails[0]!.expectedCents)
    const update = (p: PaymentRecord) => server.run(Effect.flatMap(X402Store, (s) => s.update(p)))
    try {
      // Its refund recorded as the transaction that paid the seller's payTo: not the payer's money back.
      await update({ ...refunded, refundTransaction: refunded.settleTransaction })
      expect((await books()).drift).toEqual([
        {
          paymentId: refunded.id,
          status: "refunded",
          problem: `refund transaction ${refunded.settleTransaction} did not move 1000000 to the payer`
        }
      ])
      await update(refunded)
      // A settled payment called failed although its authorization was used: the chain says the money
      // arrived, and the rail no longer adds up (its 2 cents are in the ledger, not in the books).
      await update({ ...settled, status: "failed" })
      const failed = await books()
      expect(failed.ok).toBe(false)
      expect(failed.drift).toEqual([
        {
          paymentId: settled.id,
          status: "failed",
          problem: expect.stringMatching(/^called failed, but its authorization was used/)
        }
      ])
      expect(failed.rails[0]!.balanceCents - failed.rails[0]!.expectedCents).toBe(-2)
    } finally {
      await update(refunded)
      await update(settled)
    }
    expect((await books()).ok).toBe(true)
  })
})
