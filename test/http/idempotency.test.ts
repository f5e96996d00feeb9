// End to end, on every storage: Idempotency-Key replays the first response, refuses a
// different request with 422, and 50 concurrent retries create exactly one object.
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeEachStorage } from "../fixtures/suite.js"
import { signUp } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

describeEachStorage("Idempotency-Key", (storage) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ storage })
  })
  afterAll(async () => {
    await server?.close()
  })

  const createAgent = (cookie: string, key: string | undefined, name: string) =>
    fetch(`${server.baseUrl}/api/dashboard/agents`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, ...(key ? { "idempotency-key": key } : {}) },
      body: JSON.stringify({ name })
    })

  it("replays the first response and refuses a different body with 422", async () => {
    const owner = await signUp(server.baseUrl)
    const first = await createAgent(owner.cookie, "k-1", "alpha")
    expect(first.status).toBe(201)
    const a = await first.json()
    const second = await createAgent(owner.cookie, "k-1", "alpha")
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(await second.json()).toEqual(a)
    const different = await createAgent(owner.cookie, "k-1", "beta")
    expect(different.status).toBe(422)
    expect((await different.json()).type).toBe("IdempotencyKeyReused")
    const agents = await (
      await fetch(`${server.baseUrl}/api/dashboard/agents`, { headers: { cookie: owner.cookie } })
    ).json()
    expect(agents).toHaveLength(1)
  })

  it("the same JSON in another key order is the same request (replayed, not 422)", async () => {
    const owner = await signUp(server.baseUrl)
    const post = (body: string) =>
      fetch(`${server.baseUrl}/api/dashboard/agents`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: owner.cookie, "idempotency-key": "k-order" },
        body
      })
    const first = await post('{"name":"ordered","organization":"Org"}')
    expect(first.status).toBe(201)
    const again = await post('{ "organization": "Org", "name": "ordered" }')
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(await again.json()).toEqual(await first.json())
  })

  it("two anonymous clients (different addresses) never share an Idempotency-Key", async () => {
    const url = new URL(`${server.baseUrl}/api/trpc/publicApi.purchaseAccess`)
    const from = (localAddress: string) =>
      new Promise<{ status: number; replayed: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            localAddress,
            headers: { "content-type": "application/json", "idempotency-key": "anon-1" }
          },
          (res) => {
            let body = ""
            res.on("data", (c: Buffer) => (body += c.toString()))
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                replayed: res.headers["idempotent-replayed"] as string | undefined,
                body
              })
            )
          }
        )
        req.on("error", reject)
        req.end(JSON.stringify({ serviceId: 1 }))
      })
    const a = await from("127.0.0.1")
    const sameClient = await from("127.0.0.1")
    const b = await from("127.0.0.2")
    expect([a.status, sameClient.status, b.status]).toEqual([200, 200, 200])
    expect(sameClient.replayed).toBe("true")
    expect(sameClient.body).toBe(a.body)
    expect(b.replayed).toBeUndefined()
    expect(JSON.parse(b.body).result.data.sessionId).not.toBe(JSON.parse(a.body).result.data.sessionId)
  })

  it("50 concurrent retries of one key create exactly one object", async () => {
    const owner = await signUp(server.baseUrl)
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => createAgent(owner.cookie, "burst-key", "gamma"))
    )
    const bodies = await Promise.all(responses.map((r) => r.json()))
    expect(responses.every((r) => r.status === 201)).toBe(true)
    expect(new Set(bodies.map((b: { id: string }) => b.id)).size).toBe(1)
    const agents = await (
      await fetch(`${server.baseUrl}/api/dashboard/agents`, { headers: { cookie: owner.cookie } })
    ).json()
    expect(agents).toHaveLength(1)
  })

  it("keys are scoped to the caller, and a malformed key is a 400 naming the header", async () => {
    const a = await signUp(server.baseUrl)
    const b = await signUp(server.baseUrl)
    const ra = await (await createAgent(a.cookie, "shared", "x")).json()
    const rb = await (await createAgent(b.cookie, "shared", "x")).json()
    expect(ra.id).not.toBe(rb.id)
    const bad = await createAgent(a.cookie, "has space", "x")
    expect(bad.status).toBe(400)
    expect((await bad.json()).field).toBe("Idempotency-Key")
  })

  // A refusal before the handler (here: a body that does not decode) is not stored; what a
  // handler answered is (test/http/idempotency-refusals.test.ts).
  it("a validation error (400) is answered again, not replayed: nothing was stored under the key", async () => {
    const owner = await signUp(server.baseUrl)
    const res1 = await fetch(`${server.baseUrl}/api/dashboard/agents`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: owner.cookie, "idempotency-key": "bad-body" },
      body: JSON.stringify({ name: "" })
    })
    expect(res1.status).toBe(400)
    const res2 = await fetch(`${server.baseUrl}/api/dashboard/agents`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: owner.cookie, "idempotency-key": "bad-body" },
      body: JSON.stringify({ name: "" })
    })
    expect(res2.status).toBe(400)
    expect(res2.headers.get("idempotent-replayed")).toBeNull()
  })
})
