// What a seller is promised when it publishes, over HTTP on every storage: its service is fulfilled
// by itself (pull) unless it gives a push endpoint; the catalogue shows only the mode; nobody but
// the platform's own sellers can be "simulated" (400 naming fulfilment.mode); a push url passes the
// webhooks' address guard (400 naming fulfilment.url) and its signing secret is shown once, then
// rotated on request.
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
const C = "/api/v1/agent/commerce"

interface Answer {
  readonly status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}
const call = async (
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}
): Promise<Answer> => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}
const key = () => ({ "idempotency-key": randomBytes(8).toString("hex") })
const post = (k: AgentKey, path: string, body: unknown, headers: Record<string, string> = key()) =>
  call(path, { method: "POST", headers: { ...k.auth, ...headers }, body })
const get = (k: AgentKey, path: string) => call(path, { headers: k.auth })

const tier = (priceCents: number, p95LatencyMs = 1_000) => ({
  id: "unit",
  name: "Unit",
  priceCents,
  unit: "call",
  includedUnits: null,
  sla: { uptimePct: 99, p95LatencyMs, supportWindow: "24/7" }
})
const serviceBody = (name: string, priceCents: number, fulfilment?: unknown) => ({
  name,
  description: "a service its seller fulfils",
  category: "testing",
  pricingModel: "per_call",
  tiers: [tier(priceCents)],
  ...(fulfilment === undefined ? {} : { fulfilment })
})

describeEachStorage("publishing a service's fulfilment over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("publishing: pull by default and shown as such; simulated is the platform's only; a push url is checked and its secret shown once", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const plain = await post(seller, `${C}/services`, serviceBody("Plain", 100))
    expect(plain.body.fulfilment).toEqual({ mode: "pull" })
    expect((await get(seller, `${C}/services/${plain.body.id}`)).body.fulfilment).toEqual({ mode: "pull" })
    const simulated = await post(seller, `${C}/services`, serviceBody("Fake", 100, { mode: "simulated" }))
    expect(simulated.status).toBe(400)
    expect(simulated.body).toMatchObject({ type: "InvalidInput", field: "fulfilment.mode" })
    const inside = await post(
      seller,
      `${C}/services`,
      serviceBody("In", 100, { mode: "push", url: "http://10.0.0.9/o" })
    )
    expect(inside.status).toBe(400)
    expect(inside.body).toMatchObject({ type: "InvalidInput", field: "fulfilment.url" })
    const unknownMode = await post(seller, `${C}/services`, serviceBody("Odd", 100, { mode: "email" }))
    expect(unknownMode.status).toBe(400)
    expect(JSON.stringify(unknownMode.body)).toMatch(/fulfilment/)
    const url = `${server.baseUrl}/push-target`
    const pushed = await post(seller, `${C}/services`, serviceBody("Pushed", 100, { mode: "push", url }))
    expect(pushed.status).toBe(201)
    expect(pushed.body.fulfilmentSecret).toMatch(/^whsec_/)
    const shown = await get(seller, `${C}/services/${pushed.body.id}`)
    expect(shown.body.fulfilment).toEqual({ mode: "push" })
    expect(JSON.stringify(shown.body)).not.toContain(pushed.body.fulfilmentSecret)
    const rotated = await post(seller, `${C}/services/${pushed.body.id}/fulfilment/secret`, undefined)
    expect(rotated.status).toBe(200)
    expect(rotated.body.fulfilmentSecret).not.toBe(pushed.body.fulfilmentSecret)
  })
})
