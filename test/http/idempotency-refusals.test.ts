// A request refused before any handler ran (no such route or method, a body or parameter the
// document calls invalid, no credentials, a missing permission) is not stored under its
// Idempotency-Key: the corrected request with the same key is then served, not refused 422. What
// a handler answered is still replayed.
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, signUp, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

describeEachStorage("Idempotency-Key and refusals before the handler", (storage) => {
  let server: TestServer
  let owner: { cookie: string }
  let reader: AgentKey
  beforeAll(async () => {
    server = await startServer({ storage, config: { workers: false } })
    owner = await signUp(server.baseUrl)
    reader = await createAgentKey(server.baseUrl, ["catalog:read"])
  })
  afterAll(() => server?.close())

  const fresh = () => `k-${randomBytes(6).toString("hex")}`
  const send = (
    method: string,
    path: string,
    key: string,
    init: { headers?: Record<string, string>; body?: string } = {}
  ) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { "content-type": "application/json", cookie: owner.cookie, "idempotency-key": key, ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {})
    })
  const createAgent = (key: string, name = "refusals agent") =>
    send("POST", "/api/dashboard/agents", key, { body: JSON.stringify({ name }) })

  const refusals: ReadonlyArray<readonly [string, (key: string) => Promise<Response>, number]> = [
    [
      "a method the path does not serve",
      (k) => send("PUT", "/api/dashboard/agents", k, { body: JSON.stringify({ name: "refusals agent" }) }),
      405
    ],
    ["the same path under another method", (k) => send("DELETE", "/api/dashboard/agents", k), 405],
    [
      "no route at all",
      (k) => send("POST", "/api/dashboard/agentz", k, { body: JSON.stringify({ name: "refusals agent" }) }),
      404
    ],
    [
      "a body the document calls invalid",
      (k) => send("POST", "/api/dashboard/agents", k, { body: JSON.stringify({ name: "" }) }),
      400
    ],
    [
      "a field the document does not know",
      (k) => send("POST", "/api/dashboard/agents", k, { body: JSON.stringify({ name: "x", colour: "red" }) }),
      400
    ],
    ["a body that is not JSON", (k) => send("POST", "/api/dashboard/agents", k, { body: "{" }), 400],
    [
      "no credentials",
      (k) =>
        send("POST", "/api/dashboard/agents", k, {
          headers: { cookie: "" },
          body: JSON.stringify({ name: "refusals agent" })
        }),
      401
    ]
  ]

  for (const [what, refused, status] of refusals) {
    it(`${what} (${status}) leaves the key free: the corrected request with it is served`, async () => {
      const key = fresh()
      const first = await refused(key)
      expect(first.status, await first.clone().text()).toBe(status)
      const corrected = await createAgent(key)
      expect(corrected.status, await corrected.clone().text()).toBe(201)
      expect(corrected.headers.get("idempotent-replayed")).toBeNull()
      // From here on the key is the served request's: replayed to a retry, 422 for another request.
      const retry = await createAgent(key)
      expect(retry.status).toBe(201)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      expect((await retry.json()).id).toBe((await corrected.json()).id)
      expect((await createAgent(key, "another name")).status).toBe(422)
    })

    it(`${what} (${status}) is answered again, not replayed, when repeated`, async () => {
      const key = fresh()
      await refused(key)
      const again = await refused(key)
      expect(again.status).toBe(status)
      expect(again.headers.get("idempotent-replayed")).toBeNull()
    })
  }

  it("a key that lacks the route's permission (403) leaves the key free for the corrected call", async () => {
    const key = fresh()
    const buy = JSON.stringify({ serviceId: "svc_does_not_exist", tierId: "starter" })
    const refused = await fetch(`${server.baseUrl}/api/v1/agent/commerce/buy`, {
      method: "POST",
      headers: { ...reader.auth, "content-type": "application/json", "idempotency-key": key },
      body: buy
    })
    expect(refused.status).toBe(403)
    const list = await fetch(`${server.baseUrl}/api/v1/agent/commerce/wallet/topup`, {
      method: "POST",
      headers: { ...reader.auth, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ amountCents: 100 })
    })
    expect(list.status).not.toBe(422)
  })

  it("what a handler answered is stored, refusals included: a 404 for an unknown object is replayed", async () => {
    const key = fresh()
    const path = "/api/dashboard/agents/agt_unknown_refusals/keys"
    const body = JSON.stringify({ name: "k", permissions: ["catalog:read"] })
    const first = await send("POST", path, key, { body })
    expect(first.status).toBe(404)
    const again = await send("POST", path, key, { body })
    expect(again.status).toBe(404)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect((await createAgent(key)).status).toBe(422)
  })
})
