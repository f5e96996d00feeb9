// A2A push notifications with the stock @a2a-js/sdk client, on every storage. What a buyer is
// promised (docs/a2a.md "Push notifications"): when a task of its own ends, the URL it named is told
// once, with the task as GetTask answers it (the seller's output included), carrying the token or
// the credentials it gave; an endpoint that fails is retried; a configuration can be read back
// (without its credentials), listed and deleted; only for its own tasks, to a URL the webhooks'
// policy allows.
import { TaskState } from "@a2a-js/sdk"
import { a2aClientAt, dataMessage } from "../fixtures/a2aClient.js"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type AgentKey, createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { agentApi, pullMarket } from "../fixtures/agentMarket.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"
import { eventually } from "../fixtures/wait.js"
import { Effect } from "effect"
import { PushConfigStore } from "../../src/services/a2a/PushConfigStore.js"

const C = "/api/v1/agent/commerce"
type Json = Record<string, unknown>

let server: RuntimeServer

/**
 * A client's notification endpoint: what it received, and how it answers each path (200 unless told
 * otherwise; by path, as the tests run at once).
 */
interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: { task: Json & { id: string; status: { state: string }; artifacts: Array<Json> } }
  readonly at: number
}
const receiver = async () => {
  const received: Array<Received> = []
  const answers = new Map<string, Array<number>>()
  const http: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Received["body"],
        at: Date.now()
      })
      res.statusCode = answers.get(req.url ?? "")?.shift() ?? 200
      res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  return {
    received,
    answers,
    url: (path: string) => `${base}${path}`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}
let hook: Awaited<ReturnType<typeof receiver>>

const a2aClient = (k: AgentKey) => a2aClientAt(server.baseUrl, k.auth)

const buyRequest = (serviceId: string, text: string) =>
  dataMessage({ skill: "buy", serviceId, tierId: "unit", input: { text } }, { returnImmediately: true })

const call = (...args: Parameters<ReturnType<typeof agentApi>>) => agentApi(server.baseUrl)(...args)

/** A seller with a pull service, and a buyer with $100 (and its A2A client) who buys it. */
const market = async () => {
  const { seller, buyer, serviceId } = await pullMarket(server.baseUrl, { priceCents: 500, name: "Told when done" })
  const client = await a2aClient(buyer)
  const buy = async (text: string) => ((await client.sendMessage(buyRequest(serviceId, text))) as { id: string }).id
  return { seller, buyer, client, buy }
}

/** The raw JSON-RPC answer of `method` (for what the stock client refuses to send). */
const rpc = async (k: AgentKey, method: string, params: Json) => {
  const res = await fetch(`${server.baseUrl}/a2a`, {
    method: "POST",
    headers: { ...k.auth, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params })
  })
  return (await res.json()) as { result?: Json; error?: { code: number; message: string; data?: Json } }
}

const notificationsTo = (path: string) => hook.received.filter((r) => r.path === path)
/** The configuration as the server keeps it (what is due next, and whether it is done). */
const stored = (taskId: string, id: string) => server.run(Effect.flatMap(PushConfigStore, (s) => s.get(taskId, id)))

