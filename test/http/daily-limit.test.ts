// The daily request limit (spec: 60 a minute and 1,000 a day per key on the agent API; here 5 a
// day under 50 a minute, RATE_LIMIT_PER_DAY / RATE_LIMIT_PER_MINUTE): the request past the day's
// limit is 429 naming the `day` window, with Retry-After and the RateLimit fields counting down to
// the day's end (UTC midnight); at that moment the key may call again. The app reads a clock the
// test sets (test/fixtures/clock.ts), so the day ends without waiting one. On every storage.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { setClock } from "../fixtures/clock.js"
import { storageCases } from "../fixtures/db.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const PER_MINUTE = 50
const PER_DAY = 5
const NOON = Date.parse("2031-03-14T12:00:00.000Z")
const HALF_DAY_S = 12 * 3600

for (const c of storageCases) {
  describe.skipIf(c.skip !== undefined)(`the daily request limit [${c.name}]${c.skip ? ` — ${c.skip}` : ""}`, () => {
    const time = setClock(NOON)
    let server: RuntimeServer
    beforeAll(async () => {
      server = await startRuntimeServer({
        storage: c.name,
        config: { rateLimitPerMinute: PER_MINUTE, rateLimitPerDay: PER_DAY },
        clock: time.clock
      })
    }, 60_000)
    afterAll(async () => {
      await server?.close()
    })

    const me = (key: AgentKey) => fetch(`${server.baseUrl}/api/v1/agent/me`, { headers: key.auth })

    it("the request past the day's limit is 429 naming the day window, until the day ends; then the key may call again", async () => {
      time.set(NOON)
      const key = await createAgentKey(server.baseUrl, ["catalog:read", "commerce:read"])
      for (let i = 1; i <= PER_DAY; i++) {
        const res = await me(key)
        expect(res.status, `request ${i}`).toBe(200)
        expect(res.headers.get("ratelimit-policy")).toBe(`"minute";q=${PER_MINUTE};w=60, "day";q=${PER_DAY};w=86400`)
        // The clock stands at noon: a whole minute and half a day left.
        expect(res.headers.get("ratelimit")).toBe(
          `"minute";r=${PER_MINUTE - i};t=60, "day";r=${PER_DAY - i};t=${HALF_DAY_S}`
        )
      }

      // The sixth, on another route of the agent API: the budget is the key's, not the route's.
      const refused = await fetch(`${server.baseUrl}/api/v1/agent/commerce/services`, { headers: key.auth })
      expect(refused.status).toBe(429)
      expect(refused.headers.get("retry-after")).toBe(String(HALF_DAY_S))
      // The refused request is not counted: the minute still has 45 left, the day none.
      expect(refused.headers.get("ratelimit")).toBe(
        `"minute";r=${PER_MINUTE - PER_DAY};t=60, "day";r=0;t=${HALF_DAY_S}`
      )
      expect(refused.headers.get("ratelimit-policy")).toBe(`"minute";q=${PER_MINUTE};w=60, "day";q=${PER_DAY};w=86400`)
      expect(await refused.json()).toMatchObject({
        type: "RateLimited",
        window: "day",
        limit: PER_DAY,
        retryAfterSeconds: HALF_DAY_S,
        message: `rate limit exceeded: ${PER_DAY} requests per day; retry in ${HALF_DAY_S}s`
      })

      // Another key of the same owner has its own day.
      const other = await createAgentKey(server.baseUrl, ["catalog:read"], {
        cookie: key.cookie,
        accountId: key.accountId
      })
      expect((await me(other)).status).toBe(200)

      // One second before midnight: a new minute, the same day — still refused, one second to wait.
      time.advance((HALF_DAY_S - 1) * 1000)
      const lastSecond = await me(key)
      expect(lastSecond.status).toBe(429)
      expect(lastSecond.headers.get("retry-after")).toBe("1")
      expect(await lastSecond.json()).toMatchObject({ window: "day", retryAfterSeconds: 1 })

      // Midnight UTC: the day's window has ended; a fresh one and a fresh minute.
      time.advance(1000)
      const next = await me(key)
      expect(next.status).toBe(200)
      expect(next.headers.get("ratelimit")).toBe(`"minute";r=${PER_MINUTE - 1};t=60, "day";r=${PER_DAY - 1};t=86400`)
    })
  })
}
