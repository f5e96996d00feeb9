// A2A 1.0 tasks for purchases that wait on their seller, with the stock @a2a-js/sdk client, on
// every storage. What a buyer is promised: a buy of an agent's service answers a Task named by its
// transaction; GetTask follows it to the seller's answer (completed with the seller's own output as
// the artifact, or failed with its error and nothing charged); by default the answer waits for the
// seller up to ORDER_WAIT_MS; a task is the buyer's alone. What a seller is promised: its delivery
// is what the buyer gets, and it is paid 85 % of the price.
import { Role, TaskState } from "@a2a-js/sdk"
import { a2aClientAt, seenTask, walkTaskPages } from "../fixtures/a2aClient.js"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { agentApi, pullMarket } from "../fixtures/agentMarket.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const C = "/api/v1/agent/commerce"
const ORDER_WAIT_MS = 1_500
type Json = Record<string, unknown>

let server: RuntimeServer

const a2aClient = (k: AgentKey) => a2aClientAt(server.baseUrl, k.auth)

/** A buy message; `returnImmediately` as the request's configuration. */
const buyRequest = (serviceId: string, input: unknown, returnImmediately?: boolean, idempotencyKey?: string) => ({
  tenant: "",
  message: {
    messageId: `m-${randomBytes(4).toString("hex")}`,
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: "data" as const, value: { skill: "buy", serviceId, tierId: "unit", input } },
        metadata: undefined,
        filename: "",
        mediaType: "application/json"
      }
    ],
    metadata: idempotencyKey === undefined ? undefined : { idempotencyKey },
    extensions: [],
    referenceTaskIds: []
  },
  configuration: returnImmediately === undefined ? undefined : ({ returnImmediately } as never),
  metadata: undefined
})

const textPart = (text: string) => ({
  content: { $case: "text" as const, value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain"
})

const emptyList = {
  tenant: "",
  contextId: "",
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: "",
  statusTimestampAfter: undefined
}

/** The task as a client sees it, its data part the transaction. */
const seen = (result: unknown) => {
  const task = seenTask(result)
  return { ...task, transaction: task.data }
}

const call = (...args: Parameters<ReturnType<typeof agentApi>>) => agentApi(server.baseUrl)(...args)

/** A seller with a pull service at `priceCents`, and a buyer with $100. */
const market = (priceCents = 1_000) => pullMarket(server.baseUrl, { priceCents })
const wallet = async (k: AgentKey) =>
  (await call(k, "GET", `${C}/wallet`)).body as { balanceCents: number; heldCents: number }

/** The raw JSON-RPC error of `method` (for what the stock client refuses to send). */
const rpcError = async (k: AgentKey, method: string, params: Json) => {
  const res = await fetch(`${server.baseUrl}/a2a`, {
    method: "POST",
    headers: { ...k.auth, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params })
  })
  return ((await res.json()) as { error: { code: number; message: string } }).error
}

