// End to end, on every storage: the /webhook routes, deliveries by the running worker to a
// receiver on 127.0.0.1 that verifies with the `standardwebhooks` library, URL refusals, and (on
// Postgres) a server stopped with undelivered events whose successor delivers them.
import { HttpServer } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { createServer } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppLive } from "../../src/layers/app.js"
import { underContract } from "../fixtures/contract.js"
import { AppConfig, type AppConfigShape } from "../../src/services/platform/AppConfig.js"
import type { EventType } from "../../src/schema/events/events.js"
import { eventTypes } from "../../src/schema/events/events.js"
import { atomically } from "../fixtures/atomically.js"
import { Events } from "../../src/services/events/Events.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { freshDatabase } from "../fixtures/db.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"
import { startServer } from "../fixtures/server.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { eventually } from "../fixtures/wait.js"
import { type Receiver, startReceiver } from "../fixtures/webhookReceiver.js"

const limits = { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 }

const call = (baseUrl: string, method: string, path: string, k: AgentKey | undefined, body?: unknown) =>
  fetch(`${baseUrl}/api/v1/agent${path}`, {
    method,
    headers: { ...(k ? k.auth : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const emitFor = (server: Pick<RuntimeServer, "run">, agentId: string, type: EventType, data: Record<string, unknown>) =>
  server.run(atomically(Effect.flatMap(Events, (e) => e.emit(agentId, type, data))))

// Its longest wait is a failing endpoint's retries; the storages' servers and receivers are their own.
describeEachStorage("webhooks over HTTP", { concurrent: "storages" }, (storage) => {
  let server: RuntimeServer
  let rx: Receiver
  const api = (method: string, path: string, k: AgentKey | undefined, body?: unknown) =>
    call(server.baseUrl, method, path, k, body)
  const deliveries = async (k: AgentKey) =>
    (await (await api("GET", "/webhook/deliveries", k)).json()) as { data: Array<Record<string, unknown>> }

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: limits })
    rx = await startReceiver()
  }, 60_000)
  afterAll(async () => {
    await rx?.close()
    await server?.close()
  })

  it("configure, test ping, a domain event, the delivery log, rotation and delete — the secret shown only twice", async () => {
    rx.received.length = 0
    const k = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
    expect((await api("GET", "/webhook", undefined)).status).toBe(401)
    expect((await api("GET", "/webhook", k)).status).toBe(404)

    const put = await api("PUT", "/webhook", k, { url: rx.url, events: ["wallet.recharged"] })
    expect(put.status).toBe(200)
    const created = await put.json()
    expect(created).toMatchObject({
      created: true,
      webhook: { url: rx.url, events: ["wallet.recharged"], enabled: true, status: "active" }
    })
    const secret: string = created.secret
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    rx.secrets = [secret]

    const getText = await (await api("GET", "/webhook", k)).text()
    expect(getText).not.toContain(secret.slice(6))
    expect(JSON.parse(getText)).not.toHaveProperty("secret")

    const ping = await api("POST", "/webhook/test", k)
    expect(ping.status).toBe(202)
    const { eventId } = await ping.json()
    await rx.waitFor(1)
    expect(rx.received[0]).toMatchObject({
      webhookId: eventId,
      verifiedWith: [secret],
      payload: { id: eventId, type: "webhook.test" }
    })

    const recharge = await emitFor(server, k.agentId, "wallet.recharged", { amountCents: 500, balanceCents: 1500 })
    await emitFor(server, k.agentId, "build.status_changed", {
      projectId: "prj_1",
      status: "queued",
      previousStatus: null,
      progressPercent: 0,
      failureReason: null
    })
    await rx.waitFor(2)
    expect(rx.received[1]).toMatchObject({
      webhookId: recharge.id,
      verifiedWith: [secret],
      payload: { type: "wallet.recharged", data: { amountCents: 500 } }
    })

    const log = await eventually(
      () => deliveries(k),
      (d) => d.data.length === 2
    )
    expect(
      log.data.map((a) => [a.eventId, a.eventType, a.attempt, a.status, a.responseStatus, a.error, a.nextRetryAt])
    ).toEqual([
      [recharge.id, "wallet.recharged", 1, "succeeded", 204, null, null],
      [eventId, "webhook.test", 1, "succeeded", 204, null, null]
    ])
    expect(typeof log.data[0].durationMs).toBe("number")
    const one = await (await api("GET", `/webhook/deliveries?limit=1&eventId=${eventId}`, k)).json()
    expect(one.data.map((a: { eventId: string }) => a.eventId)).toEqual([eventId])
    expect(one.nextCursor).toBeNull()
    // Keyset pages: the first attempt, then the one before it via nextCursor, then the end.
    const first = await (await api("GET", "/webhook/deliveries?limit=1", k)).json()
    expect(first.data.map((a: { id: string }) => a.id)).toEqual([log.data[0].id])
    expect(typeof first.nextCursor).toBe("string")
    const second = await (await api("GET", `/webhook/deliveries?limit=1&cursor=${first.nextCursor}`, k)).json()
    expect(second.data.map((a: { id: string }) => a.id)).toEqual([log.data[1].id])
    expect(second.nextCursor).toBeNull()
    const badCursor = await api("GET", "/webhook/deliveries?cursor=nope", k)
    expect(badCursor.status).toBe(400)
    expect(await badCursor.json()).toMatchObject({ field: "cursor" })
    expect(JSON.stringify(log)).not.toContain(secret.slice(6))

    const update = await (await api("PUT", "/webhook", k, { url: rx.url, events: ["*"] })).json()
    expect(update).toMatchObject({ created: false, webhook: { id: created.webhook.id, events: ["*"] } })
    expect(update).not.toHaveProperty("secret")

    const rotated = await (await api("POST", "/webhook/rotate-secret", k)).json()
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(secret)
    rx.secrets = [secret, rotated.secret]
    await api("POST", "/webhook/test", k)
    await rx.waitFor(3)
    expect(rx.received[2].verifiedWith).toEqual([secret, rotated.secret])

    // Another agent sees only its own webhook.
    const other = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
    expect((await api("GET", "/webhook", other)).status).toBe(404)
    expect((await deliveries(other)).data).toEqual([])

    expect((await api("DELETE", "/webhook", k)).status).toBe(204)
    expect((await api("GET", "/webhook", k)).status).toBe(404)
    expect((await api("DELETE", "/webhook", k)).status).toBe(404)
    expect((await api("POST", "/webhook/test", k)).status).toBe(404)
    expect((await deliveries(k)).data).toEqual([])
    // Every delivery verified, each event accepted once.
    expect([...rx.acceptedCounts().values()].every((n) => n === 1)).toBe(true)
  })

  it("GET /webhook shows a failing endpoint's state, backlog, last error and next probe (documented in OpenAPI); a PUT resumes it", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
    const down = await startReceiver()
    try {
      down.respond = () => 503
      expect((await api("PUT", "/webhook", k, { url: down.url })).status).toBe(200)
      for (let i = 0; i < 5; i++)
        await emitFor(server, k.agentId, "wallet.recharged", { amountCents: 500, balanceCents: i })
      const failing = await eventually(
        async () => (await (await api("GET", "/webhook", k)).json()) as Record<string, unknown>,
        // The outbox hands the five events over on its own schedule: the endpoint can be failing
        // (three refusals) before the last of them is queued behind it (seen under load in CI).
        (w) => w.status === "failing" && w.pendingCount === 5
      )
      expect(failing).toMatchObject({ status: "failing", pendingCount: 5, lastError: "HTTP 503: receiver says 503" })
      expect(failing.consecutiveFailures).toBeGreaterThanOrEqual(3)
      expect(typeof failing.oldestPendingAt).toBe("string")
      expect(typeof failing.lastErrorAt).toBe("string")
      // The backlog waits for the next probe, due after the last failure (when, and that nothing goes
      // out before it, is tested on a controlled clock in test/suites/webhooks-health.test.ts).
      expect(Date.parse(String(failing.nextAttemptAt))).toBeGreaterThan(Date.parse(String(failing.lastErrorAt)))
      expect(failing.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(0)

      const openapi = (await (await fetch(`${server.baseUrl}/api/v1/agent/openapi.json`)).json()) as {
        components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
      }
      const config = Object.entries(openapi.components.schemas).find(([name]) => name.startsWith("WebhookConfig"))?.[1]
      for (const field of [
        "status",
        "consecutiveFailures",
        "lastError",
        "lastErrorAt",
        "pendingCount",
        "oldestPendingAt",
        "oldestPendingAgeSeconds",
        "nextAttemptAt"
      ]) {
        expect(config?.properties, field).toHaveProperty(field)
      }
      expect(JSON.stringify(config?.properties?.status)).toContain("failing")

      // The owner's dashboard reads the same view (session cookie); another account cannot.
      const dash = (cookie: string, agentId: string) =>
        fetch(`${server.baseUrl}/api/dashboard/agents/${agentId}/webhook`, { headers: { cookie } })
      expect(await (await dash(k.cookie, k.agentId)).json()).toMatchObject({
        status: "failing",
        pendingCount: 5,
        lastError: "HTTP 503: receiver says 503"
      })
      const stranger = await createAgentKey(server.baseUrl, ["catalog:read"])
      expect((await dash(stranger.cookie, k.agentId)).status).toBe(404)
      expect(await (await dash(stranger.cookie, stranger.agentId)).json()).toBeNull()

      // Fixed; the owner says so with a PUT: the backlog goes out at once, each event once.
      down.respond = () => 204
      expect((await api("PUT", "/webhook", k, { url: down.url })).status).toBe(200)
      const healthy = await eventually(
        async () => (await (await api("GET", "/webhook", k)).json()) as Record<string, unknown>,
        (w) => w.pendingCount === 0
      )
      expect(healthy).toMatchObject({
        status: "active",
        consecutiveFailures: 0,
        pendingCount: 0,
        oldestPendingAt: null,
        nextAttemptAt: null
      })
      expect(down.acceptedCounts().size).toBe(5)
      expect([...down.acceptedCounts().values()].every((n) => n === 1)).toBe(true)
      expect((await api("DELETE", "/webhook", k)).status).toBe(204)
    } finally {
      await down.close()
    }
  })

  it("a key without webhooks:manage cannot read, point, rotate, test or delete the webhook (403); the event catalogue stays readable", async () => {
    const owner = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
    expect((await api("PUT", "/webhook", owner, { url: rx.url, events: ["wallet.recharged"] })).status).toBe(200)
    // A second, read-only key of the same agent (as a leaked catalogue key would be).
    const readOnly = await fetch(`${server.baseUrl}/api/dashboard/agents/${owner.agentId}/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: owner.cookie },
      body: JSON.stringify({ name: "read-only", permissions: ["catalog:read", "commerce:*"] })
    })
    expect(readOnly.status).toBe(201)
    const leaked = {
      ...owner,
      auth: { authorization: `Bearer ${((await readOnly.json()) as { secret: string }).secret}` }
    }
    for (const [method, path, body] of [
      ["PUT", "/webhook", { url: "https://attacker.example/hook" }],
      ["GET", "/webhook", undefined],
      ["POST", "/webhook/rotate-secret", undefined],
      ["POST", "/webhook/test", undefined],
      ["GET", "/webhook/deliveries", undefined],
      ["DELETE", "/webhook", undefined]
    ] as const) {
      const res = await api(method, path, leaked, body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(await res.json()).toMatchObject({ type: "Forbidden", permission: "webhooks:manage" })
    }
    expect((await api("GET", "/webhook/events", leaked)).status).toBe(200)
    // Nothing changed: the owner's key still sees its own address.
    expect(await (await api("GET", "/webhook", owner)).json()).toMatchObject({ url: rx.url })
    expect((await api("DELETE", "/webhook", owner)).status).toBe(204)
  })

  it("refuses private, link-local, CGNAT and metadata URLs with 400 on the url field", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "http://10.0.0.1/hook",
      "http://192.168.0.10/",
      "http://172.20.0.1/",
      "http://100.64.1.1/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "ftp://example.com/"
    ]) {
      const res = await api("PUT", "/webhook", k, { url })
      expect(res.status, url).toBe(400)
      expect(await res.json(), url).toMatchObject({ type: "InvalidInput", field: "url" })
    }
    expect((await api("PUT", "/webhook", k, { url: rx.url, events: ["no.such_event"] })).status).toBe(400)
    expect((await api("PUT", "/webhook", k, { url: rx.url, events: [] })).status).toBe(400)
    expect((await api("GET", "/webhook", k)).status).toBe(404)
  })

  it("GET /webhook/events serves the catalogue with a JSON Schema per payload", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
    const body = await (await api("GET", "/webhook/events", k)).json()
    expect(body.events.map((e: { type: string }) => e.type)).toEqual([...eventTypes])
    const build = body.events.find((e: { type: string }) => e.type === "build.status_changed")
    expect(build.dataSchema.required).toEqual([
      "projectId",
      "status",
      "previousStatus",
      "progressPercent",
      "failureReason"
    ])
    expect(Object.keys(body.envelope.properties)).toEqual(["id", "type", "timestamp", "data"])
  })
})

describe("webhooks over HTTP without the loopback flag", () => {
  it("a loopback URL, literal or by name, is refused at configuration", async () => {
    const server = await startServer({ config: { ...limits, webhooksAllowLoopback: false } })
    const rx = await startReceiver()
    try {
      const k = await createAgentKey(server.baseUrl, ["catalog:read", "webhooks:manage"])
      for (const url of [rx.url, `http://localhost:${rx.port}/hook`, `http://[::1]:${rx.port}/hook`]) {
        const res = await call(server.baseUrl, "PUT", "/webhook", k, { url })
        expect(res.status, url).toBe(400)
        const body = await res.json()
        expect(body, url).toMatchObject({ type: "InvalidInput", field: "url" })
        expect(body.message, url).toMatch(/loopback/)
      }
    } finally {
      await rx.close()
      await server.close()
    }
  })
})

