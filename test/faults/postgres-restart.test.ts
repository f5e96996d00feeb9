// Faults on Postgres, against the compiled server in its own process and a PostgreSQL cluster of
// the test's own: the database restarted under the server (clean 503s, recovery without help),
// and the server killed with SIGKILL while buys, negotiations and webhook deliveries are in flight
// (after a restart: the ledger balances, nothing settled twice, no answer or delivery lost).
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { commerceServices } from "../../src/seed/services.js"
import { createAgentKey } from "../fixtures/agents.js"
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import {
  buildServer,
  cheapestTier,
  freePort,
  ledgerInvariants,
  query,
  startServerProcess,
  startThrowawayPostgres,
  throwawayPostgresMissing,
  type ServerProcess,
  type ThrowawayPostgres
} from "../scale/harness.js"

// Needs PostgreSQL binaries to run a cluster of its own (not TEST_DATABASE_URL's server).
const missing = throwawayPostgresMissing()
const skip = skipUnlessCi(missing, false)
const COMMERCE = "/api/v1/agent/commerce"
const ALL = ["catalog:read", "evaluate", "acquire", "invest", "create", "commerce:*", "webhooks:manage"] as const

const serverEnv = (url: string) => ({
  STORAGE: "postgres",
  DATABASE_URL: url,
  RATE_LIMIT_PER_MINUTE: "100000",
  RATE_LIMIT_PER_DAY: "10000000",
  NEGOTIATION_DELAY_MS: "200"
})

