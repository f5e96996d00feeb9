// Fault test on Postgres, against the server in its own process (the esbuild bundle `npm start`
// runs): negotiations waiting for the seller's answer and sagas mid-step (waiting on a slow or
// silent seller, or in flight between steps) when the server is killed with SIGKILL; after a
// restart — plus a second replica on the same database — every negotiation is answered exactly
// once, every saga ends completed or compensated, and the ledger still sums to zero.
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { postgresSkipReason } from "../fixtures/db.js"
import {
  buildServer,
  freshDatabaseUrl,
  ledgerInvariants,
  query,
  startServerProcess,
  type ServerProcess
} from "../scale/harness.js"

const COMMERCE = "/api/v1/agent/commerce"
const NEGOTIATION_DELAY_MS = 6000

/** A balanced grant written straight into the ledger tables (the out-of-process server has no test hook). */
const grant = async (url: string, agentId: string, amount: number) => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query("BEGIN")
    const entry = await c.query<{ seq: string }>(
      "INSERT INTO ledger_entries (id, kind, reference, memo, created_at) VALUES ($1, 'grant', $2, 'restart test funding', now()) RETURNING seq",
      [`je_restart_${agentId}`, `fund-${agentId}`]
    )
    const seq = entry.rows[0].seq
    for (const [account, delta] of [
      [`wallet:${agentId}`, amount],
      ["external:grants", -amount]
    ] as const) {
      await c.query("INSERT INTO ledger_postings (entry_seq, account, amount) VALUES ($1, $2, $3)", [
        seq,
        account,
        delta
      ])
      await c.query(
        "INSERT INTO ledger_balances (account, balance) VALUES ($1, $2) ON CONFLICT (account) DO UPDATE SET balance = ledger_balances.balance + EXCLUDED.balance",
        [account, delta]
      )
    }
    await c.query("COMMIT")
  } finally {
    await c.end()
  }
}

