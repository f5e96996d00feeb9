// A2A 1.0 tasks for purchase sagas (docs/a2a.md "Tasks: a saga"), with the stock @a2a-js/sdk client,
// on every storage. What a buyer is promised: the buy_saga skill starts the saga through the route
// REST uses and answers a Task named by the saga; its state is the saga's at every read (working
// while a step waits, completed with the seller's output as the artifact, failed when compensated,
// with the failed step and its reason), each step's state in the task's metadata; the price is
// charged once, or given back to the cent; the saga is listed among the buyer's tasks (once: not
// again as its transaction), streamed and subscribed to its end, told to a push configuration when
// it ends; a saga cannot be cancelled (TaskNotCancelable). And the saga store's page of a buyer's
// sagas on every storage.
import { TaskState } from "@a2a-js/sdk"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { sagaSteps, type SagaRecord } from "../../src/schema/saga/saga.js"
import { SagaStore } from "../../src/services/saga/SagaStore.js"
import { Transactor } from "../../src/services/platform/Db.js"
import { a2aClientAt, dataMessage, seenTask, walkTaskPages } from "../fixtures/a2aClient.js"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { agentApi, pullMarket } from "../fixtures/agentMarket.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { eventually } from "../fixtures/wait.js"

const C = "/api/v1/agent/commerce"
const ORDER_WAIT_MS = 1_500
type Json = Record<string, unknown>

let server: RuntimeServer

const a2aClient = (k: AgentKey) => a2aClientAt(server.baseUrl, k.auth)
const call = (...args: Parameters<ReturnType<typeof agentApi>>) => agentApi(server.baseUrl)(...args)
const wallet = async (k: AgentKey) =>
  (await call(k, "GET", `${C}/wallet`)).body as { balanceCents: number; heldCents: number }

/** A message whose data part is `data`; `returnImmediately` as the request's configuration. */
const message = (
  data: Json,
  options: { readonly returnImmediately?: boolean; readonly idempotencyKey?: string } = {}
) =>
  dataMessage(data, {
    returnImmediately: options.returnImmediately,
    metadata: options.idempotencyKey === undefined ? undefined : { idempotencyKey: options.idempotencyKey }
  })
const sagaRequest = (serviceId: string, tierId: string, input: unknown, options: Parameters<typeof message>[1] = {}) =>
  message({ skill: "buy_saga", serviceId, tierId, input }, options)

/** The task as a client sees it, its data part the saga. */
const seen = (result: unknown) => {
  const task = seenTask(result)
  return { ...task, saga: task.data }
}
const stepsOf = (states: ReadonlyArray<string>) => Object.fromEntries(sagaSteps.map((s, i) => [s, states[i]]))

/** The raw JSON-RPC answer of `method` (for what the stock client does not send). */
const rpc = async (k: AgentKey, method: string, params: Json) => {
  const res = await fetch(`${server.baseUrl}/a2a`, {
    method: "POST",
    headers: { ...k.auth, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params })
  })
  return (await res.json()) as { result?: Json; error?: { code: number; message: string; data?: Json } }
}

const emptyList = {
  tenant: "",
  contextId: "",
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: "",
  statusTimestampAfter: undefined
}

/** A seller agent with a pull service at `priceCents`, and a buyer with `fundCents` (default $100). */
const market = (priceCents = 1_000, fundCents?: number) =>
  pullMarket(server.baseUrl, { priceCents, name: "Saga work", ...(fundCents === undefined ? {} : { fundCents }) })

/** A client's push notification endpoint: the bodies it received, by path. */
const receiver = async () => {
  const received: Array<{ path: string; task: Json & { id: string; status: { state: string } } }> = []
  const http: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ path: req.url ?? "", ...(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { task: never }) })
      res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  return {
    received,
    url: (path: string) => `${base}${path}`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}
let hook: Awaited<ReturnType<typeof receiver>>

