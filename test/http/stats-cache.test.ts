// Platform-wide figures are reused for PLATFORM_STATS_TTL_SECONDS (docs/commerce.md "Analytics"):
// within the window /stats' platform half may lag, the caller's own half never does; after it, both
// are current. On memory (the reuse is in the service, above every store). The window is measured on
// the wall clock (Date): the test holds that clock still, then moves it past the window, so neither
// half of the check depends on how fast this machine answers.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const COMMERCE = "/api/v1/agent/commerce"

describe("platform figures reused for a bounded time", () => {
  let server: TestServer
  let key: AgentKey
  const json = () => ({ ...key.auth, "content-type": "application/json" })
  beforeAll(async () => {
    server = await startServer({
      config: { platformStatsTtlSeconds: 1, rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 }
    })
    key = await createAgentKey(server.baseUrl, ["catalog:read", "commerce:*"])
    expect(
      (
        await fetch(`${server.baseUrl}${COMMERCE}/wallet/topup`, {
          method: "POST",
          headers: json(),
          body: JSON.stringify({ amountCents: 100_000 })
        })
      ).status
    ).toBe(201)
  })
  afterAll(() => server?.close())
  afterEach(() => {
    vi.useRealTimers()
  })

  const stats = async () =>
    (await (await fetch(`${server.baseUrl}${COMMERCE}/stats`, { headers: key.auth })).json()) as {
      agent: { purchases: number }
      platform: { transactions: number }
    }
  const buy = async () => {
    const services = (await (
      await fetch(`${server.baseUrl}${COMMERCE}/services?limit=50`, { headers: key.auth })
    ).json()) as {
      data: Array<{ id: string; tiers: Array<{ id: string; priceCents: number }> }>
    }
    const service = services.data.find((s) => s.tiers.some((t) => t.priceCents <= 5_000))!
    const tier = service.tiers.find((t) => t.priceCents <= 5_000)!
    const res = await fetch(`${server.baseUrl}${COMMERCE}/buy`, {
      method: "POST",
      headers: json(),
      body: JSON.stringify({ serviceId: service.id, tierId: tier.id })
    })
    expect(res.status).toBe(201)
  }

  it("within the TTL the platform total lags and the agent's own does not; after it both are current", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    const before = await stats()
    await buy()
    const soon = await stats()
    expect(soon.agent.purchases).toBe(before.agent.purchases + 1)
    // No time has passed on the clock the window is measured with: the platform half is the one kept.
    expect(soon.platform.transactions).toBe(before.platform.transactions)
    vi.setSystemTime(Date.now() + 1_001)
    const later = await stats()
    expect(later.platform.transactions).toBe(before.platform.transactions + 1)
    expect(later.agent.purchases).toBe(before.agent.purchases + 1)
  })
})
