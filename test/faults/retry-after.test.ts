// What a client is told when storage fails in a way a retry can fix: 503 with Retry-After, on every
// surface (REST, the tRPC wire, MCP tool calls, A2A messages), against the compiled server and a
// PostgreSQL cluster of the test's own. First the database turns read-only, as a standby being
// promoted answers during a failover (SQLSTATE 25006): reads go on, every write is refused (and an
// agent's request writes at least its rate-limit counter). Then it
// stops altogether (connections refused).
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import {
  buildServer,
  cheapestTier,
  startServerProcess,
  startThrowawayPostgres,
  throwawayPostgresMissing,
  type ServerProcess,
  type ThrowawayPostgres
} from "../scale/harness.js"

const missing = throwawayPostgresMissing()
const skip = skipUnlessCi(missing, false)
const COMMERCE = "/api/v1/agent/commerce"

const sql = async (url: string, ...texts: ReadonlyArray<string>) => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    for (const text of texts) await c.query(text)
  } finally {
    await c.end()
  }
}

/** A 503 as REST and the tRPC wire send it: the status, a whole number of seconds in Retry-After. */
const expectRetryable = async (res: Response, what: string) => {
  const text = await res.text()
  expect(res.status, `${what} → ${res.status} ${text.slice(0, 300)}`).toBe(503)
  expect(res.headers.get("retry-after"), `${what}: Retry-After`).toMatch(/^[1-9]\d*$/)
  return text
}