describe.skipIf(postgresSkipReason !== undefined)(
  `restart with negotiations and sagas in flight${postgresSkipReason ? ` — ${postgresSkipReason}` : ""}`,
  () => {
    let bundle: string
    let db: { url: string; drop: () => Promise<void> }
    const running: Array<ServerProcess> = []
    const env = () => ({
      STORAGE: "postgres",
      DATABASE_URL: db.url,
      RATE_LIMIT_PER_MINUTE: "100000",
      RATE_LIMIT_PER_DAY: "10000000",
      NEGOTIATION_DELAY_MS: String(NEGOTIATION_DELAY_MS)
    })
    const start = async () => {
      const p = await startServerProcess(bundle, env())
      running.push(p)
      return p
    }

    beforeAll(async () => {
      bundle = await buildServer()
      db = await freshDatabaseUrl()
    }, 90_000)
    afterAll(async () => {
      for (const p of running) await p.stop()
      await db?.drop()
    })

    it("kill -9 mid-flight, restart (and a second replica): answered exactly once, sagas terminal, ledger balanced", async () => {
      const first = await start()
      const post = (base: string, k: AgentKey, p: string, body: unknown) =>
        fetch(`${base}${p}`, {
          method: "POST",
          headers: { ...k.auth, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const key = await createAgentKey(first.baseUrl, ["commerce:*"])
      const FUNDS = 200_000
      await grant(db.url, key.agentId, FUNDS)

      // Negotiations waiting for the seller (answers due 6 s after creation).
      const negotiations: Array<string> = []
      for (let i = 0; i < 6; i++) {
        const res = await post(first.baseUrl, key, `${COMMERCE}/negotiate`, {
          serviceId: "svc_doc_translate",
          tierId: "business",
          proposedPriceCents: 5000 + i * 10
        })
        expect(res.status).toBe(201)
        negotiations.push(((await res.json()) as { id: string }).id)
      }
      // Sagas parked in deliver: a slow seller (answers after 4 s, timeout 8 s) and a silent one (times out at 8 s).
      const parked: Array<{ id: string; expect: "completed" | "compensated" }> = []
      for (let i = 0; i < 3; i++) {
        for (const [input, outcome] of [
          [{ simulate: "slow", delayMs: 4000 }, "completed"],
          [{ simulate: "timeout" }, "compensated"]
        ] as const) {
          const res = await post(first.baseUrl, key, `${COMMERCE}/saga`, {
            serviceId: "svc_image_gen",
            tierId: "hd",
            input
          })
          const saga = (await res.json()) as { id: string; status: string; currentStep: string }
          expect(saga).toMatchObject({ status: "running", currentStep: "deliver" })
          parked.push({ id: saga.id, expect: outcome })
        }
      }
      // Sagas in flight between steps when the process dies.
      let stop = false
      const started: Array<string> = []
      const buyer = async () => {
        while (!stop) {
          const res = await post(first.baseUrl, key, `${COMMERCE}/saga`, {
            serviceId: "svc_web_scrape",
            tierId: "basic",
            input: {}
          }).catch(() => undefined)
          if (!res) return
          const body = (await res.json().catch(() => ({}))) as { id?: string }
          if (body.id) started.push(body.id)
        }
      }
      const buyers = Array.from({ length: 6 }, buyer)
      // Killed once a few of them have started (the six buyers keep more in flight).
      await vi.waitFor(() => expect(started.length).toBeGreaterThanOrEqual(6), { timeout: 20_000, interval: 10 })
      await first.kill9()
      stop = true
      await Promise.all(buyers)
      const beforeRestart = await query<{ n: string }>(
        db.url,
        "SELECT count(*)::text AS n FROM negotiations WHERE status = 'awaiting_seller'"
      )
      expect(Number(beforeRestart[0].n), "every negotiation still waits for its answer at the kill").toBe(
        negotiations.length
      )
      const midStep = await query<{ step: string; n: string }>(
        db.url,
        "SELECT s->>'name' AS step, count(*)::text AS n FROM sagas, jsonb_array_elements(steps) s WHERE status = 'running' AND s->>'status' IN ('pending','running') AND s->>'name' = (SELECT t->>'name' FROM jsonb_array_elements(steps) t WHERE t->>'status' IN ('pending','running') LIMIT 1) GROUP BY 1"
      )
      const runningAtKill = midStep.reduce((sum, r) => sum + Number(r.n), 0)
      expect(runningAtKill, `sagas open at the kill, by step: ${JSON.stringify(midStep)}`).toBeGreaterThanOrEqual(
        parked.length
      )

      // Restart, and a second replica on the same database: both run the workers.
      const second = await start()
      await start()
      await vi.waitFor(
        async () => {
          const open = await query<{ n: string }>(
            db.url,
            "SELECT ((SELECT count(*) FROM negotiations WHERE status = 'awaiting_seller') + (SELECT count(*) FROM sagas WHERE status = 'running'))::text AS n"
          )
          expect(Number(open[0].n), `negotiations and sagas still open after the restart\n${second.output()}`).toBe(0)
        },
        { timeout: 40_000, interval: 250 }
      )

      // Negotiations: each answered once (one seller entry, one answer event to the buyer).
      for (const id of negotiations) {
        const n = (await (
          await fetch(`${second.baseUrl}${COMMERCE}/negotiations/${id}`, { headers: key.auth })
        ).json()) as {
          status: string
          round: number
          history: ReadonlyArray<{ by: string }>
        }
        expect(n.status, id).toBe("awaiting_buyer")
        expect(n.round, id).toBe(1)
        expect(
          n.history.filter((h) => h.by === "seller"),
          id
        ).toHaveLength(1)
        const events = await query<{ n: string }>(
          db.url,
          "SELECT count(*)::text AS n FROM events WHERE type = 'negotiation.updated' AND agent_id = $1 AND data->>'negotiationId' = $2",
          [key.agentId, id]
        )
        expect(Number(events[0].n), `${id}: proposal + one answer`).toBe(2)
      }

      // Sagas: none in between; the parked ones end as their seller behaved.
      const statuses = await query<{ id: string; status: string; price_cents: string | null }>(
        db.url,
        "SELECT id, status, price_cents::text FROM sagas"
      )
      expect(statuses.filter((s) => s.status !== "completed" && s.status !== "compensated")).toEqual([])
      for (const p of parked) expect(statuses.find((s) => s.id === p.id)?.status, p.id).toBe(p.expect)
      expect(statuses.length).toBeGreaterThanOrEqual(parked.length + started.length)

      // The books: zero sum, balances match postings, nothing settled twice or both settled and released.
      const inv = await ledgerInvariants(db.url)
      expect(inv.totalCents).toBe(0)
      expect(inv.mismatched).toEqual([])
      expect(inv.negative).toEqual([])
      expect(inv.doubleSettled).toEqual([])
      expect(
        inv.spendDrift,
        "the running spend totals equal a recomputation (sagas settled across the restart)"
      ).toEqual([])
      expect(inv.counterDrift, "the agents' counters equal a recomputation").toEqual([])
      const charged = statuses
        .filter((s) => s.status === "completed")
        .reduce((sum, s) => sum + Number(s.price_cents), 0)
      const wallet = await query<{ balance: string }>(
        db.url,
        "SELECT balance::text FROM ledger_account_balances WHERE account = $1",
        [`wallet:${key.agentId}`]
      )
      expect(Number(wallet[0].balance), "the buyer paid exactly the completed sagas").toBe(FUNDS - charged)
      const escrow = await query<{ n: string }>(
        db.url,
        "SELECT count(*)::text AS n FROM ledger_account_balances WHERE account LIKE 'escrow:%' AND balance <> 0"
      )
      expect(Number(escrow[0].n), "no money left in escrow").toBe(0)
      // Each completed saga joined the commerce history exactly once.
      const history = await query<{ completed: string; linked: string; total: string }>(
        db.url,
        `SELECT (SELECT count(*) FROM commerce_transactions WHERE buyer_agent_id = $1 AND status = 'completed')::text AS completed,
              (SELECT count(*) FROM sagas s JOIN commerce_transactions t ON t.id = s.transaction_id AND t.status = 'completed' WHERE s.status = 'completed')::text AS linked,
              (SELECT COALESCE(SUM(price_cents), 0) FROM commerce_transactions WHERE buyer_agent_id = $1 AND status = 'completed')::text AS total`,
        [key.agentId]
      )
      const completedSagas = statuses.filter((s) => s.status === "completed").length
      expect(Number(history[0].completed)).toBe(completedSagas)
      expect(Number(history[0].linked)).toBe(completedSagas)
      expect(Number(history[0].total)).toBe(charged)
    }, 120_000)
  }
)
