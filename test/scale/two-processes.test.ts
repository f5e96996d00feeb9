// Scale-out: two server processes on one Postgres database behind a round-robin front. Rate limits
// are shared, concurrent buys across both never overspend, a negotiation gets one answer, a
// waiting buy hears a seller answering through the other process, a webhook event one delivery per
// attempt, and one agent's dead webhook endpoint holds at most two
// deliveries in flight across both processes while another's events keep going.
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { commerceServices } from "../../src/seed/services.js"
import { createAgentKey } from "../fixtures/agents.js"
import { postgresSkipReason } from "../fixtures/db.js"
import {
  buildServer,
  cheapestTier,
  freshDatabaseUrl,
  ledgerInvariants,
  query,
  roundRobin,
  startServerProcess,
  type ServerProcess
} from "./harness.js"

const COMMERCE = "/api/v1/agent/commerce"
const ALL = ["catalog:read", "evaluate", "acquire", "invest", "create", "commerce:*", "webhooks:manage"] as const

/**
 * The end (epoch seconds) of the minute window an answer was counted in, from what the server said:
 * its RateLimit field's `t` is the seconds from the server's current second to the window's end, and
 * that second lies between the request's sending and its answer, so the window's end is the one
 * multiple of 60 in [sent + t, received + t].
 */
const minuteWindowEnd = (sentMs: number, receivedMs: number, res: Response) => {
  const t = Number(/"minute";r=\d+;t=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1])
  if (!Number.isInteger(t)) throw new Error(`no minute window in RateLimit: ${res.headers.get("ratelimit")}`)
  const lo = Math.floor(sentMs / 1000) + t
  const end = Math.ceil(lo / 60) * 60
  if (end > Math.floor(receivedMs / 1000) + t)
    throw new Error(`no minute window ends in [${lo}, ${Math.floor(receivedMs / 1000) + t}]`)
  return end
}

/** A request's status and the minute window the server counted it in. */
const counted = async (input: string, init: RequestInit) => {
  const sent = Date.now()
  const res = await fetch(input, init)
  const window = minuteWindowEnd(sent, Date.now(), res)
  return { status: res.status, window, body: res.status === 429 ? await res.json() : await res.text() }
}

/** Resolves when the current minute, as the servers on this machine frame it, has at least `seconds` left (a wait, not a check). */
const minuteWithRoom = (seconds: number) => {
  const left = 60_000 - (Date.now() % 60_000)
  return left >= seconds * 1000 ? Promise.resolve() : new Promise<void>((r) => setTimeout(r, left + 50))
}