describeEachStorage("A2A 1.0 tasks for purchases", (storage) => {
  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, orderWaitMs: ORDER_WAIT_MS }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("returnImmediately: a working task named by the transaction; GetTask follows it to the seller's output; the seller is paid 85 %, nothing stays held", async () => {
    const { seller, buyer, serviceId } = await market(1_000)
    const client = await a2aClient(buyer)
    const key = `a2a-buy-${randomBytes(6).toString("hex")}`
    const started = seen(await client.sendMessage(buyRequest(serviceId, { text: "count me" }, true, key)))
    expect(started.id).toMatch(/^tx_/)
    expect(started.contextId).toBe(started.id)
    expect(started.state).toBe(TaskState.TASK_STATE_WORKING)
    expect(started.transaction).toMatchObject({ id: started.id, status: "pending", delivery: null, priceCents: 1_000 })
    expect(started.artifacts).toEqual([])
    expect(started.metadata).toMatchObject({ skill: "buy", httpStatus: 202, ok: true, transactionStatus: "pending" })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 1_000 })

    const waiting = seen(await client.getTask({ tenant: "", id: started.id, historyLength: undefined }))
    expect(waiting.state).toBe(TaskState.TASK_STATE_WORKING)

    const output = { words: 2, note: "the seller's own" }
    expect((await call(seller, "POST", `${C}/orders/${started.id}/deliver`, { output })).status).toBe(200)
    const done = seen(await client.getTask({ tenant: "", id: started.id, historyLength: undefined }))
    expect(done.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(done.artifacts).toEqual([output])
    // The task's transaction is the one REST shows.
    expect(done.transaction).toEqual((await call(buyer, "GET", `${C}/transactions/${started.id}`)).body)
    expect(done.transaction).toMatchObject({ status: "completed", sellerCents: 850, feeCents: 150 })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 850, heldCents: 0 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 0 })

    // The same message again (same Idempotency-Key) is the same purchase, now completed: one charge.
    const replay = seen(await client.sendMessage(buyRequest(serviceId, { text: "count me" }, undefined, key)))
    expect(replay).toMatchObject({ id: started.id, state: TaskState.TASK_STATE_COMPLETED, artifacts: [output] })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 0 })
  })

  it("by default the answer waits for the seller: delivered meanwhile is a completed task; no answer within ORDER_WAIT_MS is a working one", async () => {
    const { seller, buyer, serviceId } = await market(400)
    const client = await a2aClient(buyer)
    // The seller takes the order from its list as it arrives and delivers it.
    const serving = (async () => {
      const list = await call(seller, "GET", `${C}/orders?status=pending&waitMs=5000`)
      const [order] = list.body.orders as Array<{ id: string }>
      await call(seller, "POST", `${C}/orders/${order.id}/deliver`, { output: { ok: true } })
    })()
    const answered = seen(await client.sendMessage(buyRequest(serviceId, { text: "now" })))
    await serving
    expect(answered.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(answered.artifacts).toEqual([{ ok: true }])
    expect(answered.metadata).toMatchObject({ transactionStatus: "completed", httpStatus: 202 })

    const before = Date.now()
    const slow = seen(await client.sendMessage(buyRequest(serviceId, { text: "later" })))
    expect(Date.now() - before).toBeGreaterThanOrEqual(ORDER_WAIT_MS - 100)
    expect(slow.state).toBe(TaskState.TASK_STATE_WORKING)
  })

  it("a failed order is a failed task with the seller's error and nothing charged", async () => {
    const { seller, buyer, serviceId } = await market(700)
    const client = await a2aClient(buyer)
    const task = seen(await client.sendMessage(buyRequest(serviceId, { text: "" }, true)))
    expect((await call(seller, "POST", `${C}/orders/${task.id}/fail`, { error: "input.text is empty" })).status).toBe(
      200
    )
    const failed = seen(await client.getTask({ tenant: "", id: task.id, historyLength: undefined }))
    expect(failed.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(failed.text).toMatch(/input\.text is empty/)
    expect(failed.artifacts).toEqual([])
    expect(failed.transaction).toMatchObject({
      status: "failed",
      delivery: { success: false, error: "input.text is empty" }
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 0 })
  })

  it("a task is its buyer's: the seller, another agent and an unknown id get TaskNotFound; follow-up messages are unsupported", async () => {
    const { seller, buyer, serviceId } = await market(300)
    const task = seen(await (await a2aClient(buyer)).sendMessage(buyRequest(serviceId, { text: "x" }, true)))
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    for (const k of [seller, stranger]) {
      await expect(
        (await a2aClient(k)).getTask({ tenant: "", id: task.id, historyLength: undefined })
      ).rejects.toMatchObject({ envelopeCode: -32001 })
    }
    expect((await rpcError(buyer, "GetTask", { id: "tx_does_not_exist" })).code).toBe(-32001)
    expect((await rpcError(stranger, "CancelTask", { id: task.id })).code).toBe(-32001)
    expect((await rpcError(buyer, "GetTask", {})).code).toBe(-32602)
    const followUp = { messageId: "m-f", role: "ROLE_USER", taskId: task.id, parts: [{ data: { skill: "buy" } }] }
    expect((await rpcError(buyer, "SendMessage", { message: followUp })).code).toBe(-32004)
    expect((await rpcError(stranger, "SubscribeToTask", { id: task.id })).code).toBe(-32001)
  })

  it("ListTasks: the buyer's purchases as tasks, newest first, in pages; by state; artifacts only when asked; a sale is not the seller's task", async () => {
    const { seller, buyer, serviceId } = await market(100)
    const client = await a2aClient(buyer)
    const ids: Array<string> = []
    for (const text of ["one", "two", "three"]) {
      ids.push(seen(await client.sendMessage(buyRequest(serviceId, { text }, true))).id)
      // Newest first by placing time: keep the three apart.
      await new Promise((r) => setTimeout(r, 5))
    }
    const [delivered, failed, waiting] = ids as [string, string, string]
    expect((await call(seller, "POST", `${C}/orders/${delivered}/deliver`, { output: { n: 1 } })).status).toBe(200)
    expect((await call(seller, "POST", `${C}/orders/${failed}/fail`, { error: "no" })).status).toBe(200)

    const list = (extra: Partial<Parameters<typeof client.listTasks>[0]> = {}) =>
      client.listTasks({
        tenant: "",
        contextId: "",
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: "",
        statusTimestampAfter: undefined,
        ...extra
      })
    const first = await list({ pageSize: 2 })
    expect(first.tasks.map((t) => t.id)).toEqual([waiting, failed])
    expect(first.nextPageToken).not.toBe("")
    const second = await list({ pageSize: 2, pageToken: first.nextPageToken })
    expect(second.tasks.map((t) => t.id)).toEqual([delivered])
    expect(second).toMatchObject({ nextPageToken: "", totalSize: 3, pageSize: 2 })

    const byState = async (status: TaskState) => (await list({ status })).tasks.map((t) => t.id)
    expect(await byState(TaskState.TASK_STATE_WORKING)).toEqual([waiting])
    expect(await byState(TaskState.TASK_STATE_FAILED)).toEqual([failed])
    expect(await byState(TaskState.TASK_STATE_CANCELED)).toEqual([])
    const completed = (await list({ status: TaskState.TASK_STATE_COMPLETED })).tasks
    expect(completed.map((t) => [t.id, t.status?.state, t.artifacts])).toEqual([
      [delivered, TaskState.TASK_STATE_COMPLETED, []]
    ])
    const withOutput = await list({ status: TaskState.TASK_STATE_COMPLETED, includeArtifacts: true })
    expect(seen(withOutput.tasks[0]).artifacts).toEqual([{ n: 1 }])
    // contextId: a task's context is its transaction.
    expect((await list({ contextId: failed })).tasks.map((t) => t.id)).toEqual([failed])

    // The seller sold these: none of them is its task; a stranger has none either.
    expect((await (await a2aClient(seller)).listTasks({ ...emptyList })).tasks).toEqual([])
    expect((await rpcError(buyer, "ListTasks", { pageSize: 0 })).code).toBe(-32602)
    expect((await rpcError(buyer, "ListTasks", { pageToken: "not-ours" })).code).toBe(-32602)
    expect((await rpcError(buyer, "ListTasks", { status: "TASK_STATE_INPUT_REQUIRED" })).code).toBe(-32602)
  })

  it("ListTasks: buys waiting on the owner, declined or taken back are listed beside the purchases (an approved one as its purchase), newest first, each once whatever the page size", async () => {
    const { buyer, serviceId } = await market(100)
    const client = await a2aClient(buyer)
    const apart = () => new Promise((r) => setTimeout(r, 5))
    const send = async (text: string) => {
      const task = seen(await client.sendMessage(buyRequest(serviceId, { text }, true)))
      await apart()
      return task.id
    }
    const bought = await send("bought at once")
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const declined = await send("declined")
    const approved = await send("approved")
    const withdrawn = await send("withdrawn")
    const waiting = await send("waiting")
    const owner = { cookie: buyer.cookie!, "content-type": "application/json" }
    const decide = (id: string, how: "approve" | "decline") =>
      fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${id}/${how}`, { method: "POST", headers: owner })
    expect((await decide(declined, "decline")).status).toBe(200)
    expect((await decide(approved, "approve")).status).toBe(200)
    const approvedTx = seen(await client.getTask({ tenant: "", id: approved, historyLength: undefined })).metadata
      .transactionId as string
    expect(approvedTx).toMatch(/^tx_/)
    expect(seen(await client.cancelTask({ tenant: "", id: withdrawn, metadata: undefined })).state).toBe(
      TaskState.TASK_STATE_CANCELED
    )

    const list = (extra: Partial<Parameters<typeof client.listTasks>[0]> = {}) =>
      client.listTasks({ ...emptyList, ...extra })
    // The purchase the approval made is newest (made when the owner approved); the approval itself is
    // not listed again.
    const expected = [
      [approvedTx, TaskState.TASK_STATE_WORKING],
      [waiting, TaskState.TASK_STATE_AUTH_REQUIRED],
      [withdrawn, TaskState.TASK_STATE_CANCELED],
      [declined, TaskState.TASK_STATE_REJECTED],
      [bought, TaskState.TASK_STATE_WORKING]
    ]
    for (const pageSize of [1, 2, 3, 50]) {
      const { got, last } = await walkTaskPages(list, pageSize)
      expect({ pageSize, got }).toEqual({ pageSize, got: expected })
      expect(last).toMatchObject({ nextPageToken: "", totalSize: 5 })
    }
    const byState = async (status: TaskState) => (await list({ status })).tasks.map((t) => t.id)
    expect(await byState(TaskState.TASK_STATE_AUTH_REQUIRED)).toEqual([waiting])
    expect(await byState(TaskState.TASK_STATE_REJECTED)).toEqual([declined])
    expect(await byState(TaskState.TASK_STATE_CANCELED)).toEqual([withdrawn])
    expect(await byState(TaskState.TASK_STATE_WORKING)).toEqual([approvedTx, bought])
    // A task waiting on the owner is its own context.
    expect((await list({ contextId: waiting })).tasks.map((t) => [t.id, t.status?.state])).toEqual([
      [waiting, TaskState.TASK_STATE_AUTH_REQUIRED]
    ])
    // Another agent of another account lists none of them.
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await (await a2aClient(stranger)).listTasks({ ...emptyList })).tasks).toEqual([])
  })

  it("CancelTask of a buy waiting on its seller: cancelled, the price back in full; again, the same; the seller's late answer refused; of an ended one, TaskNotCancelable", async () => {
    const { seller, buyer, serviceId } = await market(600)
    const client = await a2aClient(buyer)
    const task = seen(await client.sendMessage(buyRequest(serviceId, { text: "never mind" }, true)))
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_400, heldCents: 600 })

    const cancelled = seen(await client.cancelTask({ tenant: "", id: task.id, metadata: undefined }))
    expect(cancelled).toMatchObject({ id: task.id, state: TaskState.TASK_STATE_CANCELED, artifacts: [] })
    expect(cancelled.transaction).toMatchObject({ status: "failed", sellerCents: 0, delivery: { success: false } })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    expect(seen(await client.getTask({ tenant: "", id: task.id, historyLength: undefined })).state).toBe(
      TaskState.TASK_STATE_CANCELED
    )
    // Again: the same task, no second refund.
    expect(seen(await client.cancelTask({ tenant: "", id: task.id, metadata: undefined })).state).toBe(
      TaskState.TASK_STATE_CANCELED
    )
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    expect((await call(seller, "POST", `${C}/orders/${task.id}/deliver`, { output: "late" })).status).toBe(409)
    expect(await wallet(seller)).toMatchObject({ balanceCents: 0 })
    expect(
      (await client.listTasks({ ...emptyList, status: TaskState.TASK_STATE_CANCELED })).tasks.map((t) => t.id)
    ).toEqual([task.id])

    // An ended task cannot be cancelled: it keeps what it came to.
    const done = seen(await client.sendMessage(buyRequest(serviceId, { text: "keep" }, true)))
    expect((await call(seller, "POST", `${C}/orders/${done.id}/deliver`, { output: "kept" })).status).toBe(200)
    await expect(client.cancelTask({ tenant: "", id: done.id, metadata: undefined })).rejects.toMatchObject({
      envelopeCode: -32002
    })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 510 })
  })

  it("SendStreamingMessage: a buy from an agent seller streams its working task, the seller's output as the artifact, then completed, and ends", async () => {
    const { seller, buyer, serviceId } = await market(800)
    const client = await a2aClient(buyer)
    const events: Array<{ $case: string; value: Json }> = []
    let delivered: Promise<unknown> | undefined
    for await (const event of client.sendMessageStream(buyRequest(serviceId, { text: "stream me" }))) {
      events.push(event.payload as never)
      // The seller answers only once the buyer holds the working task.
      if (events.length === 1)
        delivered = call(seller, "POST", `${C}/orders/${(event.payload!.value as { id: string }).id}/deliver`, {
          output: { streamed: true }
        })
    }
    expect(await delivered).toMatchObject({ status: 200 })
    expect(events.map((e) => e.$case)).toEqual(["task", "artifactUpdate", "statusUpdate"])
    const [first, artifact, status] = events as [(typeof events)[0], (typeof events)[0], (typeof events)[0]]
    expect(seen(first.value)).toMatchObject({ state: TaskState.TASK_STATE_WORKING, artifacts: [] })
    const id = first.value.id as string
    expect(artifact.value).toMatchObject({ taskId: id, contextId: id, lastChunk: true })
    const sent = artifact.value.artifact as { parts: Array<{ content: unknown }> }
    expect(sent.parts[0]!.content).toEqual({ $case: "data", value: { streamed: true } })
    expect(status.value).toMatchObject({ taskId: id, status: { state: TaskState.TASK_STATE_COMPLETED } })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 680 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_200, heldCents: 0 })

    // A message that needs no task streams as that one message.
    const said: Array<string> = []
    for await (const event of client.sendMessageStream({
      ...buyRequest(serviceId, null),
      message: { ...buyRequest(serviceId, null).message, parts: [textPart("list services")] }
    }))
      said.push(event.payload!.$case)
    expect(said).toEqual(["message"])
  })

  it("SubscribeToTask: a working task now, then its end (failed by the seller); an ended task cannot be subscribed to", async () => {
    const { seller, buyer, serviceId } = await market(200)
    const client = await a2aClient(buyer)
    const task = seen(await client.sendMessage(buyRequest(serviceId, { text: "later" }, true)))
    const states: Array<string> = []
    for await (const event of client.resubscribeTask({ tenant: "", id: task.id })) {
      const payload = event.payload!
      states.push(
        `${payload.$case}:${payload.$case === "task" ? payload.value.status?.state : payload.$case === "statusUpdate" ? payload.value.status?.state : ""}`
      )
      if (states.length === 1) await call(seller, "POST", `${C}/orders/${task.id}/fail`, { error: "out of stock" })
    }
    expect(states).toEqual([`task:${TaskState.TASK_STATE_WORKING}`, `statusUpdate:${TaskState.TASK_STATE_FAILED}`])
    const again = async () => {
      for await (const _ of client.resubscribeTask({ tenant: "", id: task.id })) void _
    }
    await expect(again()).rejects.toMatchObject({ envelopeCode: -32004 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
  })

  it("the seller's side over A2A: list_orders shows the pending order, deliver_order pays it once under a replayed key, fail_order refunds; commerce:sell is needed", async () => {
    const { seller, buyer, serviceId } = await market(1_000)
    const buyerClient = await a2aClient(buyer)
    const sellerClient = await a2aClient(seller)
    const skillCall = async (client: typeof sellerClient, data: Json, idempotencyKey?: string) => {
      const reply = (await client.sendMessage({
        ...buyRequest(serviceId, null),
        message: {
          ...buyRequest(serviceId, null).message,
          parts: [
            {
              content: { $case: "data", value: data },
              metadata: undefined,
              filename: "",
              mediaType: "application/json"
            }
          ],
          metadata: idempotencyKey === undefined ? undefined : { idempotencyKey }
        }
      })) as { parts: Array<{ content?: { $case: string; value: unknown } }>; metadata: Json }
      return {
        meta: reply.metadata,
        data: reply.parts.find((p) => p.content?.$case === "data")?.content?.value as Json
      }
    }
    const first = seen(await buyerClient.sendMessage(buyRequest(serviceId, { text: "deliver me" }, true)))
    const second = seen(await buyerClient.sendMessage(buyRequest(serviceId, { text: "fail me" }, true)))

    const listed = await skillCall(sellerClient, { skill: "list_orders", status: "pending" })
    expect(listed.meta).toMatchObject({ skill: "list_orders", httpStatus: 200, ok: true })
    expect((listed.data.orders as Array<Json>).map((o) => [o.id, o.input])).toEqual([
      [first.id, { text: "deliver me" }],
      [second.id, { text: "fail me" }]
    ])

    const key = `a2a-deliver-${randomBytes(6).toString("hex")}`
    const deliver = { skill: "deliver_order", id: first.id, output: { answer: 42 } }
    const delivered = await skillCall(sellerClient, deliver, key)
    expect(delivered.meta).toMatchObject({ skill: "deliver_order", httpStatus: 200, ok: true })
    expect(delivered.data).toMatchObject({ id: first.id, status: "delivered", output: { answer: 42 } })
    // The same message again (same key) is the first answer: paid once.
    expect((await skillCall(sellerClient, deliver, key)).data).toEqual(delivered.data)
    expect(await wallet(seller)).toMatchObject({ balanceCents: 850 })
    const done = seen(await buyerClient.getTask({ tenant: "", id: first.id, historyLength: undefined }))
    expect(done).toMatchObject({ state: TaskState.TASK_STATE_COMPLETED, artifacts: [{ answer: 42 }] })

    const failed = await skillCall(sellerClient, { skill: "fail_order", id: second.id, error: "cannot" })
    expect(failed.data).toMatchObject({ id: second.id, status: "failed", error: "cannot" })
    expect(seen(await buyerClient.getTask({ tenant: "", id: second.id, historyLength: undefined })).state).toBe(
      TaskState.TASK_STATE_FAILED
    )
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 0 })
    // Answering an ended order is the route's 409, as over REST.
    const late = await skillCall(sellerClient, { skill: "deliver_order", id: second.id, output: "late" })
    expect(late.meta).toMatchObject({ httpStatus: 409, ok: false })

    // Without commerce:sell, as over REST: 403; another seller's order is 404.
    const reader = await createAgentKey(server.baseUrl, ["commerce:read"])
    const refused = await skillCall(await a2aClient(reader), { skill: "list_orders" })
    expect(refused.meta).toMatchObject({ httpStatus: 403, ok: false })
    const other = await createAgentKey(server.baseUrl, ["commerce:*"])
    const notTheirs = await skillCall(await a2aClient(other), { skill: "fail_order", id: first.id, error: "x" })
    expect(notTheirs.meta).toMatchObject({ httpStatus: 404, ok: false })
  })

  it("a buy waiting on the owner's approval is a task: AUTH_REQUIRED, resumed when the owner approves (working, then the seller's output), REJECTED when declined", async () => {
    const { seller, buyer, serviceId } = await market(300)
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const client = await a2aClient(buyer)
    const task = seen(await client.sendMessage(buyRequest(serviceId, { text: "ask first" })))
    expect(task.id).toMatch(/^apr_/)
    expect(task).toMatchObject({ contextId: task.id, state: TaskState.TASK_STATE_AUTH_REQUIRED, artifacts: [] })
    expect(task.metadata).toMatchObject({ skill: "buy", approvalStatus: "pending", httpStatus: 201, ok: true })
    expect(task.text).toMatch(/owner must approve/)
    const get = async (id: string) => seen(await client.getTask({ tenant: "", id, historyLength: undefined }))
    expect((await get(task.id)).state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED)
    // Another agent can neither see it nor cancel it.
    expect((await rpcError(seller, "GetTask", { id: task.id })).code).toBe(-32001)
    expect((await rpcError(seller, "CancelTask", { id: task.id })).code).toBe(-32001)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })

    const owner = { cookie: buyer.cookie!, "content-type": "application/json" }
    const decide = (id: string, how: "approve" | "decline") =>
      fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${id}/${how}`, { method: "POST", headers: owner })
    expect((await decide(task.id, "approve")).status).toBe(200)
    const resumed = await get(task.id)
    expect(resumed).toMatchObject({ id: task.id, state: TaskState.TASK_STATE_WORKING })
    const txId = resumed.metadata.transactionId as string
    expect(txId).toMatch(/^tx_/)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_700, heldCents: 300 })
    expect((await call(seller, "POST", `${C}/orders/${txId}/deliver`, { output: { approved: true } })).status).toBe(200)
    expect(await get(task.id)).toMatchObject({ state: TaskState.TASK_STATE_COMPLETED, artifacts: [{ approved: true }] })

    const declined = seen(await client.sendMessage(buyRequest(serviceId, { text: "no" })))
    expect((await decide(declined.id, "decline")).status).toBe(200)
    expect((await get(declined.id)).state).toBe(TaskState.TASK_STATE_REJECTED)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_700, heldCents: 0 })
    // Decided tasks have ended: nothing to cancel (the approved one's purchase is its own task).
    for (const ended of [declined.id, task.id]) {
      await expect(client.cancelTask({ tenant: "", id: ended, metadata: undefined })).rejects.toMatchObject({
        envelopeCode: -32002
      })
    }
  })

  it("a buy waiting on the owner's approval is the agent's to take back: CancelTask makes it CANCELED, nothing charged, and the owner can no longer approve it", async () => {
    const { buyer, serviceId } = await market(300)
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const client = await a2aClient(buyer)
    const task = seen(await client.sendMessage(buyRequest(serviceId, { text: "never mind" })))
    expect(task.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED)
    const cancelled = seen(await client.cancelTask({ tenant: "", id: task.id, metadata: undefined }))
    expect(cancelled).toMatchObject({ id: task.id, state: TaskState.TASK_STATE_CANCELED })
    expect(cancelled.metadata).toMatchObject({ approvalStatus: "withdrawn" })
    expect(cancelled.text).toMatch(/withdrew/)
    // Again: the same task, still cancelled.
    expect(seen(await client.cancelTask({ tenant: "", id: task.id, metadata: undefined })).state).toBe(
      TaskState.TASK_STATE_CANCELED
    )
    const owner = { cookie: buyer.cookie!, "content-type": "application/json" }
    const approve = await fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${task.id}/approve`, {
      method: "POST",
      headers: owner
    })
    expect(approve.status).toBe(409)
    expect(await approve.json()).toMatchObject({ type: "Conflict", state: "withdrawn" })
    expect(seen(await client.getTask({ tenant: "", id: task.id, historyLength: undefined })).state).toBe(
      TaskState.TASK_STATE_CANCELED
    )
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 10_000, heldCents: 0 })
    // The owner's audit trail says who took it back.
    const audit = await fetch(`${server.baseUrl}/api/dashboard/agents/${buyer.agentId}/audit`, { headers: owner })
    const entries = ((await audit.json()) as { entries: Array<{ action: string; subjectId: string; actor: Json }> })
      .entries
    expect(entries.find((e) => e.subjectId === task.id)).toMatchObject({
      action: "approval.withdrawn",
      actor: { kind: "agent_key" }
    })
  })

  it("a streamed buy waiting on the owner: AUTH_REQUIRED, then WORKING when the owner approves, then the seller's output and COMPLETED; a subscription to another ends REJECTED when declined", async () => {
    const { seller, buyer, serviceId } = await market(400)
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const client = await a2aClient(buyer)
    const owner = { cookie: buyer.cookie!, "content-type": "application/json" }
    const decide = (id: string, how: "approve" | "decline") =>
      fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${id}/${how}`, { method: "POST", headers: owner })
    const events: Array<string> = []
    const seenEvents: Array<{ $case: string; value: Json }> = []
    const answered: Array<number> = []
    let taskId = ""
    let txId = ""
    for await (const event of client.sendMessageStream(buyRequest(serviceId, { text: "ask, then stream" }))) {
      const p = event.payload!
      const state =
        p.$case === "task" ? p.value.status?.state : p.$case === "statusUpdate" ? p.value.status?.state : undefined
      events.push(`${p.$case}:${state ?? ""}`)
      seenEvents.push(p as never)
      // The owner approves only once the buyer holds the waiting task…
      if (p.$case === "task") {
        taskId = p.value.id
        answered.push((await decide(taskId, "approve")).status)
      }
      // …and the seller delivers only once the buyer has seen it under way.
      if (p.$case === "statusUpdate" && state === TaskState.TASK_STATE_WORKING) {
        txId = (p.value.metadata as Json).transactionId as string
        answered.push(
          (await call(seller, "POST", `${C}/orders/${txId}/deliver`, { output: { approved: "then done" } })).status
        )
      }
    }
    expect(answered).toEqual([200, 200])
    expect(seenEvents.slice(1).map((e) => e.value.taskId)).toEqual([taskId, taskId, taskId])
    const artifact = seenEvents[2]!.value.artifact as { parts: Array<{ content: unknown }> }
    expect(artifact.parts[0]!.content).toEqual({ $case: "data", value: { approved: "then done" } })
    expect(taskId).toMatch(/^apr_/)
    expect(txId).toMatch(/^tx_/)
    expect(events).toEqual([
      `task:${TaskState.TASK_STATE_AUTH_REQUIRED}`,
      `statusUpdate:${TaskState.TASK_STATE_WORKING}`,
      "artifactUpdate:",
      `statusUpdate:${TaskState.TASK_STATE_COMPLETED}`
    ])
    expect(await wallet(seller)).toMatchObject({ balanceCents: 340 })

    // SubscribeToTask of a waiting approval: its task now, then REJECTED when the owner declines.
    const waiting = seen(await client.sendMessage(buyRequest(serviceId, { text: "no" })))
    const states: Array<string> = []
    const declined: Array<number> = []
    for await (const event of client.resubscribeTask({ tenant: "", id: waiting.id })) {
      const p = event.payload!
      states.push(`${p.$case}:${p.$case === "task" || p.$case === "statusUpdate" ? p.value.status?.state : ""}`)
      if (states.length === 1) declined.push((await decide(waiting.id, "decline")).status)
    }
    expect(declined).toEqual([200])
    expect(states).toEqual([
      `task:${TaskState.TASK_STATE_AUTH_REQUIRED}`,
      `statusUpdate:${TaskState.TASK_STATE_REJECTED}`
    ])
    // Decided, it has ended: no subscription.
    expect((await rpcError(buyer, "SubscribeToTask", { id: waiting.id })).code).toBe(-32004)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_600, heldCents: 0 })
  })

  it("GetExtendedAgentCard with a key: the card for the caller, its skills those its key may call", async () => {
    // The stock client's getAgentCard asks for the extended card (GetExtendedAgentCard) when the public one says it is served.
    const reader = await createAgentKey(server.baseUrl, ["commerce:read"])
    const card = await (await a2aClient(reader)).getAgentCard()
    expect(card.skills.map((s) => s.id)).toEqual(["browse_services", "check_transaction"])
    expect(card.description).toContain("agent agt_")
    expect(card.capabilities).toMatchObject({ streaming: true, extendedAgentCard: true })
    const all = await createAgentKey(server.baseUrl, ["commerce:*"])
    const full = await (await a2aClient(all)).getAgentCard()
    expect(full.skills).toHaveLength(8)
  })
})