describe.skipIf(skip !== undefined)(`503 with Retry-After on every surface${skip ? ` — ${skip}` : ""}`, () => {
  let bundle: string
  let db: ThrowawayPostgres
  let app: ServerProcess
  let key: AgentKey
  let buyBody: { serviceId: string; tierId: string; input: Record<string, string> }
  const json = () => ({ ...key.auth, "content-type": "application/json" })
  const rpc = (path: string, body: unknown) =>
    fetch(`${app.baseUrl}${path}`, {
      method: "POST",
      headers: { ...json(), accept: "application/json, text/event-stream" },
      body: JSON.stringify(body)
    })
  /** The wallet's balance, read once the server answers it (right after a restart of its connections it may say 503 first). */
  const balance = () =>
    vi.waitFor(
      async () => {
        const res = await fetch(`${app.baseUrl}${COMMERCE}/wallet`, { headers: key.auth })
        expect(res.status).toBe(200)
        return ((await res.json()) as { balanceCents: number }).balanceCents
      },
      { timeout: 10_000, interval: 100 }
    )

  beforeAll(async () => {
    requirePrerequisite(missing)
    bundle = await buildServer()
    db = await startThrowawayPostgres()
    app = await startServerProcess(bundle, {
      STORAGE: "postgres",
      DATABASE_URL: db.url,
      RATE_LIMIT_PER_MINUTE: "100000",
      RATE_LIMIT_PER_DAY: "10000000"
    })
    key = await createAgentKey(app.baseUrl, ["catalog:read", "commerce:*"])
    const tier = cheapestTier(await (await fetch(`${app.baseUrl}${COMMERCE}/services`, { headers: key.auth })).json())!
    buyBody = { serviceId: tier.serviceId, tierId: tier.tierId, input: { prompt: "retry-after" } }
    const topup = await fetch(`${app.baseUrl}${COMMERCE}/wallet/topup`, {
      method: "POST",
      headers: json(),
      body: JSON.stringify({ amountCents: 50_000 })
    })
    expect(topup.status, await topup.clone().text()).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await app?.stop()
    db?.destroy()
  })

  it("a read-only database (a standby mid-promotion): every write is a 503 with Retry-After, reads go on, nothing is charged, the keyed retry runs after", async () => {
    const before = await balance()
    await sql(db.url, "ALTER DATABASE postgres SET default_transaction_read_only = on")
    // The server's pooled connections were opened read-write: end them, so every new one is read-only.
    await sql(
      db.url,
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agent-commerce'"
    )
    try {
      // Reads go on (the readiness probe reads storage), once the pool has reconnected.
      await vi.waitFor(
        async () => {
          const res = await fetch(`${app.baseUrl}/health`)
          expect(res.status, await res.text()).toBe(200)
        },
        { timeout: 10_000, interval: 100 }
      )

      await expectRetryable(
        await fetch(`${app.baseUrl}${COMMERCE}/buy`, {
          method: "POST",
          headers: json(),
          body: JSON.stringify(buyBody)
        }),
        "REST buy"
      )
      await expectRetryable(
        await fetch(`${app.baseUrl}${COMMERCE}/wallet/topup`, {
          method: "POST",
          headers: json(),
          body: JSON.stringify({ amountCents: 100 })
        }),
        "REST topup"
      )
      const keyed = await fetch(`${app.baseUrl}${COMMERCE}/buy`, {
        method: "POST",
        headers: { ...json(), "idempotency-key": "ro-1" },
        body: JSON.stringify(buyBody)
      })
      const body = JSON.parse(await expectRetryable(keyed, "REST buy with an Idempotency-Key")) as { type: string }
      expect(body.type).toBe("StorageUnavailable")

      // MCP: the envelope is answered (its key check only reads); the tool call's route refused the write.
      const mcp = await rpc("/mcp", {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "buy", arguments: buyBody }
      })
      expect(mcp.status).toBe(200)
      const tool = (
        (await mcp.json()) as {
          result: { isError?: boolean; structuredContent: Record<string, unknown>; content: Array<{ text: string }> }
        }
      ).result
      expect(tool.isError).toBe(true)
      expect(tool.structuredContent).toMatchObject({ status: 503, type: "StorageUnavailable", retryAfterSeconds: 1 })
      expect(tool.content[0].text).toMatch(/retry after 1 s/)

      // A2A: the reply says the route's status and when to retry.
      const a2a = await rpc("/a2a", {
        jsonrpc: "2.0",
        id: 2,
        method: "SendMessage",
        params: { message: { messageId: "m-ro", role: "ROLE_USER", parts: [{ data: { skill: "buy", ...buyBody } }] } }
      })
      expect(a2a.status).toBe(200)
      const reply = ((await a2a.json()) as { result: { message: { metadata: Record<string, unknown> } } }).result
        .message
      expect(reply.metadata).toMatchObject({ httpStatus: 503, ok: false, retryAfterSeconds: 1 })
    } finally {
      await sql(
        db.url,
        "SET default_transaction_read_only = off",
        "ALTER DATABASE postgres SET default_transaction_read_only = off"
      )
      await sql(
        db.url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agent-commerce'"
      )
    }
    expect(await balance(), "nothing was charged").toBe(before)
    // The same keyed request, retried once the database takes writes again, runs: the 503 was not stored.
    await vi.waitFor(
      async () => {
        const res = await fetch(`${app.baseUrl}${COMMERCE}/buy`, {
          method: "POST",
          headers: { ...json(), "idempotency-key": "ro-1" },
          body: JSON.stringify(buyBody)
        })
        expect(res.status, await res.text()).toBeLessThan(300)
      },
      { timeout: 10_000, interval: 250 }
    )
  }, 60_000)

  it("the database stopped: REST, the tRPC wire (single and batched), the MCP and A2A envelopes all answer 503 with Retry-After", async () => {
    await new Promise((r) => setTimeout(r, 1_100)) // the key cache's second, so authentication needs storage too
    db.stop()
    try {
      await expectRetryable(await fetch(`${app.baseUrl}/api/v1/agent/me`, { headers: key.auth }), "REST GET /me")
      await expectRetryable(await fetch(`${app.baseUrl}/health`), "GET /health")
      const trpcInput = encodeURIComponent(JSON.stringify({ sessionId: "cs_fake_outage" }))
      const single = await fetch(`${app.baseUrl}/api/trpc/publicApi.purchaseStatus?input=${trpcInput}`)
      expect(
        (JSON.parse(await expectRetryable(single, "tRPC query")) as { error: { data: { code: string } } }).error.data
          .code
      ).toBe("SERVICE_UNAVAILABLE")
      // A batch whose calls end differently is a 207; one of them could be retried, so it says when.
      const batch = await fetch(
        `${app.baseUrl}/api/trpc/publicApi.purchaseStatus,no.such.procedure?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { sessionId: "cs_fake_outage" } }))}`
      )
      const calls = (await batch.json()) as Array<{ error: { data: { httpStatus: number } } }>
      expect(batch.status).toBe(207)
      expect(calls.map((c) => c.error.data.httpStatus)).toEqual([503, 404])
      expect(batch.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
      await expectRetryable(
        await rpc("/mcp", { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "buy", arguments: buyBody } }),
        "MCP envelope"
      )
      await expectRetryable(
        await rpc("/a2a", {
          jsonrpc: "2.0",
          id: 4,
          method: "SendMessage",
          params: {
            message: { messageId: "m-down", role: "ROLE_USER", parts: [{ data: { skill: "buy", ...buyBody } }] }
          }
        }),
        "A2A envelope"
      )
    } finally {
      db.start()
    }
    await vi.waitFor(
      async () =>
        expect(
          (await fetch(`${app.baseUrl}/api/v1/agent/me`, { headers: key.auth })).status,
          "recovers by itself"
        ).toBe(200),
      { timeout: 20_000, interval: 200 }
    )
  }, 60_000)
})
