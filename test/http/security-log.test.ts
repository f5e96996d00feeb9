// Security events are logged: one structured line per sign-in failure and lockout, key created and
// revoked, permission and policy denial, webhook address change and secret rotation, with the request
// id, the account / agent and the client address — and never a secret, key, password or cookie.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Logger, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppLive } from "../../src/layers/app.js"
import { underContract } from "../fixtures/contract.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { createAgentKey, signUp } from "../fixtures/agents.js"

const lines: Array<string> = []
let baseUrl = ""
let close: () => Promise<void> = async () => {}

beforeAll(async () => {
  const scope = Effect.runSync(Scope.make())
  const capture = Logger.map(Logger.formatLogFmt, (line) => {
    lines.push(line)
  })
  const program = Effect.gen(function* () {
    const server = yield* Layer.build(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    const address = Context.get(server, HttpServer.HttpServer).address
    baseUrl = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}`
    yield* Layer.build(
      AppLive.pipe(
        Layer.provide(AppConfig.test({ baseUrl, webhooksAllowLoopback: true })),
        Layer.provide(Layer.succeedContext(server))
      )
    )
  }).pipe(Effect.provide(Layer.mergeAll(Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "Warn"))))
  await Effect.runPromise(Scope.provide(program, scope))
  const { release } = await underContract(baseUrl)
  close = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    release()
  }
})
afterAll(() => close())

const securityLines = (event: string) => lines.filter((l) => l.includes(`security=${event}`))
const json = { "content-type": "application/json" }

describe("security events", () => {
  it("sign-in failures and the lockout are logged with request id and client address, never the e-mail or password", async () => {
    const { email } = await signUp(baseUrl)
    for (let i = 0; i < 6; i++) {
      await fetch(`${baseUrl}/api/dashboard/signin`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ email, password: "guess-password-123" })
      })
    }
    expect(securityLines("signin.failed")).toHaveLength(5)
    expect(securityLines("signin.throttled")).toHaveLength(1)
    for (const l of [...securityLines("signin.failed"), ...securityLines("signin.throttled")]) {
      expect(l).toMatch(/requestId=req_/)
      expect(l).toMatch(/clientAddress=(::ffff:)?127\.0\.0\.1/)
      expect(l).not.toContain(email)
      expect(l).not.toContain("guess-password-123")
    }
  })

  it("keys created and revoked, permission and policy denials, webhook changes are logged without secrets", async () => {
    const agent = await createAgentKey(baseUrl, ["catalog:read", "commerce:read"])
    expect(
      securityLines("key.created").some(
        (l) => l.includes(`keyId=${agent.keyId}`) && l.includes(`accountId=${agent.accountId}`)
      )
    ).toBe(true)

    // A key without commerce:buy.
    expect(
      (
        await fetch(`${baseUrl}/api/v1/agent/commerce/buy`, {
          method: "POST",
          headers: { ...json, ...agent.auth },
          body: JSON.stringify({ serviceId: "svc_code_review", tierId: "team" })
        })
      ).status
    ).toBe(403)
    expect(
      securityLines("access.denied").some(
        (l) => l.includes(`agentId=${agent.agentId}`) && l.includes("permission=commerce:buy")
      )
    ).toBe(true)

    // A buyer whose policy refuses the category.
    const buyer = await createAgentKey(baseUrl, ["catalog:read", "commerce:*"])
    await fetch(`${baseUrl}/api/v1/agent/commerce/wallet`, {
      method: "PATCH",
      headers: { ...json, ...buyer.auth },
      body: JSON.stringify({ allowedCategories: ["nothing-here"] })
    })
    const refused = await fetch(`${baseUrl}/api/v1/agent/commerce/buy`, {
      method: "POST",
      headers: { ...json, ...buyer.auth },
      body: JSON.stringify({ serviceId: "svc_code_review", tierId: "team" })
    })
    expect(refused.status, await refused.clone().text()).toBe(403)
    expect(securityLines("policy.denied").some((l) => l.includes(`agentId=${buyer.agentId}`))).toBe(true)

    // Webhook address change (the path, which can hold a token, is not logged) and secret rotation.
    const webhookKey = await createAgentKey(baseUrl, ["catalog:read", "webhooks:manage"])
    const put = await fetch(`${baseUrl}/api/v1/agent/webhook`, {
      method: "PUT",
      headers: { ...json, ...webhookKey.auth },
      body: JSON.stringify({ url: "http://127.0.0.1:9/hooks/T0/SECRETPATHTOKEN" })
    })
    expect(put.status).toBeLessThan(300)
    const putBody = JSON.stringify(await put.json())
    await fetch(`${baseUrl}/api/v1/agent/webhook/rotate-secret`, {
      method: "POST",
      headers: { ...json, ...webhookKey.auth }
    })
    expect(
      securityLines("webhook.changed").some(
        (l) => l.includes(`agentId=${webhookKey.agentId}`) && l.includes("url=http://127.0.0.1:9")
      )
    ).toBe(true)

    // Revoke through the dashboard.
    await fetch(`${baseUrl}/api/dashboard/keys/${agent.keyId}/revoke`, {
      method: "POST",
      headers: { ...json, cookie: agent.cookie }
    })
    expect(securityLines("key.revoked").some((l) => l.includes(`keyId=${agent.keyId}`))).toBe(true)

    const all = lines.filter((l) => l.includes("security=")).join("\n")
    for (const secret of [agent.secret, buyer.secret, webhookKey.secret, agent.cookie.split("=")[1], "SECRETPATHTOKEN"])
      expect(all).not.toContain(secret)
    expect(all).not.toMatch(/whsec_/)
    expect(putBody).toContain("whsec_")
  })
})