describe.skipIf(postgresSkipReason !== undefined)(
  `two server processes on one database${postgresSkipReason ? ` — ${postgresSkipReason}` : ""}`,
  () => {
    let bundle: string
    let db: { url: string; drop: () => Promise<void> }
    const servers: Array<ServerProcess> = []
    let front: Awaited<ReturnType<typeof roundRobin>>
    const url = (p: string) => `${front.baseUrl}${p}`

    beforeAll(async () => {
      bundle = await buildServer()
      db = await freshDatabaseUrl()
      const env = {
        STORAGE: "postgres",
        DATABASE_URL: db.url,
        RATE_LIMIT_PER_MINUTE: "60",
        RATE_LIMIT_PER_DAY: "1000",
        NEGOTIATION_DELAY_MS: "300",
        WORKERS: "true",
        WEBHOOK_TIMEOUT_MS: "2000"
      }
      // Both start at once on an empty database: the migrations must serialise between them.
      servers.push(...(await Promise.all([startServerProcess(bundle, env), startServerProcess(bundle, env)])))
      front = await roundRobin(servers.map((s) => s.port))
    }, 90_000)
    afterAll(async () => {
      await front?.close()
      await Promise.all(servers.map((s) => s.stop()))
      await db?.drop()
    })

    it("both processes serve the same data (an agent created through one is seen by the other)", async () => {
      const key = await createAgentKey(front.baseUrl, ["catalog:read"])
      const statuses = await Promise.all(
        servers.map((s) => fetch(`${s.baseUrl}/api/v1/agent/me`, { headers: key.auth }).then((r) => r.status))
      )
      expect(statuses).toEqual([200, 200])
    })

    it("a key revoked through one process is refused by the other (its cached copy evicted by NOTIFY, the 1 s TTL as backstop)", async () => {
      const key = await createAgentKey(servers[0].baseUrl, ["catalog:read"])
      const me = (s: ServerProcess) =>
        fetch(`${s.baseUrl}/api/v1/agent/me`, { headers: key.auth }).then((r) => r.status)
      // Both processes have the key in their cache now.
      expect(await Promise.all(servers.map(me))).toEqual([200, 200])
      const revoked = await fetch(`${servers[0].baseUrl}/api/dashboard/keys/${key.keyId}/revoke`, {
        method: "POST",
        headers: { cookie: key.cookie, "content-type": "application/json" }
      })
      expect(revoked.status).toBe(200)
      expect(await me(servers[0]), "the revoking process at once").toBe(401)
      await vi.waitFor(async () => expect(await me(servers[1]), "the other process").toBe(401), {
        timeout: 10_000,
        interval: 10
      })
      // And for good: no cache brings it back.
      expect(await Promise.all([...servers, ...servers].map(me))).toEqual([401, 401, 401, 401])
    })

    it("rate limits are shared: 60 requests across both processes pass, the 61st is 429", async () => {
      // All 61 must be counted in one minute window (a window that turns between them starts a new
      // count). Each answer says which window counted it; when the minute turned during a round, the
      // round is void and is run again with a new key in the next minute, so the checks below always
      // run on one window, however slow the machine.
      for (let round = 1; ; round++) {
        await minuteWithRoom(20)
        const key = await createAgentKey(front.baseUrl, ["catalog:read"])
        const before = [...front.hits]
        const answers: Array<Awaited<ReturnType<typeof counted>>> = []
        // Six waves of ten concurrent requests: the counter is one atomic upsert, so concurrency is fair game.
        for (let wave = 0; wave < 6; wave++)
          answers.push(
            ...(await Promise.all(
              Array.from({ length: 10 }, () => counted(url("/api/v1/agent/me"), { headers: key.auth }))
            ))
          )
        const perServer = front.hits.map((h, i) => h - before[i])
        // The 61st, on either process.
        const last = await Promise.all(
          servers.map((s) => counted(`${s.baseUrl}/api/v1/agent/me`, { headers: key.auth }))
        )
        const windows = new Set([...answers, ...last].map((a) => a.window))
        expect(
          windows.size === 1 || round < 3,
          `the minute turned during ${round} rounds in a row: ${[...windows].join(", ")}`
        ).toBe(true)
        if (windows.size > 1) continue
        expect(
          answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${JSON.stringify(a.body)}`),
          "all 60 pass"
        ).toEqual([])
        expect(Math.min(...perServer), `split across both: ${perServer.join("/")}`).toBeGreaterThanOrEqual(30)
        // Refused on both: the counter lives in the shared database.
        for (const a of last) {
          expect(a.status).toBe(429)
          expect(a.body).toMatchObject({ type: "RateLimited", window: "minute", limit: 60 })
        }
        return
      }
    }, 240_000)

    it("concurrent buys across both processes never overspend the wallet", async () => {
      const key = await createAgentKey(front.baseUrl, [...ALL])
      const tier = cheapestTier(await (await fetch(url(`${COMMERCE}/services`), { headers: key.auth })).json())
      expect(tier, "a buyable service").toBeDefined()
      const affordable = 10
      const topup = await fetch(url(`${COMMERCE}/wallet/topup`), {
        method: "POST",
        headers: { ...key.auth, "content-type": "application/json" },
        body: JSON.stringify({ amountCents: tier!.priceCents * affordable })
      })
      expect(topup.status, await topup.clone().text()).toBeLessThan(300)

      const body = JSON.stringify({ serviceId: tier!.serviceId, tierId: tier!.tierId, input: { prompt: "scale" } })
      const results = await Promise.all(
        Array.from({ length: affordable * 3 }, () =>
          fetch(url(`${COMMERCE}/buy`), {
            method: "POST",
            headers: { ...key.auth, "content-type": "application/json" },
            body
          }).then(async (r) => ({ status: r.status, text: await r.text() }))
        )
      )
      const ok = results.filter((r) => r.status < 300)
      const refused = results.filter((r) => r.status === 402)
      const other = results.filter((r) => r.status >= 300 && r.status !== 402)
      expect(
        other.map((r) => `${r.status} ${r.text.slice(0, 120)}`),
        "only successes and 402s"
      ).toEqual([])
      expect(ok.length, "exactly the affordable number of buys succeed").toBe(affordable)
      expect(refused.length).toBe(affordable * 2)
      const inv = await ledgerInvariants(db.url)
      expect(inv.totalCents).toBe(0)
      expect(inv.mismatched).toEqual([])
      expect(inv.negative).toEqual([])
      expect(inv.doubleSettled).toEqual([])
      expect(inv.unmatched).toEqual([])
      expect(inv.spendDrift).toEqual([])
      expect(inv.counterDrift).toEqual([])
    })

    it("a negotiation gets exactly one seller answer although both processes run workers", async () => {
      const key = await createAgentKey(front.baseUrl, [...ALL])
      // A seeded tier of at least 10 USD, offered at 70 %: the seller counters once, then it is the buyer's turn.
      const service = commerceServices.find((s) => s.tiers.some((t) => t.priceCents >= 1000))!
      const tier = service.tiers.find((t) => t.priceCents >= 1000)!
      const ids: Array<string> = []
      for (let i = 0; i < 6; i++) {
        const res = await fetch(url(`${COMMERCE}/negotiate`), {
          method: "POST",
          headers: { ...key.auth, "content-type": "application/json" },
          body: JSON.stringify({
            serviceId: service.id,
            tierId: tier.id,
            proposedPriceCents: Math.floor(tier.priceCents * 0.7)
          })
        })
        const text = await res.text()
        expect(res.status, text).toBe(201)
        ids.push(String((JSON.parse(text) as { id: string }).id))
      }
      interface Seen {
        status: string
        history: ReadonlyArray<{ by: string; action: string }>
      }
      const read = async (id: string) =>
        (await (await fetch(url(`${COMMERCE}/negotiations/${id}`), { headers: key.auth })).json()) as Seen
      // Every negotiation answered (the answer delay is 300 ms). An answered one is no longer due
      // (seller_due_at is cleared with the status), so no worker of either process can answer it again
      // later: one seller entry in its history and one answer event after the proposal.
      await vi.waitFor(
        async () => {
          for (const id of ids) expect((await read(id)).status, `negotiation ${id}`).not.toBe("awaiting_seller")
        },
        { timeout: 15_000, interval: 100 }
      )
      for (const id of ids) {
        const n = await read(id)
        const sellerAnswers = n.history.filter((h) => h.by === "seller")
        expect(sellerAnswers.length, `negotiation ${id}: ${JSON.stringify(n).slice(0, 400)}`).toBe(1)
        const events = await query<{ n: string }>(
          db.url,
          "SELECT count(*)::text AS n FROM events WHERE type = 'negotiation.updated' AND agent_id = $1 AND data->>'negotiationId' = $2",
          [key.agentId, id]
        )
        expect(Number(events[0].n), `${id}: the proposal and one answer`).toBe(2)
        const due = await query<{ due: Date | null }>(
          db.url,
          "SELECT seller_due_at AS due FROM negotiations WHERE id = $1",
          [id]
        )
        expect(due[0].due, `${id}: no longer due`).toBeNull()
      }
    })

    /** A pull seller's service published through process 0, and a buyer of process 1 with 1,000 credits. */
    const pullMarket = async (name: string, description: string) => {
      const seller = await createAgentKey(servers[0].baseUrl, [...ALL])
      const buyer = await createAgentKey(servers[1].baseUrl, [...ALL])
      const json = { "content-type": "application/json" }
      const published = await fetch(`${servers[0].baseUrl}${COMMERCE}/services`, {
        method: "POST",
        headers: { ...seller.auth, ...json },
        body: JSON.stringify({
          name,
          description,
          category: "testing",
          pricingModel: "per_call",
          tiers: [
            {
              id: "unit",
              name: "Unit",
              priceCents: 100,
              unit: "call",
              includedUnits: null,
              sla: { uptimePct: 99, p95LatencyMs: 5_000, supportWindow: "24/7" }
            }
          ],
          fulfilment: { mode: "pull" }
        })
      })
      expect(published.status, await published.clone().text()).toBe(201)
      const serviceId = ((await published.json()) as { id: string }).id
      const topup = await fetch(`${servers[1].baseUrl}${COMMERCE}/wallet/topup`, {
        method: "POST",
        headers: { ...buyer.auth, ...json },
        body: JSON.stringify({ amountCents: 1_000 })
      })
      expect(topup.status).toBeLessThan(300)
      return { seller, buyer, serviceId }
    }

    // docs/fulfilment.md "Pull": a list waiting in one process is woken by an order placed through the
    // other by that process's one reader, within about a second. The wait asked for is 20 s, so an
    // answer within 3 s of the buy is the reader's doing, not the wait running out (its fallback).
    it("a pull seller's list waiting in one process answers an order placed through the other within about a second", async () => {
      const { seller, buyer, serviceId } = await pullMarket(
        "Waited for",
        "a service its seller fulfils from a waiting list"
      )
      const json = { "content-type": "application/json" }

      const listed = fetch(`${servers[0].baseUrl}${COMMERCE}/orders?status=pending&waitMs=20000`, {
        headers: seller.auth
      }).then(async (r) => ({
        status: r.status,
        at: Date.now(),
        body: (await r.json()) as { orders: Array<{ id: string }> }
      }))
      // The list is waiting (nothing pending yet) before the buy goes to the other process.
      await new Promise((r) => setTimeout(r, 300))
      // Timed from the buy's sending: a buy from a pull seller may itself wait a while for the seller's answer.
      const boughtAt = Date.now()
      const bought = await fetch(`${servers[1].baseUrl}${COMMERCE}/buy`, {
        method: "POST",
        headers: { ...buyer.auth, ...json },
        body: JSON.stringify({ serviceId, tierId: "unit", input: { prompt: "wake the other process" } })
      })
      const purchase = (await bought.json()) as { status: string; transaction: { id: string } }
      expect(bought.status, JSON.stringify(purchase)).toBe(202)
      const page = await listed
      expect(page.status).toBe(200)
      expect(page.body.orders.map((o) => o.id)).toEqual([purchase.transaction.id])
      expect(page.at - boughtAt, "the list answered this long after the buy was sent (its wait was 20 s)").toBeLessThan(
        3_000
      )
    })

    it("a buy waiting on its seller in one process hears the answer given through the other within about a second", async () => {
      const { seller, buyer, serviceId } = await pullMarket(
        "Answered elsewhere",
        "a service whose seller answers through the other process"
      )
      const json = { "content-type": "application/json" }

      // An A2A buy through process 1 waits for the seller's answer (ORDER_WAIT_MS, 10 s by default).
      const task = fetch(`${servers[1].baseUrl}/a2a`, {
        method: "POST",
        headers: { ...buyer.auth, ...json },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: {
            message: {
              messageId: `m-${randomBytes(4).toString("hex")}`,
              role: "ROLE_USER",
              parts: [{ data: { skill: "buy", serviceId, tierId: "unit", input: { q: "answered elsewhere" } } }]
            }
          }
        })
      }).then(async (r) => ({
        at: Date.now(),
        body: (await r.json()) as { result?: { task?: { id: string; status: { state: string } } } }
      }))
      // The seller finds the order through process 0 and delivers it there.
      const listed = await fetch(`${servers[0].baseUrl}${COMMERCE}/orders?status=pending&waitMs=8000`, {
        headers: seller.auth
      })
      const orders = ((await listed.json()) as { orders: Array<{ id: string }> }).orders
      expect(orders).toHaveLength(1)
      const deliveredAt = Date.now()
      const delivered = await fetch(`${servers[0].baseUrl}${COMMERCE}/orders/${orders[0].id}/deliver`, {
        method: "POST",
        headers: { ...seller.auth, ...json },
        body: JSON.stringify({ output: { answer: 42 } })
      })
      expect(delivered.status, await delivered.clone().text()).toBe(200)
      const answered = await task
      expect(answered.body.result?.task, JSON.stringify(answered.body)).toMatchObject({
        id: orders[0].id,
        status: { state: "TASK_STATE_COMPLETED" }
      })
      // Process 1's reader asks the store once a second for what other processes ended.
      expect(answered.at - deliveredAt, "the buy answered this long after the delivery elsewhere").toBeLessThan(3_000)
    })

    it("a webhook event is delivered once per attempt although both processes run workers", async () => {
      const key = await createAgentKey(front.baseUrl, [...ALL])
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
      const port = await new Promise<number>((r) =>
        receiver.listen(0, "127.0.0.1", () => r((receiver.address() as { port: number }).port))
      )
      try {
        const put = await fetch(url("/api/v1/agent/webhook"), {
          method: "PUT",
          headers: { ...key.auth, "content-type": "application/json" },
          body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, events: ["*"] })
        })
        expect(put.status, await put.clone().text()).toBeLessThan(300)
        // Test pings through the front land on both processes; each is one event, answered 200 at once.
        const pings = 6
        for (let i = 0; i < pings; i++) {
          const ping = await fetch(url("/api/v1/agent/webhook/test"), {
            method: "POST",
            headers: { ...key.auth, "content-type": "application/json" },
            body: "{}"
          })
          expect(ping.status, await ping.clone().text()).toBe(202)
        }
        await vi.waitFor(() => expect(new Set(pinged).size, `test deliveries: ${pinged.join(", ")}`).toBe(pings), {
          timeout: 15_000,
          interval: 50
        })
        expect(received.length, `each event delivered once: ${received.join(", ")}`).toBe(new Set(received).size)
        // As the outbox records it: each test event's delivery succeeded on one attempt, and a succeeded
        // delivery is never claimed again, so nothing more can arrive later.
        const deliveries = await query<{ status: string; attempts: number; logged: string }>(
          db.url,
          `SELECT d.status, d.attempts, (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id)::text AS logged
         FROM webhook_deliveries d WHERE d.agent_id = $1 AND d.event_type = 'webhook.test'`,
          [key.agentId]
        )
        expect(deliveries.map((d) => [d.status, d.attempts, Number(d.logged)])).toEqual(
          Array.from({ length: pings }, () => ["succeeded", 1, 1])
        )
        expect(pinged.length, "no test event twice").toBe(pings)
      } finally {
        receiver.closeAllConnections()
        await new Promise((r) => receiver.close(r))
      }
    })

    it("a dead webhook endpoint with 400 waiting events holds at most 2 deliveries in flight across both processes while another agent's 50 events all go out; once back, its backlog arrives once each", async () => {
      const a = await createAgentKey(front.baseUrl, [...ALL])
      const b = await createAgentKey(front.baseUrl, [...ALL])
      /** A receiver on 127.0.0.1 with a swappable handler. */
      const listen = async (handler: { current: (req: IncomingMessage, res: ServerResponse) => void }) => {
        const server = createServer((req, res) => handler.current(req, res))
        const port = await new Promise<number>((r) =>
          server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port))
        )
        return { server, url: `http://127.0.0.1:${port}/hook` }
      }
      const arrivals = new Set<string>()
      const fast = await listen({
        current: (req, res) => {
          arrivals.add(String(req.headers["webhook-id"]))
          req.resume()
          req.on("end", () => res.writeHead(204).end())
        }
      })
      // Accepts the request, never answers (the sender gives up at WEBHOOK_TIMEOUT_MS); counts the
      // requests open at once. Later answers 204 and records what it accepted.
      let open = 0
      let mostOpen = 0
      const accepted = new Map<string, number>()
      const deadHandler = {
        current: (_req: IncomingMessage, res: ServerResponse) => {
          open++
          mostOpen = Math.max(mostOpen, open)
          res.once("close", () => open--)
        }
      }
      const dead = await listen(deadHandler)
      const outbox = new pg.Client({ connectionString: db.url })
      await outbox.connect()
      try {
        for (const [key, target] of [
          [a, dead.url],
          [b, fast.url]
        ] as const) {
          const put = await fetch(url("/api/v1/agent/webhook"), {
            method: "PUT",
            headers: { ...key.auth, "content-type": "application/json" },
            body: JSON.stringify({ url: target, events: ["wallet.recharged"] })
          })
          expect(put.status, await put.clone().text()).toBe(200)
        }
        const newId = () => `evt_${randomBytes(12).toString("base64url")}`
        /** Outbox rows as a service's transaction writes them; the workers of both processes fan them out. */
        const insert = (agentId: string, ids: ReadonlyArray<string>) =>
          outbox.query(
            `INSERT INTO events (id, type, agent_id, occurred_at, data)
           SELECT id, 'wallet.recharged', $1, now(), '{"amountCents":500,"balanceCents":1500}'::jsonb FROM unnest($2::text[]) AS id`,
            [agentId, ids]
          )

        const backlog = Array.from({ length: 400 }, newId)
        await insert(a.agentId, backlog)
        // The dead endpoint's first attempts are in flight (it holds its share of the workers).
        await vi.waitFor(() => expect(open).toBeGreaterThan(0), { timeout: 15_000, interval: 10 })
        // The healthy endpoint's events, one after another, each delivered while the dead one waits.
        for (let i = 0; i < 50; i++) {
          const id = newId()
          await insert(b.agentId, [id])
          await vi.waitFor(() => expect(arrivals.has(id), `event ${id} of the healthy endpoint`).toBe(true), {
            timeout: 15_000,
            interval: 2
          })
        }
        // The rule (docs/webhooks.md "Fair delivery"): at most 2 of an endpoint's deliveries in flight,
        // counted over leases, so across both processes; the other 30 slots of each process stay free.
        expect(
          mostOpen,
          "the dead endpoint's deliveries in flight at once, both processes together"
        ).toBeLessThanOrEqual(2)
        expect(mostOpen).toBeGreaterThan(0)
        const shown = (await (await fetch(url("/api/v1/agent/webhook"), { headers: a.auth })).json()) as {
          pendingCount: number
          lastError: string | null
        }
        expect(shown.pendingCount, "the dead endpoint's backlog still waits").toBe(400)

        // Fixed; its owner turns it back on: the backlog arrives, each event once by webhook-id.
        deadHandler.current = (req, res) => {
          const id = String(req.headers["webhook-id"])
          req.resume()
          req.on("end", () => {
            accepted.set(id, (accepted.get(id) ?? 0) + 1)
            res.writeHead(204).end()
          })
        }
        const resumed = await fetch(url("/api/v1/agent/webhook"), {
          method: "PUT",
          headers: { ...a.auth, "content-type": "application/json" },
          body: JSON.stringify({ url: dead.url, events: ["wallet.recharged"] })
        })
        expect(resumed.status).toBe(200)
        await vi.waitFor(
          async () => {
            const after = (await (await fetch(url("/api/v1/agent/webhook"), { headers: a.auth })).json()) as {
              pendingCount: number
              status: string
            }
            expect(after).toMatchObject({ pendingCount: 0, status: "active" })
          },
          { timeout: 60_000, interval: 200 }
        )
        expect([...accepted.keys()].sort()).toEqual([...backlog].sort())
        expect(
          [...accepted.values()].filter((n) => n !== 1),
          "each once"
        ).toEqual([])
      } finally {
        await outbox.end()
        for (const s of [fast.server, dead.server]) {
          s.closeAllConnections()
          await new Promise((r) => s.close(r))
        }
      }
    }, 120_000)
  }
)