describe.skipIf(skip !== undefined)(`faults on Postgres${skip ? ` — ${skip}` : ""}`, () => {
  let bundle: string
  let db: ThrowawayPostgres
  let app: ServerProcess | undefined
  beforeAll(async () => {
    requirePrerequisite(missing)
    bundle = await buildServer()
    db = await startThrowawayPostgres()
  }, 90_000)
  afterAll(async () => {
    await app?.stop()
    db?.destroy()
  })

  it("Postgres restarted under the server: clean 503 StorageUnavailable, then recovery by itself", async () => {
    app = await startServerProcess(bundle, serverEnv(db.url))
    const key = await createAgentKey(app.baseUrl, [...ALL])
    const me = () => fetch(`${app!.baseUrl}/api/v1/agent/me`, { headers: key.auth })
    expect((await me()).status).toBe(200)

    db.stop()
    // Every kind of request that needs storage: a typed 503 within the connect timeout, never a hang or a 500.
    const probes: Array<[string, () => Promise<Response>]> = [
      ["GET /me", me],
      ["GET /health", () => fetch(`${app!.baseUrl}/health`)],
      [
        "POST /api/dashboard/agents",
        () =>
          fetch(`${app!.baseUrl}/api/dashboard/agents`, {
            method: "POST",
            headers: { cookie: key.cookie, "content-type": "application/json" },
            body: JSON.stringify({ name: "during outage" })
          })
      ],
      [
        "POST /api/dashboard/signin",
        () =>
          fetch(`${app!.baseUrl}/api/dashboard/signin`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: "nobody@example.com", password: "correct horse battery" })
          })
      ]
    ]
    for (const [name, probe] of probes) {
      const started = Date.now()
      const res = await probe()
      const text = await res.text()
      expect(res.status, `${name} during the outage → ${res.status} ${text.slice(0, 300)}`).toBe(503)
      expect(JSON.parse(text), name).toMatchObject({ type: "StorageUnavailable" })
      // A bound for a hang (the promise is an answer, not a speed): the pool's connect timeout is
      // 5 s, so a request that waited for a database that is not coming back would pass 30 s.
      expect(Date.now() - started, `${name} answered instead of hanging`).toBeLessThan(30_000)
    }
    // A procedure that reads storage (the public catalogue reads are served from the 60 s read cache).
    const trpc = await fetch(
      `${app.baseUrl}/api/trpc/publicApi.purchaseStatus?input=${encodeURIComponent(JSON.stringify({ sessionId: "cs_fake_outage" }))}`
    )
    expect(trpc.status).toBe(503)
    expect(((await trpc.json()) as { error: { data: { code: string } } }).error.data.code).toBe("SERVICE_UNAVAILABLE")
    expect(app.child.exitCode, "the server survives the outage").toBeNull()

    db.start()
    await vi.waitFor(async () => expect((await me()).status, "recovers without a restart").toBe(200), {
      timeout: 20_000,
      interval: 200
    })
    const after = await Promise.all(Array.from({ length: 20 }, () => me().then((r) => r.status)))
    expect(
      after.every((s) => s === 200),
      `after recovery: ${after.join(",")}`
    ).toBe(true)
    await app.stop()
    app = undefined
  }, 60_000)

  it("kill -9 with buys, negotiations and webhook deliveries in flight; after a restart every invariant holds", async () => {
    // Seller answers are scheduled 4 s out, so the kill is meant to land before them; whether it
    // does or not, each gets exactly one answer.
    const env = { ...serverEnv(db.url), NEGOTIATION_DELAY_MS: "4000" }
    const first = await startServerProcess(bundle, env)
    app = first
    const key = await createAgentKey(first.baseUrl, [...ALL])
    const json = { ...key.auth, "content-type": "application/json" }

    // Webhooks: the receiver is down until after the kill, so every event is still owed a delivery.
    const hookPort = await freePort()
    const pings = 5
    const put = await fetch(`${first.baseUrl}/api/v1/agent/webhook`, {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ url: `http://127.0.0.1:${hookPort}/hook`, events: ["*"] })
    })
    expect(put.status, await put.clone().text()).toBeLessThan(300)
    for (let i = 0; i < pings; i++) {
      const ping = await fetch(`${first.baseUrl}/api/v1/agent/webhook/test`, {
        method: "POST",
        headers: json,
        body: "{}"
      })
      expect(ping.status, await ping.clone().text()).toBe(202)
    }

    // Negotiations: proposed, the seller's answer due after the kill.
    const negotiations: Array<string> = []
    const service = commerceServices.find((s) => s.tiers.some((t) => t.priceCents >= 1000))!
    const negotiated = service.tiers.find((t) => t.priceCents >= 1000)!
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${first.baseUrl}${COMMERCE}/negotiate`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({
          serviceId: service.id,
          tierId: negotiated.id,
          proposedPriceCents: Math.floor(negotiated.priceCents * 0.7)
        })
      })
      const text = await res.text()
      expect(res.status, text).toBe(201)
      negotiations.push(String((JSON.parse(text) as { id: string }).id))
    }

    // Buys: 8 buyers in a loop until the kill, which comes once 20 have completed (more are in flight).
    let stop = false
    const bought: Array<number> = []
    const tier = cheapestTier(await (await fetch(`${first.baseUrl}${COMMERCE}/services`, { headers: key.auth })).json())
    expect(tier, "a buyable service").toBeDefined()
    const topup = await fetch(`${first.baseUrl}${COMMERCE}/wallet/topup`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ amountCents: Math.min(tier!.priceCents * 2000, 1_000_000) })
    })
    expect(topup.status, await topup.clone().text()).toBeLessThan(300)
    const buyBody = JSON.stringify({ serviceId: tier!.serviceId, tierId: tier!.tierId, input: { prompt: "fault" } })
    const buyer = async () => {
      while (!stop) {
        const res = await fetch(`${first.baseUrl}${COMMERCE}/buy`, {
          method: "POST",
          headers: json,
          body: buyBody
        }).catch(() => undefined)
        if (!res) return
        await res.arrayBuffer().catch(() => undefined)
        if (res.status < 300) bought.push(1)
      }
    }
    const buyers = Array.from({ length: 8 }, buyer)
    await vi.waitFor(() => expect(bought.length, "buys completing before the kill").toBeGreaterThanOrEqual(20), {
      timeout: 20_000,
      interval: 20
    })

    await first.kill9()
    stop = true
    await Promise.all(buyers)

    // The receiver comes up; the server restarts on the same database.
    // Every delivery's webhook-id; test pings separately (other events of the agent arrive too).
    const received: Array<string> = []
    const pinged: Array<string> = []
    const receiver: Server = createServer((req, res) => {
      let body = ""
      req.on("data", (d: Buffer) => (body += d.toString()))
      req.on("end", () => {
        const id = String(req.headers["webhook-id"])
        received.push(id)
        if ((JSON.parse(body || "{}") as { type?: string }).type === "webhook.test") pinged.push(id)
        res.writeHead(200).end("ok")
      })
    })
    await new Promise<void>((r) => receiver.listen(hookPort, "127.0.0.1", () => r()))
    try {
      const second = await startServerProcess(bundle, env)
      app = second
      const inv = await ledgerInvariants(db.url)
      expect(inv.totalCents, "postings sum to zero").toBe(0)
      expect(inv.mismatched, "stored balances equal the sum of postings").toEqual([])
      expect(inv.negative, "no wallet or escrow below zero").toEqual([])
      expect(inv.doubleSettled, "no reference settled twice").toEqual([])
      expect(inv.unmatched, "every completed purchase has exactly its ledger entry").toEqual([])
      expect(inv.spendDrift, "the running spend totals equal a recomputation").toEqual([])
      expect(inv.counterDrift, "the agents' counters equal a recomputation").toEqual([])
      const again = await fetch(`${second.baseUrl}${COMMERCE}/buy`, { method: "POST", headers: json, body: buyBody })
      expect(again.status, await again.clone().text()).toBeLessThan(300)

      // Negotiations: each answered once. An answered one is no longer due (seller_due_at is cleared
      // with the status), so no worker can answer it again later: one seller entry in its history
      // and one answer event to the buyer after the proposal.
      interface Seen {
        status: string
        history: ReadonlyArray<{ by: string }>
      }
      const read = async (id: string) =>
        (await (await fetch(`${second.baseUrl}${COMMERCE}/negotiations/${id}`, { headers: key.auth })).json()) as Seen
      await vi.waitFor(
        async () => {
          for (const id of negotiations)
            expect((await read(id)).status, `negotiation ${id} answered after the restart`).not.toBe("awaiting_seller")
        },
        { timeout: 30_000, interval: 200 }
      )
      for (const id of negotiations) {
        const n = await read(id)
        expect(n.history.filter((h) => h.by === "seller").length, `negotiation ${id}: one seller answer`).toBe(1)
        const events = await query<{ n: string }>(
          db.url,
          "SELECT count(*)::text AS n FROM events WHERE type = 'negotiation.updated' AND agent_id = $1 AND data->>'negotiationId' = $2",
          [key.agentId, id]
        )
        expect(Number(events[0].n), `${id}: the proposal and one answer`).toBe(2)
      }

      // Webhooks: the first attempts failed (receiver down): after 3 refusals in a row the endpoint is
      // failing and its backlog waits for the next probe (5 s or 30 s after the failures,
      // docs/webhooks.md); the rows survive the kill and the restarted process sends the probe, then the rest.
      const shown = (await (await fetch(`${second.baseUrl}/api/v1/agent/webhook`, { headers: key.auth })).json()) as {
        nextAttemptAt: string | null
      }
      const probeIn = shown.nextAttemptAt === null ? 0 : Math.max(0, Date.parse(shown.nextAttemptAt) - Date.now())
      // A bound for a hang, past the probe the endpoint reported (the receiver is up by now, so the
      // probe succeeds and the backlog follows, two at a time): 60 s leaves room for a loaded machine.
      await vi.waitFor(
        () =>
          expect(
            new Set(pinged).size,
            `every test event delivered after the restart (next attempt was ${shown.nextAttemptAt ?? "due"}; received ${received.length}): ${pinged.join(", ")}`
          ).toBe(pings),
        { timeout: probeIn + 60_000, interval: 100 }
      )
      expect(received.length, `each event delivered once: ${received.join(", ")}`).toBe(new Set(received).size)
      // Delivered once, as the outbox records it: each test event's delivery succeeded on exactly one
      // attempt (a succeeded delivery is never claimed again, so nothing more can arrive later).
      const deliveries = await query<{ event_id: string; status: string; succeeded: string }>(
        db.url,
        `SELECT d.event_id, d.status, (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.status = 'succeeded')::text AS succeeded
         FROM webhook_deliveries d WHERE d.agent_id = $1 AND d.event_type = 'webhook.test'`,
        [key.agentId]
      )
      expect(deliveries.map((d) => [d.status, Number(d.succeeded)])).toEqual(
        Array.from({ length: pings }, () => ["succeeded", 1])
      )
      await second.stop()
      app = undefined
    } finally {
      receiver.closeAllConnections()
      await new Promise((r) => receiver.close(r))
    }
  }, 240_000)
})