// Most of the time is the sagas' waits (the order, ORDER_WAIT_MS, the notifier's recheck); each test has its own agents.
describeEachStorage("A2A 1.0 tasks for purchase sagas", { concurrent: "tests" }, (storage) => {
  beforeAll(async () => {
    hook = await receiver()
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, orderWaitMs: ORDER_WAIT_MS }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await hook?.close()
  })

  it("a saga on a platform seller: a completed task named by the saga, its output the artifact, the price charged once; the same message again is the same saga", async () => {
    const { buyer } = await market()
    const client = await a2aClient(buyer)
    const key = `a2a-saga-${randomBytes(6).toString("hex")}`
    const input = { url: "https://example.com" }
    const done = seen(
      await client.sendMessage(sagaRequest("svc_web_scrape", "rendered", input, { idempotencyKey: key }))
    )
    expect(done.id).toMatch(/^saga_/)
    expect(done.contextId).toBe(done.id)
    expect(done.state).toBe(TaskState.TASK_STATE_COMPLETED)
    // The task's saga is the one REST shows, and its output is the artifact.
    const rest = (await call(buyer, "GET", `${C}/saga/${done.id}`)).body
    expect(done.saga).toEqual(rest)
    expect(rest).toMatchObject({ status: "completed", priceCents: 6, settlement: { sellerCents: 5, feeCents: 1 } })
    expect(rest.output).not.toBeNull()
    expect(done.artifacts).toEqual([rest.output])
    expect(done.metadata).toMatchObject({
      skill: "buy_saga",
      httpStatus: 201,
      ok: true,
      sagaStatus: "completed",
      currentStep: null,
      transactionId: rest.transactionId,
      steps: stepsOf(["succeeded", "succeeded", "succeeded", "succeeded", "succeeded"])
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_994, heldCents: 0 })

    // The same message again (same Idempotency-Key): the same saga, nothing charged again.
    const replay = seen(
      await client.sendMessage(sagaRequest("svc_web_scrape", "rendered", input, { idempotencyKey: key }))
    )
    expect(replay).toMatchObject({ id: done.id, state: TaskState.TASK_STATE_COMPLETED, artifacts: [rest.output] })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_994, heldCents: 0 })
    const got = seen(await client.getTask({ tenant: "", id: done.id, historyLength: undefined }))
    expect(got).toMatchObject({ id: done.id, state: TaskState.TASK_STATE_COMPLETED, artifacts: [rest.output] })
    // A message that names no task (a refusal) stays a message: an unknown tier is the route's 404.
    const refused = (await client.sendMessage(sagaRequest("svc_web_scrape", "nope", input))) as { metadata: Json }
    expect(refused.metadata).toMatchObject({ skill: "buy_saga", httpStatus: 404, ok: false })
  })

  it("a saga on an agent seller: WORKING while deliver waits on the order (steps in the metadata), COMPLETED once the seller delivers over A2A; the seller is paid 85 %", async () => {
    const { seller, buyer, serviceId } = await market(1_000)
    const client = await a2aClient(buyer)
    const started = seen(
      await client.sendMessage(sagaRequest(serviceId, "unit", { text: "saga me" }, { returnImmediately: true }))
    )
    expect(started.id).toMatch(/^saga_/)
    expect(started.state).toBe(TaskState.TASK_STATE_WORKING)
    expect(started.artifacts).toEqual([])
    expect(started.metadata).toMatchObject({
      skill: "buy_saga",
      sagaStatus: "running",
      currentStep: "deliver",
      steps: stepsOf(["succeeded", "succeeded", "running", "pending", "pending"])
    })
    const orderId = started.metadata.transactionId as string
    expect(orderId).toMatch(/^tx_/)
    expect(started.text).toContain(orderId)
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 1_000 })
    expect(seen(await client.getTask({ tenant: "", id: started.id, historyLength: undefined })).state).toBe(
      TaskState.TASK_STATE_WORKING
    )

    // The seller delivers over A2A (deliver_order): the saga settles, the task completes.
    const output = { words: 2, by: "the seller" }
    const delivered = (await (
      await a2aClient(seller)
    ).sendMessage(message({ skill: "deliver_order", id: orderId, output }))) as { metadata: Json }
    expect(delivered.metadata).toMatchObject({ skill: "deliver_order", httpStatus: 200, ok: true })
    const done = await eventually(
      async () => seen(await client.getTask({ tenant: "", id: started.id, historyLength: undefined })),
      (t) => t.state !== TaskState.TASK_STATE_WORKING
    )
    expect(done.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(done.artifacts).toEqual([output])
    expect(done.metadata).toMatchObject({
      sagaStatus: "completed",
      steps: stepsOf(["succeeded", "succeeded", "succeeded", "succeeded", "succeeded"])
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_000, heldCents: 0 })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 850 })

    // By default the answer waits for the seller up to ORDER_WAIT_MS, then answers the saga as it stands.
    const before = Date.now()
    const slow = seen(await client.sendMessage(sagaRequest(serviceId, "unit", { text: "later" })))
    expect(Date.now() - before).toBeGreaterThanOrEqual(ORDER_WAIT_MS - 100)
    expect(slow).toMatchObject({ state: TaskState.TASK_STATE_WORKING, metadata: { currentStep: "deliver" } })
    // Delivered while the answer waits: the answer is the completed task. The seller first delivers
    // the order still pending from the answer above, then takes the next one from its list as it
    // arrives (the long poll, as a2a-tasks' seller does): polling the list until the order showed up
    // took longer than ORDER_WAIT_MS once in a loaded CI run.
    const pendingNow = (await call(seller, "GET", `${C}/orders?status=pending`)).body.orders as Array<{
      id: string
      input: Json
    }>
    expect(pendingNow.map((o) => o.input)).toEqual([{ text: "later" }])
    expect((await call(seller, "POST", `${C}/orders/${pendingNow[0]!.id}/deliver`, { output: {} })).status).toBe(200)
    const serving = (async () => {
      const list = await call(seller, "GET", `${C}/orders?status=pending&waitMs=5000`)
      const [order] = list.body.orders as Array<{ id: string; input: Json }>
      expect(order!.input).toEqual({ text: "now" })
      await call(seller, "POST", `${C}/orders/${order!.id}/deliver`, { output: { now: true } })
    })()
    const answered = seen(await client.sendMessage(sagaRequest(serviceId, "unit", { text: "now" })))
    await serving
    expect(answered).toMatchObject({ state: TaskState.TASK_STATE_COMPLETED, artifacts: [{ now: true }] })
  })

  it("a seller that fails: FAILED with the failed step and its reason, the buyer's balance restored to the cent; a simulated failure too", async () => {
    const { seller, buyer, serviceId } = await market(777, 20_000)
    const client = await a2aClient(buyer)
    const started = seen(
      await client.sendMessage(sagaRequest(serviceId, "unit", { text: "" }, { returnImmediately: true }))
    )
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 19_223, heldCents: 777 })
    const orderId = started.metadata.transactionId as string
    expect((await call(seller, "POST", `${C}/orders/${orderId}/fail`, { error: "input.text is empty" })).status).toBe(
      200
    )
    const failed = await eventually(
      async () => seen(await client.getTask({ tenant: "", id: started.id, historyLength: undefined })),
      (t) => t.state !== TaskState.TASK_STATE_WORKING
    )
    expect(failed.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(failed.artifacts).toEqual([])
    expect(failed.text).toMatch(/^Failed at step deliver: .*input\.text is empty.*nothing was charged/)
    expect(failed.saga).toMatchObject({ status: "compensated", failure: { step: "deliver" } })
    expect(failed.metadata).toMatchObject({
      sagaStatus: "compensated",
      failure: { step: "deliver" },
      steps: stepsOf(["compensated", "compensated", "failed", "skipped", "skipped"])
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 20_000, heldCents: 0 })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 0 })

    // A platform seller's simulated failure: failed in the answer, nothing charged.
    const simulated = seen(await client.sendMessage(sagaRequest("svc_code_review", "org", { simulate: "fail" })))
    expect(simulated).toMatchObject({
      state: TaskState.TASK_STATE_FAILED,
      metadata: { failure: { step: "deliver", reason: "the seller reported a delivery failure (simulated)" } }
    })
    expect(simulated.text).toBe(
      "Failed at step deliver: the seller reported a delivery failure (simulated). Compensated: nothing was charged."
    )
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 20_000, heldCents: 0 })
  })

  it("a saga task is its buyer's; CancelTask answers TaskNotCancelable and changes nothing", async () => {
    const { seller, buyer, serviceId } = await market(400)
    const client = await a2aClient(buyer)
    const task = seen(
      await client.sendMessage(sagaRequest(serviceId, "unit", { text: "keep" }, { returnImmediately: true }))
    )
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    for (const k of [seller, stranger])
      await expect(
        (await a2aClient(k)).getTask({ tenant: "", id: task.id, historyLength: undefined })
      ).rejects.toMatchObject({ envelopeCode: -32001 })
    expect((await rpc(buyer, "GetTask", { id: "saga_does_not_exist" })).error?.code).toBe(-32001)
    expect((await rpc(stranger, "CancelTask", { id: task.id })).error?.code).toBe(-32001)
    expect((await rpc(stranger, "SubscribeToTask", { id: task.id })).error?.code).toBe(-32001)

    // Running: not cancelable; the saga goes on, the price still held.
    const refused = await rpc(buyer, "CancelTask", { id: task.id })
    expect(refused.error).toMatchObject({ code: -32002, data: { state: "TASK_STATE_WORKING", currentStep: "deliver" } })
    expect(refused.error?.message).toMatch(/cannot be cancelled: a saga runs to its end on its own/)
    await expect(client.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toMatchObject({
      envelopeCode: -32002
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_600, heldCents: 400 })
    expect(seen(await client.getTask({ tenant: "", id: task.id, historyLength: undefined })).state).toBe(
      TaskState.TASK_STATE_WORKING
    )
    // Its order is the saga's: the transaction's task cannot be cancelled either.
    const orderId = task.metadata.transactionId as string
    expect((await rpc(buyer, "CancelTask", { id: orderId })).error?.code).toBe(-32002)
    expect((await call(seller, "POST", `${C}/orders/${orderId}/deliver`, { output: "kept" })).status).toBe(200)
    await eventually(
      async () => seen(await client.getTask({ tenant: "", id: task.id, historyLength: undefined })).state,
      (s) => s === TaskState.TASK_STATE_COMPLETED
    )
    // Ended: not cancelable, and it keeps what it came to.
    const ended = await rpc(buyer, "CancelTask", { id: task.id })
    expect(ended.error).toMatchObject({ code: -32002, data: { state: "TASK_STATE_COMPLETED" } })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_600, heldCents: 0 })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 340 })
  })

  it("ListTasks: sagas among the buyer's tasks (not again as their transactions), newest first, each once whatever the page size; by state; contextId", async () => {
    const { seller, buyer, serviceId } = await market(100)
    const client = await a2aClient(buyer)
    const apart = () => new Promise((r) => setTimeout(r, 5))
    const send = async (data: Json) => {
      const task = seen(await client.sendMessage(message(data, { returnImmediately: true })))
      await apart()
      return task
    }
    const bought = await send({ skill: "buy", serviceId, tierId: "unit", input: { text: "a buy" } })
    const completed = await send({ skill: "buy_saga", serviceId: "svc_web_scrape", tierId: "rendered" })
    const waiting = await send({ skill: "buy_saga", serviceId, tierId: "unit", input: { text: "waits" } })
    const compensated = await send({
      skill: "buy_saga",
      serviceId: "svc_code_review",
      tierId: "org",
      input: { simulate: "fail" }
    })
    expect(compensated.state).toBe(TaskState.TASK_STATE_FAILED)
    const delivered = await send({ skill: "buy_saga", serviceId, tierId: "unit", input: { text: "delivered" } })
    expect(
      (
        await call(seller, "POST", `${C}/orders/${delivered.metadata.transactionId as string}/deliver`, {
          output: { d: 1 }
        })
      ).status
    ).toBe(200)
    await eventually(
      async () => seen(await client.getTask({ tenant: "", id: delivered.id, historyLength: undefined })).state,
      (s) => s === TaskState.TASK_STATE_COMPLETED
    )
    // Each saga's purchase is a transaction of the buyer's (REST lists it) …
    const transactions = (await call(buyer, "GET", `${C}/transactions?role=buyer`)).body.data as Array<{ id: string }>
    for (const saga of [completed, waiting, delivered])
      expect(transactions.map((t) => t.id)).toContain(saga.metadata.transactionId)

    const list = (extra: Partial<Parameters<typeof client.listTasks>[0]> = {}) =>
      client.listTasks({ ...emptyList, ...extra })
    // … but a task is listed once: the saga, not its transaction.
    const expected = [
      [delivered.id, TaskState.TASK_STATE_COMPLETED],
      [compensated.id, TaskState.TASK_STATE_FAILED],
      [waiting.id, TaskState.TASK_STATE_WORKING],
      [completed.id, TaskState.TASK_STATE_COMPLETED],
      [bought.id, TaskState.TASK_STATE_WORKING]
    ]
    for (const pageSize of [1, 2, 3, 50]) {
      const { got, last } = await walkTaskPages(list, pageSize)
      expect({ pageSize, got }).toEqual({ pageSize, got: expected })
      expect(last).toMatchObject({ nextPageToken: "", totalSize: 5 })
    }
    const byState = async (status: TaskState) => (await list({ status })).tasks.map((t) => t.id)
    expect(await byState(TaskState.TASK_STATE_WORKING)).toEqual([waiting.id, bought.id])
    expect(await byState(TaskState.TASK_STATE_COMPLETED)).toEqual([delivered.id, completed.id])
    expect(await byState(TaskState.TASK_STATE_FAILED)).toEqual([compensated.id])
    expect(await byState(TaskState.TASK_STATE_AUTH_REQUIRED)).toEqual([])
    // Artifacts only when asked: the seller's output of the delivered saga.
    const withOutput = await list({ status: TaskState.TASK_STATE_COMPLETED, includeArtifacts: true })
    expect(withOutput.tasks.map((t) => seen(t).artifacts)).toEqual([[{ d: 1 }], [completed.saga.output]])
    expect((await list({ status: TaskState.TASK_STATE_COMPLETED })).tasks.every((t) => t.artifacts.length === 0)).toBe(
      true
    )
    // contextId: a saga task is its own context.
    expect((await list({ contextId: waiting.id })).tasks.map((t) => [t.id, seen(t).metadata.currentStep])).toEqual([
      [waiting.id, "deliver"]
    ])
    // Another agent lists none of them.
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect((await (await a2aClient(stranger)).listTasks({ ...emptyList })).tasks).toEqual([])
  })

  it("SendStreamingMessage follows a saga to its end (artifact, then COMPLETED); SubscribeToTask follows one to FAILED; an ended saga streams as its one task and cannot be subscribed to", async () => {
    const { seller, buyer, serviceId } = await market(800)
    const client = await a2aClient(buyer)
    const events: Array<{ $case: string; value: Json }> = []
    let delivered: Promise<unknown> | undefined
    for await (const event of client.sendMessageStream(sagaRequest(serviceId, "unit", { text: "stream me" }))) {
      events.push(event.payload as never)
      // The seller answers only once the buyer holds the working task.
      if (events.length === 1) {
        const orderId = (event.payload!.value as { metadata: Json }).metadata.transactionId as string
        delivered = call(seller, "POST", `${C}/orders/${orderId}/deliver`, { output: { streamed: true } })
      }
    }
    expect(await delivered).toMatchObject({ status: 200 })
    const cases = events.map((e) => e.$case)
    expect(cases[0]).toBe("task")
    expect(cases.slice(-2)).toEqual(["artifactUpdate", "statusUpdate"])
    const first = events[0]!
    const id = first.value.id as string
    expect(seen(first.value)).toMatchObject({
      state: TaskState.TASK_STATE_WORKING,
      metadata: { currentStep: "deliver" }
    })
    // Between them, only working updates as the steps move.
    for (const e of events.slice(1, -2))
      expect(e).toMatchObject({
        $case: "statusUpdate",
        value: { taskId: id, status: { state: TaskState.TASK_STATE_WORKING } }
      })
    const [artifact, status] = events.slice(-2) as [(typeof events)[0], (typeof events)[0]]
    expect(artifact.value).toMatchObject({ taskId: id, contextId: id, lastChunk: true })
    expect((artifact.value.artifact as { parts: Array<{ content: unknown }> }).parts[0]!.content).toEqual({
      $case: "data",
      value: { streamed: true }
    })
    expect(status.value).toMatchObject({
      taskId: id,
      status: { state: TaskState.TASK_STATE_COMPLETED },
      metadata: { sagaStatus: "completed" }
    })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_200, heldCents: 0 })
    expect(await wallet(seller)).toMatchObject({ balanceCents: 680 })

    // SubscribeToTask: the working saga now, then its end when the seller fails it.
    const task = seen(
      await client.sendMessage(sagaRequest(serviceId, "unit", { text: "fail me" }, { returnImmediately: true }))
    )
    const states: Array<string> = []
    for await (const event of client.resubscribeTask({ tenant: "", id: task.id })) {
      const payload = event.payload!
      if (payload.$case === "task") states.push(`task:${payload.value.status?.state}`)
      if (payload.$case === "statusUpdate") states.push(`statusUpdate:${payload.value.status?.state}`)
      if (states.length === 1)
        await call(seller, "POST", `${C}/orders/${task.metadata.transactionId as string}/fail`, { error: "no" })
    }
    expect(states).toEqual([`task:${TaskState.TASK_STATE_WORKING}`, `statusUpdate:${TaskState.TASK_STATE_FAILED}`])
    const again = async () => {
      for await (const _ of client.resubscribeTask({ tenant: "", id: task.id })) void _
    }
    await expect(again()).rejects.toMatchObject({ envelopeCode: -32004 })
    expect(await wallet(buyer)).toMatchObject({ balanceCents: 9_200, heldCents: 0 })

    // A saga that ended in its own answer (a platform seller's) streams as that one task.
    const once: Array<{ $case: string; value: Json }> = []
    for await (const event of client.sendMessageStream(sagaRequest("svc_web_scrape", "rendered", null)))
      once.push(event.payload as never)
    expect(once.map((e) => [e.$case, seen(e.value).state])).toEqual([["task", TaskState.TASK_STATE_COMPLETED]])
  })

  it("SubscribeToTask of a saga's purchase (its transaction's task) waits for the saga to settle it: COMPLETED, with no burst of keep-alives between the seller's answer and the settle", async () => {
    const { seller, buyer, serviceId } = await market(300)
    const client = await a2aClient(buyer)
    const task = seen(
      await client.sendMessage(sagaRequest(serviceId, "unit", { text: "by its tx" }, { returnImmediately: true }))
    )
    const orderId = task.metadata.transactionId as string
    const res = await fetch(`${server.baseUrl}/a2a`, {
      method: "POST",
      headers: { ...buyer.auth, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "SubscribeToTask", params: { id: orderId } })
    })
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    let delivered: number | undefined
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      // The seller delivers once the buyer holds the first event (the working task).
      if (delivered === undefined && text.includes("\n\n"))
        delivered = (await call(seller, "POST", `${C}/orders/${orderId}/deliver`, { output: { tx: 1 } })).status
    }
    expect(delivered).toBe(200)
    const events = text
      .split("\n\n")
      .filter((e) => e.startsWith("data: "))
      .map((e) => (JSON.parse(e.slice(6)) as { result: Json }).result)
    expect(events.map((e) => Object.keys(e)[0])).toEqual(["task", "artifactUpdate", "statusUpdate"])
    expect(events[2]).toMatchObject({ statusUpdate: { taskId: orderId, status: { state: "TASK_STATE_COMPLETED" } } })
    // The order ended before the saga settled its transaction: the stream waited for it, not spun.
    expect(text).not.toContain(": keep-alive")
  })

  it("a push notification configuration on a saga task is told once when the saga ends, with its output", async () => {
    const { seller, buyer, serviceId } = await market(500)
    const client = await a2aClient(buyer)
    const task = seen(
      await client.sendMessage(sagaRequest(serviceId, "unit", { text: "tell" }, { returnImmediately: true }))
    )
    const path = `/saga-${randomBytes(4).toString("hex")}`
    const made = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId: task.id,
      url: hook.url(path),
      token: "tok-saga",
      authentication: undefined
    })
    expect(made).toMatchObject({ taskId: task.id, token: "tok-saga" })
    // Not told while the saga waits on its seller.
    await new Promise((r) => setTimeout(r, 1_200))
    expect(hook.received.filter((r) => r.path === path)).toEqual([])
    const output = { told: true }
    expect(
      (await call(seller, "POST", `${C}/orders/${task.metadata.transactionId as string}/deliver`, { output })).status
    ).toBe(200)
    const told = await eventually(
      () => hook.received.filter((r) => r.path === path),
      (r) => r.length > 0
    )
    // The task exactly as GetTask answers it (proto JSON), the seller's output its artifact.
    expect(told[0]!.task).toMatchObject({
      id: task.id,
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ artifactId: "output", parts: [{ data: output }] }],
      metadata: { skill: "buy_saga", sagaStatus: "completed" }
    })
    expect(told[0]!.task).toEqual((await rpc(buyer, "GetTask", { id: task.id })).result)
    // Told once: a second pass of the worker sends nothing more.
    await new Promise((r) => setTimeout(r, 1_200))
    expect(hook.received.filter((r) => r.path === path)).toHaveLength(1)
    // Another agent cannot put a configuration on it.
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect(
      (await rpc(stranger, "CreateTaskPushNotificationConfig", { taskId: task.id, url: hook.url(path) })).error?.code
    ).toBe(-32001)
  })

  it("the saga store pages a buyer's sagas newest first, ids in byte order at one time, and names the sagas of its transactions", async () => {
    const buyer = `agent_page_${randomBytes(4).toString("hex")}`
    const at = "2026-01-02T03:04:05.000Z"
    const record = (id: string, createdAt: string, transactionId: string | null): SagaRecord => ({
      id,
      buyerAgentId: buyer,
      accountId: "acct_page",
      sellerAgentId: "agent_seller",
      serviceId: "svc_web_scrape",
      tierId: "rendered",
      input: null,
      negotiationId: null,
      priceCents: 6,
      snapshot: null,
      transactionId,
      status: "compensated",
      steps: sagaSteps.map((name) => ({
        name,
        status: "skipped" as const,
        startedAt: null,
        finishedAt: null,
        compensatedAt: null,
        detail: null
      })),
      failure: { step: "quote", reason: "test" },
      output: null,
      nextRunAt: null,
      deliverDueAt: null,
      createdAt,
      updatedAt: createdAt,
      finishedAt: createdAt
    })
    const tag = randomBytes(3).toString("hex")
    // Byte order: "B" (0x42) < "a" (0x61); a locale's collation would put "a" first.
    const rows = [
      record(`saga_${tag}_old`, "2026-01-01T00:00:00.000Z", null),
      record(`saga_${tag}_a`, at, `tx_${tag}_a`),
      record(`saga_${tag}_B`, at, null),
      record(`saga_${tag}_new`, "2026-01-03T00:00:00.000Z", `tx_${tag}_new`)
    ]
    const other = { ...record(`saga_${tag}_other`, at, `tx_${tag}_other`), buyerAgentId: `${buyer}_other` }
    await server.run(
      Effect.gen(function* () {
        const store = yield* SagaStore
        const { atomically } = yield* Transactor
        // Inserted out of order: the page is the store's order, not the insertion's.
        for (const r of [rows[2]!, rows[3]!, other, rows[0]!, rows[1]!]) yield* atomically(store.insert(r))
      })
    )
    const page = (limit: number, before?: { createdAt: string; id: string }) =>
      server.run(Effect.flatMap(SagaStore, (s) => s.listForBuyer(buyer, limit, before))).then((r) => r.map((x) => x.id))
    const newestFirst = [rows[3]!.id, rows[1]!.id, rows[2]!.id, rows[0]!.id]
    expect(await page(10)).toEqual(newestFirst)
    expect(await page(2)).toEqual(newestFirst.slice(0, 2))
    expect(await page(10, { createdAt: at, id: rows[1]!.id })).toEqual(newestFirst.slice(2))
    expect(await page(1, { createdAt: at, id: rows[2]!.id })).toEqual(newestFirst.slice(3))
    expect(await page(10, { createdAt: rows[0]!.createdAt, id: rows[0]!.id })).toEqual([])
    const owned = await server.run(
      Effect.flatMap(SagaStore, (s) =>
        s.sagasOfTransactions(buyer, [`tx_${tag}_new`, `tx_${tag}_a`, `tx_${tag}_other`, `tx_${tag}_none`])
      )
    )
    expect([...owned].sort((x, y) => (x.sagaId < y.sagaId ? -1 : 1))).toEqual([
      { sagaId: rows[1]!.id, transactionId: `tx_${tag}_a` },
      { sagaId: rows[3]!.id, transactionId: `tx_${tag}_new` }
    ])
    expect(await server.run(Effect.flatMap(SagaStore, (s) => s.sagasOfTransactions(buyer, [])))).toEqual([])
  })
})
