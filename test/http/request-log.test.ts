// The access log: one line per request at Info with method, route template, status, duration,
// request id and the caller's agent (never a key, cookie, password or raw path); slow ones at Warn.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Logger, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { logRequest, SLOW_REQUEST_MS } from "../../src/http/requestLog.js"
import { AppLive } from "../../src/layers/app.js"
import { underContract } from "../fixtures/contract.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { createAgentKey } from "../fixtures/agents.js"

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}
const lines: Array<Line> = []
const capture = Logger.map(Logger.formatStructured, (out) => {
  lines.push({ level: out.level, message: String(out.message), annotations: out.annotations })
})
let baseUrl = ""
let close: () => Promise<void> = async () => {}

beforeAll(async () => {
  const scope = Effect.runSync(Scope.make())
  const program = Effect.gen(function* () {
    const server = yield* Layer.build(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    const address = Context.get(server, HttpServer.HttpServer).address
    baseUrl = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}`
    yield* Layer.build(
      AppLive.pipe(
        Layer.provide(AppConfig.test({ baseUrl, logLevel: "Info" })),
        Layer.provide(Layer.succeedContext(server))
      )
    )
  }).pipe(Effect.provide(Layer.mergeAll(Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "Info"))))
  await Effect.runPromise(Scope.provide(program, scope))
  const { release } = await underContract(baseUrl)
  close = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    release()
  }
})
afterAll(() => close())

const accessLines = (requestId: string) =>
  lines.filter((l) => l.annotations.http === "request" && l.annotations.requestId === requestId)

describe("access log", () => {
  it("one Info line per request: method, route template, status, duration, request id, agent", async () => {
    const agent = await createAgentKey(baseUrl, ["commerce:read"])
    const res = await fetch(`${baseUrl}/api/v1/agent/commerce/transactions/tx_nope?x=secret-query`, {
      headers: { ...agent.auth, "x-request-id": "log-test-1" }
    })
    expect(res.status).toBe(404)
    const [line, ...more] = accessLines("log-test-1")
    expect(more).toHaveLength(0)
    expect(line).toBeDefined()
    expect(line!.level).toBe("INFO")
    expect(line!.annotations).toMatchObject({
      method: "GET",
      route: "/api/v1/agent/commerce/transactions/:id",
      status: 404,
      agentId: agent.agentId,
      accountId: agent.accountId
    })
    expect(typeof line!.annotations.durationMs).toBe("number")
    expect(line!.message).toMatch(/^GET \/api\/v1\/agent\/commerce\/transactions\/:id 404 [\d.]+ ms$/)
    // Nothing secret and nothing from the raw URL.
    const text = JSON.stringify(line)
    for (const secret of [agent.secret, "tx_nope", "secret-query", agent.cookie.split("=")[1]!])
      expect(text).not.toContain(secret)
  })

  it("a refused key still names its agent; a session call names its account; an unknown path has no route", async () => {
    const agent = await createAgentKey(baseUrl, ["catalog:read"])
    expect(
      (
        await fetch(`${baseUrl}/api/v1/agent/commerce/wallet`, {
          headers: { ...agent.auth, "x-request-id": "log-test-2" }
        })
      ).status
    ).toBe(403)
    expect(accessLines("log-test-2")[0]!.annotations).toMatchObject({ status: 403, agentId: agent.agentId })

    expect(
      (
        await fetch(`${baseUrl}/api/dashboard/agents`, {
          headers: { cookie: agent.cookie, "x-request-id": "log-test-3" }
        })
      ).status
    ).toBe(200)
    const session = accessLines("log-test-3")[0]!.annotations
    expect(session).toMatchObject({
      method: "GET",
      route: "/api/dashboard/agents",
      status: 200,
      accountId: agent.accountId
    })
    expect(session.agentId).toBeUndefined()

    expect(
      (await fetch(`${baseUrl}/no/such/path/with-a-token`, { headers: { "x-request-id": "log-test-4" } })).status
    ).toBe(404)
    const unknown = accessLines("log-test-4")[0]!
    expect(unknown.annotations).toMatchObject({ route: "(no route)", status: 404 })
    expect(JSON.stringify(unknown)).not.toContain("with-a-token")
  })

  it("site pages and early refusals (413) are logged too", async () => {
    await fetch(`${baseUrl}/terms`, { headers: { "x-request-id": "log-test-5" } })
    expect(accessLines("log-test-5")[0]!.annotations).toMatchObject({ route: "/terms", status: 200 })
    const big = await fetch(`${baseUrl}/api/dashboard/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "log-test-6" },
      body: "x".repeat(1_100_000)
    })
    expect(big.status).toBe(413)
    expect(accessLines("log-test-6")[0]!.annotations).toMatchObject({ method: "POST", status: 413 })
  })

  it(`a request slower than ${SLOW_REQUEST_MS} ms is logged at Warn`, async () => {
    const out: Array<Line> = []
    const local = Logger.map(Logger.formatStructured, (o) => {
      out.push({ level: o.level, message: String(o.message), annotations: o.annotations })
    })
    await Effect.runPromise(
      Effect.all([
        logRequest({
          method: "POST",
          route: "/api/v1/agent/commerce/buy",
          status: 200,
          durationMs: 1500.2,
          requestId: "r1",
          agentId: "agt_1",
          accountId: undefined
        }),
        logRequest({
          method: "GET",
          route: "/health",
          status: 200,
          durationMs: 3.1,
          requestId: "r2",
          agentId: undefined,
          accountId: undefined
        })
      ]).pipe(Effect.provide(Logger.layer([local])))
    )
    expect(out.map((l) => [l.level, l.message])).toEqual([
      ["WARN", "slow request: POST /api/v1/agent/commerce/buy 200 1500.2 ms"],
      ["INFO", "GET /health 200 3.1 ms"]
    ])
  })
})
