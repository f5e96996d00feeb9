// Anonymous writes are limited per client address (docs/keys.md): sign-ups, knowledge checkouts
// (publicApi.purchaseAccess) and checkouts a dashboard session starts share one budget per address
// (default 20 a minute, 1,000 a day); past it, 429 with Retry-After before any work is done, and
// another address is not held back. On every storage (the counters are shared by replicas on Postgres).
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { configDefaults } from "../../src/services/platform/AppConfig.js"
import { setClock } from "../fixtures/clock.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

interface Answer {
  readonly status: number
  readonly retryAfter: string | undefined
  /** The fields read here: the created agent's id, the key's secret, a procedure error's data (a REST error is matched whole). */
  readonly body: { readonly id?: string; readonly secret?: string; readonly error?: { readonly data?: unknown } }
  readonly cookie: string | undefined
}

describeEachStorage("anonymous write limits", (storage) => {
  let server: RuntimeServer
  beforeAll(async () => {
    // The fixture raises the limit for other suites (all their requests come from loopback); the defaults here.
    // The clock stands still mid-minute: 21 writes land in one minute however long they take (on the
    // wall clock a minute could turn between the 20th and the 21st on a slow machine).
    server = await startRuntimeServer({
      storage,
      config: {
        anonymousWritesPerMinute: configDefaults.anonymousWritesPerMinute,
        anonymousWritesPerDay: configDefaults.anonymousWritesPerDay
      },
      clock: setClock(Date.UTC(2026, 10, 28, 12, 0, 30)).clock
    })
  })
  afterAll(() => server?.close())

  const post = (path: string, body: unknown, localAddress: string, headers: Record<string, string> = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const url = new URL(`${server.baseUrl}${path}`)
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          localAddress,
          headers: { "content-type": "application/json", ...headers }
        },
        (res) => {
          let text = ""
          res.on("data", (c: Buffer) => (text += c.toString()))
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: res.headers["retry-after"] as string | undefined,
              body: JSON.parse(text),
              cookie: res.headers["set-cookie"]?.[0]?.split(";")[0]
            })
          )
        }
      )
      req.on("error", reject)
      req.end(JSON.stringify(body))
    })
  const signUpFrom = (address: string, n: number) =>
    post(
      "/api/dashboard/signup",
      { email: `anon-${storage}-${address}-${n}@example.com`, password: "correct horse battery", name: "Anon" },
      address
    )

  it("20 anonymous writes a minute per address (sign-ups and knowledge checkouts together); the 21st is 429 with Retry-After; another address is not held back", async () => {
    const address = "127.0.0.2"
    for (let i = 0; i < 15; i++) expect((await signUpFrom(address, i)).status).toBe(201)
    for (let i = 0; i < 5; i++)
      expect((await post("/api/trpc/publicApi.purchaseAccess", { serviceId: 1 }, address)).status).toBe(200)
    const blocked = await signUpFrom(address, 99)
    expect(blocked.status).toBe(429)
    expect(blocked.body).toMatchObject({ type: "RateLimited", limit: 20, window: "minute" })
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0)
    expect(Number(blocked.retryAfter)).toBeLessThanOrEqual(60)
    const checkout = await post("/api/trpc/publicApi.purchaseAccess", { serviceId: 1 }, address)
    expect(checkout.status).toBe(429)
    expect(checkout.body.error?.data).toMatchObject({ code: "TOO_MANY_REQUESTS" })
    expect(Number(checkout.retryAfter)).toBeGreaterThan(0)
    // The refused sign-up created nothing: the same e-mail can sign up from elsewhere.
    expect((await signUpFrom("127.0.0.3", 99)).status).toBe(201)
    expect((await post("/api/trpc/publicApi.purchaseAccess", { serviceId: 1 }, "127.0.0.3")).status).toBe(200)
  })

  it("checkouts a dashboard session starts count against the address; a key's do not (its own rate limit applies)", async () => {
    const address = "127.0.0.4"
    const owner = await signUpFrom(address, 0)
    expect(owner.status).toBe(201)
    const cookie = owner.cookie!
    const agent = await post("/api/dashboard/agents", { name: "checkout-agent" }, address, { cookie })
    expect(agent.status).toBe(201)
    const key = await post(
      `/api/dashboard/agents/${agent.body.id}/keys`,
      { name: "k", permissions: ["catalog:read"] },
      address,
      { cookie }
    )
    expect(key.status).toBe(201)
    const bySession = () =>
      post("/api/trpc/subscription.createCheckout", { planId: "pro", agentId: agent.body.id }, address, { cookie })
    const byKey = () =>
      post("/api/trpc/subscription.createCheckout", { planId: "pro" }, address, {
        authorization: `Bearer ${key.body.secret}`
      })
    // 1 sign-up + 19 session checkouts = 20 (agent and key creation are not anonymous writes).
    for (let i = 0; i < 19; i++) expect((await bySession()).status).toBe(200)
    const blocked = await bySession()
    expect(blocked.status).toBe(429)
    expect(blocked.body.error?.data).toMatchObject({ code: "TOO_MANY_REQUESTS" })
    expect((await byKey()).status).toBe(200)
  })
})
