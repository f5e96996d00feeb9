// A buy over A2A paid with x402 (the a2a-x402 extension's standalone flow, x402 v2 objects), on
// every storage, against the simulated chain, the payment signed by x402's own client
// (`@x402/fetch`'s x402Client with `@x402/evm`'s exact scheme and a viem account). What a payer is
// promised: a buy needs no API key; it is answered with a task waiting for a payment that carries
// x402's PaymentRequired; the payment message naming that task pays exactly that call, once — the
// same message again, or another authorization for a task already paid, moves nothing; a refused
// authorization costs nothing and may be signed again; an agent seller's call is held in escrow and
// refunded on the chain when the seller fails. What an owner is promised: a keyed agent pays with
// x402 only when it activates the extension, and its owner's limit refuses the purchase before any
// settle. Nobody reads another caller's task.
import { randomBytes } from "node:crypto"
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm"
import { x402Client } from "@x402/fetch"
import { Effect, Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { Role, TaskState } from "@a2a-js/sdk"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { simulatedChainOf } from "../../src/layers/x402/simulated.js"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { A2A_X402_EXTENSION } from "../../src/schema/a2a/x402Task.js"
import { x402Account } from "../../src/schema/x402/x402.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import type { X402Config } from "../../src/services/platform/AppConfig.js"
import { X402 } from "../../src/services/x402/X402.js"
import { X402TaskStore } from "../../src/services/a2a/X402TaskStore.js"
import type { X402TaskRecord } from "../../src/schema/a2a/x402Task.js"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { a2aClientAt, dataMessage } from "../fixtures/a2aClient.js"
import { setClock } from "../fixtures/clock.js"
import { type RuntimeServer, startRuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { postAs, publishAgentService as publishAgentServiceAt, simulatedX402Config } from "../fixtures/x402.js"

const C = "/api/v1/agent/commerce"
const SIMULATED = "svc_translate_pro" // a simulated seller, per_call, standard: 2 cents = 20,000 units
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

describeEachStorage("A2A buys paid with x402", { concurrent: "storages" }, (storage) => {
  let server: RuntimeServer
  const config: X402Config = simulatedX402Config()
  const chain = () => simulatedChainOf(config)
  const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))
  const reconcile = () => server.run(Effect.flatMap(X402, (x) => x.reconcile))

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: {
        rateLimitPerMinute: 10_000,
        rateLimitPerDay: 100_000,
        workers: false,
        orderWaitMs: 300,
        x402: Option.some(config)
      }
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  /** One JSON-RPC call to /a2a; `headers` adds the caller's key or the extension's activation. */
  const rpc = async (method: string, params: Json, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
    })
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json }
  }
  const buy = (serviceId: string, tierId: string, input: unknown, headers: Record<string, string> = {}) =>
    rpc(
      "SendMessage",
      {
        message: {
          messageId: `m-${randomBytes(4).toString("hex")}`,
          role: "ROLE_USER",
          parts: [{ data: { skill: "buy", serviceId, tierId, input } }]
        }
      },
      headers
    )
  const payMessage = (taskId: string, metadata: Json, headers: Record<string, string> = {}) =>
    rpc(
      "SendMessage",
      {
        message: {
          messageId: `m-${randomBytes(4).toString("hex")}`,
          taskId,
          role: "ROLE_USER",
          parts: [{ text: "Here is the payment authorization." }],
          metadata
        }
      },
      headers
    )
  const pay = (taskId: string, payload: unknown, headers: Record<string, string> = {}) =>
    payMessage(taskId, { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload }, headers)

  /** A payer: a fresh key, x402's own client signing with it. */
  const payer = () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const client = x402Client.fromConfig({
      schemes: [
        { network: config.network as `${string}:${string}`, client: new ExactEvmScheme(toClientEvmSigner(account)) }
      ],
      spendControls: { allowedAssets: true }
    })
    return { account, sign: (required: Json) => client.createPaymentPayload(required) }
  }
  const metaOf = (task: Json) => task.status.message.metadata as Json
  const post = (k: AgentKey, path: string, body: unknown) => postAs(server.baseUrl, k, path, body)
  const publishAgentService = () => publishAgentServiceAt(server.baseUrl)

  it("the agent card declares the a2a-x402 extension (not required: a keyed agent may pay with credits)", async () => {
    const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as Json
    expect(card.capabilities.extensions).toEqual([
      expect.objectContaining({ uri: A2A_X402_EXTENSION, required: false })
    ])
  })

  it("without a key a buy is a task waiting for x402's payment; the payment message pays the call once and the task completes with its output", async () => {
    const opened = await buy(SIMULATED, "standard", { text: "over A2A" })
    expect(opened.status).toBe(200)
    const task = opened.body.result.task
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    expect(metaOf(task)["x402.payment.status"]).toBe("payment-required")
    const required = metaOf(task)["x402.payment.required"]
    expect(required).toMatchObject({
      x402Version: 2,
      accepts: [{ scheme: "exact", network: config.network, amount: "20000", asset: config.asset, payTo: config.payTo }]
    })

    const { account, sign } = payer()
    const payload = await sign(required)
    const before = chain().balanceOf(account.address)
    const railBefore = await balance(x402Account(config.network, config.asset))
    const paid = await pay(task.id, payload)
    const done = paid.body.result.task
    expect(done.id).toBe(task.id)
    expect(done.status.state).toBe("TASK_STATE_COMPLETED")
    expect(metaOf(done)["x402.payment.status"]).toBe("payment-completed")
    expect(metaOf(done)["x402.payment.receipts"]).toEqual([
      expect.objectContaining({ success: true, network: config.network, payer: account.address.toLowerCase() })
    ])
    expect(done.artifacts[0].parts[0].data).toBeDefined()
    expect(done.metadata).toMatchObject({ paidWith: "x402", serviceId: SIMULATED, transactionId: expect.any(String) })
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
    expect(await balance(x402Account(config.network, config.asset))).toBe(railBefore - 2)

    // The same message again, and GetTask: the same paid task; nothing moves.
    const transfers = chain().transfers.length
    const again = await pay(task.id, payload)
    expect(again.body.result.task.status.state).toBe("TASK_STATE_COMPLETED")
    const read = await rpc("GetTask", { id: task.id })
    expect(read.body.result).toMatchObject({ id: task.id, status: { state: "TASK_STATE_COMPLETED" } })
    expect(read.body.result.artifacts).toEqual(done.artifacts)
    expect(chain().transfers.length).toBe(transfers)
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
  })

  it("the stock @a2a-js/sdk client, with no key: its buy is a task carrying x402.payment.required, its message naming the task pays it", async () => {
    const client = await a2aClientAt(server.baseUrl, { "a2a-extensions": A2A_X402_EXTENSION })
    const opened = (await client.sendMessage(
      dataMessage({ skill: "buy", serviceId: SIMULATED, tierId: "standard", input: { text: "stock" } })
    )) as Json
    expect(opened.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const required = opened.status.message.metadata["x402.payment.required"]
    expect(required).toMatchObject({ x402Version: 2, accepts: [{ amount: "20000" }] })
    const { account, sign } = payer()
    const before = chain().balanceOf(account.address)
    const paid = (await client.sendMessage({
      tenant: "",
      message: {
        messageId: `m-${randomBytes(4).toString("hex")}`,
        contextId: opened.contextId,
        taskId: opened.id,
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: "text" as const, value: "Here is the payment authorization." },
            metadata: undefined,
            filename: "",
            mediaType: "text/plain"
          }
        ],
        metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": await sign(required) },
        extensions: [A2A_X402_EXTENSION],
        referenceTaskIds: []
      },
      configuration: undefined,
      metadata: undefined
    })) as Json
    expect(paid.id).toBe(opened.id)
    expect(paid.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(paid.status.message.metadata["x402.payment.receipts"]).toEqual([
      expect.objectContaining({ success: true, payer: account.address.toLowerCase() })
    ])
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
  })

  it("another authorization for a task already paid moves nothing: the task answers as paid", async () => {
    const task = (await buy(SIMULATED, "standard", { text: "once" })).body.result.task
    const required = metaOf(task)["x402.payment.required"]
    const { account, sign } = payer()
    await pay(task.id, await sign(required))
    const before = chain().balanceOf(account.address)
    const transfers = chain().transfers.length
    // A second signature (a fresh nonce) by the same payer, and one by another payer.
    const second = await pay(task.id, await sign(required))
    expect(second.body.result.task.status.state).toBe("TASK_STATE_COMPLETED")
    const other = payer()
    const third = await pay(task.id, await other.sign(required))
    expect(third.body.result.task.status.state).toBe("TASK_STATE_COMPLETED")
    expect(chain().transfers.length).toBe(transfers)
    expect(chain().balanceOf(account.address)).toBe(before)
  })

  it("an authorization that paid another call does not pay this task, nor reads as its payment: the task still asks, and a fresh one pays it", async () => {
    const first = (await buy(SIMULATED, "standard", { text: "one" })).body.result.task
    const required = metaOf(first)["x402.payment.required"]
    const { account, sign } = payer()
    const payload = await sign(required)
    expect((await pay(first.id, payload)).body.result.task.status.state).toBe("TASK_STATE_COMPLETED")
    const before = chain().balanceOf(account.address)
    const second = (await buy(SIMULATED, "standard", { text: "two" })).body.result.task
    const reused = (await pay(second.id, payload)).body.result.task
    expect(reused.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    expect(metaOf(reused)["x402.payment.error"]).toBe("DUPLICATE_NONCE")
    expect((await rpc("GetTask", { id: second.id })).body.result.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    expect(chain().balanceOf(account.address)).toBe(before)
    const paid = (await pay(second.id, await sign(required))).body.result.task
    expect(paid.status.state).toBe("TASK_STATE_COMPLETED")
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
  })

  it("a refused authorization (another amount) costs nothing; the task asks again and a right one pays it once", async () => {
    const task = (await buy(SIMULATED, "standard", { text: "retry" })).body.result.task
    const required = metaOf(task)["x402.payment.required"]
    const { account, sign } = payer()
    const before = chain().balanceOf(account.address)
    const cheap = await sign({ ...required, accepts: [{ ...required.accepts[0], amount: "1" }] })
    const refused = (await pay(task.id, cheap)).body.result.task
    expect(refused.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    expect(metaOf(refused)).toMatchObject({
      "x402.payment.status": "payment-required",
      "x402.payment.error": "INVALID_AMOUNT",
      "x402.payment.receipts": [expect.objectContaining({ success: false })]
    })
    expect(metaOf(refused)["x402.payment.required"].accepts[0].amount).toBe("20000")
    expect(chain().balanceOf(account.address)).toBe(before)
    const paid = (await pay(task.id, await sign(required))).body.result.task
    expect(paid.status.state).toBe("TASK_STATE_COMPLETED")
    expect(chain().balanceOf(account.address)).toBe(before - 20_000n)
  })

  it("an agent seller's call is held in escrow while it works; when it fails the payer is refunded on the chain and the task says so", async () => {
    const { seller, serviceId } = await publishAgentService()
    const task = (await buy(serviceId, "unit", { text: "hello" })).body.result.task
    const { account, sign } = payer()
    const start = chain().balanceOf(account.address)
    const held = (await pay(task.id, await sign(metaOf(task)["x402.payment.required"]))).body.result.task
    expect(held.status.state).toBe("TASK_STATE_WORKING")
    expect(metaOf(held)["x402.payment.status"]).toBe("payment-completed")
    const txId = held.metadata.transactionId as string
    expect(txId).toMatch(/^tx_/)
    expect(chain().balanceOf(account.address)).toBe(start - 1_000_000n)
    expect((await post(seller, `${C}/orders/${txId}/fail`, { error: "model unavailable" })).status).toBe(200)
    await reconcile()
    const failed = (await rpc("GetTask", { id: task.id })).body.result
    expect(failed.status.state).toBe("TASK_STATE_FAILED")
    expect(failed.status.message.parts[1].data).toMatchObject({
      status: "refunded",
      refundTransaction: expect.any(String)
    })
    expect(chain().balanceOf(account.address)).toBe(start)
    expect(await balance(walletAccount(seller.agentId))).toBe(0)
  })

  it("an agent seller that delivers: the task completes with the seller's output and the seller is paid 85", async () => {
    const { seller, serviceId } = await publishAgentService()
    const task = (await buy(serviceId, "unit", { text: "hello" })).body.result.task
    const { sign } = payer()
    const held = (await pay(task.id, await sign(metaOf(task)["x402.payment.required"]))).body.result.task
    const txId = held.metadata.transactionId as string
    expect((await post(seller, `${C}/orders/${txId}/deliver`, { output: { text: "HELLO" } })).status).toBe(200)
    await reconcile()
    const done = (await rpc("GetTask", { id: task.id })).body.result
    expect(done.status.state).toBe("TASK_STATE_COMPLETED")
    expect(done.artifacts[0].parts[0].data).toEqual({ text: "HELLO" })
    expect(await balance(walletAccount(seller.agentId))).toBe(85)
  })

  it("declining (payment-rejected) or cancelling ends the task unpaid; it takes no payment after", async () => {
    const declined = (await buy(SIMULATED, "standard", { text: "no" })).body.result.task
    const answer = (await payMessage(declined.id, { "x402.payment.status": "payment-rejected" })).body.result.task
    expect(answer.status.state).toBe("TASK_STATE_FAILED")
    expect(metaOf(answer)["x402.payment.status"]).toBe("payment-rejected")
    const { account, sign } = payer()
    const before = chain().balanceOf(account.address)
    const late = await pay(declined.id, await sign(metaOf(declined)["x402.payment.required"]))
    expect(late.body.error.code).toBe(-32004)

    const waiting = (await buy(SIMULATED, "standard", { text: "cancel" })).body.result.task
    const cancelled = await rpc("CancelTask", { id: waiting.id })
    expect(cancelled.body.result.status.state).toBe("TASK_STATE_CANCELED")
    expect((await pay(waiting.id, await sign(metaOf(waiting)["x402.payment.required"]))).body.error.code).toBe(-32004)
    expect(chain().balanceOf(account.address)).toBe(before)
  })

  it("without a key nothing but a buy paid with x402 and its task: every other method is 401", async () => {
    const list = await rpc("ListTasks", {})
    expect(list.status).toBe(401)
    const browse = await rpc("SendMessage", {
      message: { messageId: "m1", role: "ROLE_USER", parts: [{ data: { skill: "browse_services" } }] }
    })
    expect(browse.status).toBe(401)
    const tx = await rpc("GetTask", { id: "tx_anything" })
    expect(tx.status).toBe(401)
  })

  it("a task is its caller's alone: another keyless payer may read it by its id only; a keyed agent reads neither another agent's nor a keyless one", async () => {
    const keyless = (await buy(SIMULATED, "standard", { text: "mine" })).body.result.task
    const agent = await createAgentKey(server.baseUrl, ["commerce:*"])
    const activated = { ...agent.auth, "a2a-extensions": A2A_X402_EXTENSION }
    const keyed = (await buy(SIMULATED, "standard", { text: "ours" }, activated)).body.result.task
    expect(keyed.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    const other = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await rpc("GetTask", { id: keyed.id }, other.auth)).body.error.code).toBe(-32001)
    expect((await rpc("GetTask", { id: keyless.id }, agent.auth)).body.error.code).toBe(-32001)
    expect((await rpc("GetTask", { id: keyed.id })).body.error.code).toBe(-32001)
    expect((await rpc("GetTask", { id: keyed.id }, agent.auth)).body.result.id).toBe(keyed.id)
  })

  it("a keyed agent pays with credits unless it activates the extension; activated, its owner's limit refuses the purchase before any settle", async () => {
    const agent = await createAgentKey(server.baseUrl, ["commerce:*"], {
      wallet: {
        perTransactionLimitCents: 1,
        dailyLimitCents: null,
        monthlyLimitCents: null,
        approvalThresholdCents: 10_000,
        autonomyLevel: "full_auto"
      }
    })
    // Not activated: the credits buy (its policy refuses it too, as a message).
    const credits = await buy(SIMULATED, "standard", { text: "credits" }, agent.auth)
    expect(credits.body.result.message.metadata).toMatchObject({ skill: "buy", ok: false })
    expect(credits.headers.get("a2a-extensions")).toBeNull()

    const activated = { ...agent.auth, "a2a-extensions": A2A_X402_EXTENSION }
    const opened = await buy(SIMULATED, "standard", { text: "x402" }, activated)
    expect(opened.headers.get("a2a-extensions")).toBe(A2A_X402_EXTENSION)
    const task = opened.body.result.task
    const { account, sign } = payer()
    const settles = chain().settleCalls
    const before = chain().balanceOf(account.address)
    const refused = (await pay(task.id, await sign(metaOf(task)["x402.payment.required"]), activated)).body.result.task
    expect(refused.status.state).toBe("TASK_STATE_FAILED")
    expect(metaOf(refused)).toMatchObject({
      "x402.payment.status": "payment-failed",
      "x402.payment.error": "PolicyViolation"
    })
    expect(chain().settleCalls).toBe(settles)
    expect(chain().balanceOf(account.address)).toBe(before)
    expect(await balance(walletAccount(agent.agentId))).toBe(0)
  })

  it("a payment message without a PaymentPayload, or with one that is not x402's, is -32602 naming the field; nothing is recorded", async () => {
    const task = (await buy(SIMULATED, "standard", { text: "bad" })).body.result.task
    const missing = await payMessage(task.id, { "x402.payment.status": "payment-submitted" })
    expect(missing.body.error).toMatchObject({
      code: -32602,
      data: { field: 'message.metadata["x402.payment.payload"]' }
    })
    const junk = await pay(task.id, { x402Version: 2, payload: "nope" })
    expect(junk.body.error).toMatchObject({ code: -32602, data: { field: 'message.metadata["x402.payment.payload"]' } })
    const waiting = (await rpc("GetTask", { id: task.id })).body.result
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    // What a waiting task asks is what the paid call asked when the buy opened it.
    expect(metaOf(waiting)["x402.payment.required"]).toEqual(metaOf(task)["x402.payment.required"])
    // One the paid call itself refuses (400: not a PaymentPayload it can read) leaves the task to a right one.
    const unreadable = await pay(task.id, {
      x402Version: 2,
      payload: { authorization: { from: "0x0000000000000000000000000000000000000001", nonce: "0x01" } }
    })
    expect(unreadable.body.error).toMatchObject({
      code: -32602,
      data: { field: 'message.metadata["x402.payment.payload"]' }
    })
    const { sign } = payer()
    const paid = (await pay(task.id, await sign(metaOf(task)["x402.payment.required"]))).body.result.task
    expect(paid.status.state).toBe("TASK_STATE_COMPLETED")
  })

  it("tasks never paid are kept an hour: a new task takes the older ones away, never one whose payment was submitted", async () => {
    const tasks = (f: (store: typeof X402TaskStore.Service) => Effect.Effect<unknown, unknown>) =>
      server.run(Effect.flatMap(X402TaskStore, f) as Effect.Effect<unknown, never>)
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000).toISOString()
    const record = (id: string, submitted: boolean): X402TaskRecord => ({
      id,
      agentId: null,
      serviceId: SIMULATED,
      tierId: "standard",
      body: "{}",
      state: submitted ? "payment-submitted" : "payment-required",
      payer: submitted ? "0x00000000000000000000000000000000000000aa" : null,
      nonce: submitted ? "0x01" : null,
      paymentId: null,
      createdAt: old,
      updatedAt: old
    })
    const stale = `x402t_stale${randomBytes(6).toString("hex")}`
    const paid = `x402t_paid${randomBytes(6).toString("hex")}`
    await tasks((s) => Effect.all([s.insert(record(stale, false)), s.insert(record(paid, true))]))
    // Read before the purge: an hour old and never paid, it answers as expired.
    const expired = (await rpc("GetTask", { id: stale })).body.result
    expect(expired.status.state).toBe("TASK_STATE_FAILED")
    expect(metaOf(expired)["x402.payment.error"]).toBe("EXPIRED_PAYMENT")
    await buy(SIMULATED, "standard", { text: "a new one" })
    expect(await tasks((s) => s.get(stale))).toBeUndefined()
    expect(await tasks((s) => s.get(paid))).toMatchObject({ id: paid, state: "payment-submitted" })
  })
})

describe("keyless A2A calls", () => {
  let server: RuntimeServer
  beforeAll(async () => {
    // The clock stands still mid-minute: on the wall clock the fixed minute could turn between the third
    // request and the fourth, and the fourth pass.
    server = await startRuntimeServer({
      storage: "memory",
      config: { rateLimitPerMinute: 3, rateLimitPerDay: 100, workers: false, x402: Option.some(simulatedX402Config()) },
      clock: setClock(Date.UTC(2026, 10, 28, 12, 0, 30)).clock
    })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("spend their address's requests as a key spends its own: past the limit, 429 with Retry-After", async () => {
    const getTask = () =>
      fetch(`${server.baseUrl}/a2a`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x402t_unknown" } })
      })
    const statuses: Array<number> = []
    let last: Response | undefined
    for (let i = 0; i < 4; i++) {
      last = await getTask()
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})