/** Boots the app on an existing Postgres database (so a second boot is a restart). */
const bootOn = async (databaseUrl: string, config: Partial<AppConfigShape>) => {
  const scope = Effect.runSync(Scope.make())
  const program = Effect.gen(function* () {
    const server = yield* Layer.build(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    const address = Context.get(server, HttpServer.HttpServer).address
    const baseUrl = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}`
    const appConfig = AppConfig.test({
      baseUrl,
      storage: "postgres",
      databaseUrl: Option.some(Redacted.make(databaseUrl)),
      ...limits,
      ...config
    })
    const context = yield* Layer.build(
      AppLive.pipe(Layer.provide(appConfig), Layer.provide(Layer.succeedContext(server)))
    )
    return { baseUrl, context }
  })
  const { baseUrl, context } = await Effect.runPromise(Scope.provide(program, scope))
  const { release } = await underContract(baseUrl)
  return {
    baseUrl,
    run: <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof AppLive>>) =>
      Effect.runPromise(Effect.provide(effect, context as Context.Context<Layer.Success<typeof AppLive>>)),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      release()
    }
  }
}

describeEachStorage(
  "webhooks across a restart",
  () => {
    it("events left undelivered by a stopped server are delivered by the next one, each once", async () => {
      const dbScope = Effect.runSync(Scope.make())
      const rx = await startReceiver()
      try {
        const { url } = await Effect.runPromise(Scope.provide(freshDatabase, dbScope))
        // The first server has no worker running: it stops with everything still in the outbox.
        const first = await bootOn(url, { workers: false })
        const k = await createAgentKey(first.baseUrl, ["catalog:read", "webhooks:manage"])
        const put = await (await call(first.baseUrl, "PUT", "/webhook", k, { url: rx.url })).json()
        rx.secrets = [put.secret]
        const ids: Array<string> = []
        for (let i = 0; i < 3; i++)
          ids.push(
            (await emitFor(first, k.agentId, "wallet.recharged", { amountCents: 100 + i, balanceCents: 1000 })).id
          )
        ids.push((await (await call(first.baseUrl, "POST", "/webhook/test", k)).json()).eventId)
        expect(rx.received).toHaveLength(0)
        await first.close()

        const second = await bootOn(url, { workers: true })
        try {
          // Once the log holds four attempts the worker is done with these events: whatever the
          // receiver got by then is all it gets.
          const log = await eventually(
            async () =>
              (await (await call(second.baseUrl, "GET", "/webhook/deliveries", k)).json()) as {
                data: Array<{ status: string }>
              },
            (d) => d.data.length === 4
          )
          expect(log.data.every((a) => a.status === "succeeded")).toBe(true)
          expect(rx.received).toHaveLength(4)
          expect(new Set(rx.received.map((r) => r.webhookId))).toEqual(new Set(ids))
          expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
        } finally {
          await second.close()
        }
      } finally {
        await rx.close()
        await Effect.runPromise(Scope.close(dbScope, Exit.void))
      }
    }, 60_000)
  },
  { only: ["postgres"] }
)