// Each test waits on the notifier's own clock (its recheck, a retry's backoff): they wait together.
describeEachStorage("A2A push notifications", { concurrent: "tests" }, (storage) => {
  beforeAll(async () => {
    hook = await receiver()
    server = await startRuntimeServer({
      storage,
      config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000, orderWaitMs: 0 }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await hook?.close()
  })

  it("a task's end is told once to the URL the buyer named, with its token and the seller's output; the configuration reads back", async () => {
    const { seller, client, buy } = await market()
    const taskId = await buy("tell me")
    const path = `/done-${randomBytes(4).toString("hex")}`
    const made = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId,
      url: hook.url(path),
      token: "tok-1",
      authentication: undefined
    })
    expect(made).toMatchObject({ taskId, url: hook.url(path), token: "tok-1" })
    expect(made.id).toMatch(/^pnc_/)
    expect(await client.getTaskPushNotificationConfig({ tenant: "", taskId, id: made.id })).toEqual(made)
    expect(
      (await client.listTaskPushNotificationConfig({ tenant: "", taskId, pageSize: 10, pageToken: "" })).configs
    ).toEqual([made])
    // While the task works, nothing is sent: the worker has looked (and will look again), told nothing.
    const looked = await eventually(
      () => stored(taskId, made.id),
      (r) =>
        r !== undefined &&
        (r.doneAt !== null ||
          (r.nextAttemptAt !== r.createdAt && Date.parse(r.nextAttemptAt!) - Date.parse(r.createdAt) < 20_000)),
      { timeoutMs: 10_000 }
    )
    expect(looked).toMatchObject({ doneAt: null, attempts: 0, pushedState: null })
    expect(notificationsTo(path)).toEqual([])

    expect((await call(seller, "POST", `${C}/orders/${taskId}/deliver`, { output: { answer: 42 } })).status).toBe(200)
    const [first] = await eventually(
      () => notificationsTo(path),
      (n) => n.length >= 1,
      { timeoutMs: 10_000 }
    )
    expect(first!.headers["content-type"]).toBe("application/a2a+json")
    expect(first!.headers["x-a2a-notification-token"]).toBe("tok-1")
    expect(first!.headers.authorization).toBeUndefined()
    // The task as GetTask answers it, the seller's output as its artifact.
    const task = first!.body.task
    expect(task).toMatchObject({ id: taskId, contextId: taskId, status: { state: "TASK_STATE_COMPLETED" } })
    expect(JSON.stringify(task.artifacts)).toContain('"answer":42')
    // Acknowledged, it is done: nothing more is due for it.
    expect(
      await eventually(
        () => stored(taskId, made.id),
        (r) => r?.doneAt !== null
      )
    ).toMatchObject({ nextAttemptAt: null, pushedState: "TASK_STATE_COMPLETED", attempts: 0 })

    // Told once: a later task's notification arrives, and the first still has its one.
    const later = await buy("and me")
    const laterPath = `${path}-later`
    await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId: later,
      url: hook.url(laterPath),
      token: "",
      authentication: undefined
    })
    expect((await call(seller, "POST", `${C}/orders/${later}/fail`, { error: "cannot" })).status).toBe(200)
    const [failed] = await eventually(
      () => notificationsTo(laterPath),
      (n) => n.length >= 1,
      { timeoutMs: 10_000 }
    )
    expect(failed!.body.task.status.state).toBe("TASK_STATE_FAILED")
    expect(failed!.headers["x-a2a-notification-token"]).toBeUndefined()
    expect(notificationsTo(path)).toHaveLength(1)
  })

  it("credentials go as Authorization and are not read back; a failing endpoint is retried until it answers 2xx", async () => {
    const { client, buy } = await market()
    const taskId = await buy("cancel me")
    const path = `/auth-${randomBytes(4).toString("hex")}`
    const made = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "my-hook",
      taskId,
      url: hook.url(path),
      token: "",
      authentication: { scheme: "Bearer", credentials: "s3cret" }
    })
    expect(made).toMatchObject({ id: "my-hook", authentication: { scheme: "Bearer", credentials: "" } })
    // The endpoint is down for the first notification.
    hook.answers.set(path, [503])
    expect((await client.cancelTask({ tenant: "", id: taskId, metadata: undefined })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED
    )
    const [down, up] = await eventually(
      () => notificationsTo(path),
      (n) => n.length >= 2,
      { timeoutMs: 15_000 }
    )
    for (const n of [down!, up!]) {
      expect(n.headers.authorization).toBe("Bearer s3cret")
      expect(n.body.task).toMatchObject({ id: taskId, status: { state: "TASK_STATE_CANCELED" } })
    }
    // Retried after the first backoff (1 s), not at once.
    expect(up!.at - down!.at).toBeGreaterThanOrEqual(900)
  })

  it("a buy waiting on the owner is told when the owner decides (declined: REJECTED)", async () => {
    const { buyer, client, buy } = await market()
    expect((await call(buyer, "PATCH", `${C}/wallet`, { autonomyLevel: "manual" })).status).toBe(200)
    const taskId = await buy("ask first")
    expect(taskId).toMatch(/^apr_/)
    const path = `/approval-${randomBytes(4).toString("hex")}`
    await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId,
      url: hook.url(path),
      token: "t",
      authentication: undefined
    })
    const declined = await fetch(`${server.baseUrl}/api/dashboard/commerce/approvals/${taskId}/decline`, {
      method: "POST",
      headers: { cookie: buyer.cookie!, "content-type": "application/json" }
    })
    expect(declined.status).toBe(200)
    const [told] = await eventually(
      () => notificationsTo(path),
      (n) => n.length >= 1,
      { timeoutMs: 10_000 }
    )
    expect(told!.body.task).toMatchObject({ id: taskId, status: { state: "TASK_STATE_REJECTED" } })
  })

  it("an agent's limit of 100 waiting configurations holds when the last place is asked for five times at once", async () => {
    const { buyer, buy } = await market()
    const tasks: Array<string> = []
    for (let i = 0; i < 11; i++) tasks.push(await buy(`task ${i}`))
    const create = (taskId: string, id: string) =>
      rpc(buyer, "CreateTaskPushNotificationConfig", { taskId, id, url: hook.url("/cap") })
    // 99 of 100 places taken (10 on each of nine tasks, 9 on the tenth).
    for (let n = 0; n < 99; n++) expect((await create(tasks[Math.floor(n / 10)]!, `p${n}`)).result).toBeDefined()
    const last = tasks[10]!
    const raced = await Promise.all([0, 1, 2, 3, 4].map((i) => create(last, `race${i}`)))
    expect(raced.filter((r) => r.result !== undefined)).toHaveLength(1)
    expect(raced.filter((r) => r.error?.data?.field === "taskId")).toHaveLength(4)
    const listed = (await rpc(buyer, "ListTaskPushNotificationConfigs", { taskId: last })).result as {
      configs: Array<unknown>
    }
    expect(listed.configs).toHaveLength(1)
  })

  it("only for the caller's own tasks, to an allowed URL, within the limits; deleted, it is gone", async () => {
    const { buyer, buy } = await market()
    const taskId = await buy("mine")
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    const create = (k: AgentKey, params: Json) => rpc(k, "CreateTaskPushNotificationConfig", { taskId, ...params })
    expect((await create(stranger, { url: hook.url("/x") })).error?.code).toBe(-32001)
    expect(
      (await rpc(buyer, "CreateTaskPushNotificationConfig", { taskId: "tx_nope", url: hook.url("/x") })).error
    ).toMatchObject({ code: -32001 })
    expect((await create(buyer, { url: "ftp://example.com/hook" })).error).toMatchObject({
      code: -32602,
      data: { field: "url" }
    })
    expect((await create(buyer, { url: hook.url("/x"), id: "has space" })).error).toMatchObject({
      data: { field: "id" }
    })
    expect(
      (await create(buyer, { url: hook.url("/x"), authentication: { scheme: "Bearer", credentials: "a\nb" } })).error
    ).toMatchObject({ data: { field: "authentication.credentials" } })

    // Ten configurations on a task, no more (replacing one by its id is not one more).
    for (let i = 0; i < 10; i++)
      expect((await create(buyer, { url: hook.url("/x"), id: `c${i}` })).result).toBeDefined()
    expect((await create(buyer, { url: hook.url("/y"), id: "c3" })).result).toMatchObject({ url: hook.url("/y") })
    expect((await create(buyer, { url: hook.url("/x"), id: "c10" })).error).toMatchObject({
      code: -32602,
      data: { field: "taskId" }
    })
    // Another agent can neither read nor delete them.
    expect((await rpc(stranger, "GetTaskPushNotificationConfig", { taskId, id: "c1" })).error?.code).toBe(-32001)
    expect((await rpc(stranger, "DeleteTaskPushNotificationConfig", { taskId, id: "c1" })).error?.code).toBe(-32001)
    expect((await rpc(buyer, "DeleteTaskPushNotificationConfig", { taskId, id: "c1" })).result).toEqual({})
    // Deleting again is no error (a retried delete); reading it is.
    expect((await rpc(buyer, "DeleteTaskPushNotificationConfig", { taskId, id: "c1" })).result).toEqual({})
    expect((await rpc(buyer, "GetTaskPushNotificationConfig", { taskId, id: "c1" })).error?.code).toBe(-32001)
    const listed = (await rpc(buyer, "ListTaskPushNotificationConfigs", { taskId })).result as {
      configs: Array<{ id: string }>
    }
    expect(listed.configs.map((c) => c.id).sort()).toEqual(["c0", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"])
  })
})
