// A keyed purchase cut off mid-flight — its process killed, or its database gone — and the
// client's retry with the same Idempotency-Key: one outcome, charged once, within seconds (never a
// 409 until a long lease runs out). Two compiled servers on a PostgreSQL cluster of the test's own;
// the purchase is held mid-flight by a lock the test takes on the transactions table.
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
const env = (url: string) => ({
  STORAGE: "postgres",
  DATABASE_URL: url,
  RATE_LIMIT_PER_MINUTE: "100000",
  RATE_LIMIT_PER_DAY: "10000000"
})

/** Holds an EXCLUSIVE lock on commerce_transactions (reads go on; a purchase's insert waits) until `release`. */
const holdPurchases = async (url: string) => {
  const c = new pg.Client({ connectionString: url })
  c.on("error", () => undefined) // the database may go away under it
  await c.connect()
  await c.query("BEGIN")
  await c.query("LOCK TABLE commerce_transactions IN EXCLUSIVE MODE")
  return {
    release: () =>
      c
        .query("ROLLBACK")
        .catch(() => undefined)
        .then(() => c.end().catch(() => undefined))
  }
}

/** Resolves once the server's purchase is waiting on the test's lock: the attempt is mid-flight. */
const waitUntilBlocked = async (url: string) => {
  for (let i = 0; i < 200; i++) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      const rows = (
        await c.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = 'agent-commerce' AND wait_event_type = 'Lock'"
        )
      ).rows
      if (rows.length > 0) return
    } finally {
      await c.end()
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error("the purchase never reached the lock")
}

const purchasesWithKey = async (url: string, agentId: string, key: string) => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return Number(
      (
        await c.query(
          "SELECT count(*)::int AS n FROM commerce_transactions WHERE buyer_agent_id = $1 AND idempotency_key = $2",
          [agentId, key]
        )
      ).rows[0].n
    )
  } finally {
    await c.end()
  }
}

describe.skipIf(skip !== undefined)(`a keyed purchase cut off mid-flight${skip ? ` — ${skip}` : ""}`, () => {
  let bundle: string
  let db: ThrowawayPostgres
  let a: ServerProcess | undefined
  let b: ServerProcess | undefined
  let key: AgentKey
  let body: string
  let priceCents: number
  const buy = (server: ServerProcess, idempotencyKey: string) =>
    fetch(`${server.baseUrl}${COMMERCE}/buy`, {
      method: "POST",
      headers: { ...key.auth, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body
    })
  const balance = async (server: ServerProcess) =>
    (
      (await (await fetch(`${server.baseUrl}${COMMERCE}/wallet`, { headers: key.auth })).json()) as {
        balanceCents: number
      }
    ).balanceCents

  beforeAll(async () => {
    requirePrerequisite(missing)
    bundle = await buildServer()
    db = await startThrowawayPostgres()
    a = await startServerProcess(bundle, env(db.url))
    b = await startServerProcess(bundle, env(db.url))
    key = await createAgentKey(a.baseUrl, ["catalog:read", "commerce:*"])
    const tier = cheapestTier(await (await fetch(`${a.baseUrl}${COMMERCE}/services`, { headers: key.auth })).json())!
    priceCents = tier.priceCents
    body = JSON.stringify({ serviceId: tier.serviceId, tierId: tier.tierId, input: { prompt: "failover" } })
    const topup = await fetch(`${a.baseUrl}${COMMERCE}/wallet/topup`, {
      method: "POST",
      headers: { ...key.auth, "content-type": "application/json" },
      body: JSON.stringify({ amountCents: 100_000 })
    })
    expect(topup.status, await topup.clone().text()).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    db?.destroy()
  })

  it("its process is killed: the retry against another process runs within seconds, and the purchase exists once", async () => {
    const before = await balance(b!)
    const lock = await holdPurchases(db.url)
    const first = buy(a!, "killed-1").catch(() => undefined)
    await waitUntilBlocked(db.url)
    await a!.kill9()
    a = undefined
    await first
    await lock.release()

    const started = Date.now()
    const retry = await buy(b!, "killed-1")
    const text = await retry.text()
    const waited = Date.now() - started
    expect(retry.status, text).toBe(201)
    // The dead attempt's lease (5 s) lapses inside the retry's own wait (10 s): no 409, no second try
    // needed. The bound tells that from a long lease (a retry made to wait longer for it would answer
    // after 30 s or more); it leaves the purchase itself time on a loaded machine (a CI run took 10.4 s
    // against a 9 s bound, the lease lapsing within 5 s).
    expect(waited, "the retry was answered after the short lease, not after a long one").toBeLessThan(20_000)
    expect(await purchasesWithKey(db.url, key.agentId, "killed-1"), "one purchase for the key").toBe(1)
    expect(await balance(b!), "charged once").toBe(before - priceCents)
    // And from now on the answer is replayed.
    const again = await buy(b!, "killed-1")
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect((JSON.parse(await again.text()) as { transaction: { id: string } }).transaction.id).toBe(
      (JSON.parse(text) as { transaction: { id: string } }).transaction.id
    )
  }, 60_000)

  it("its database is lost (the key cannot even be released): a 503 with Retry-After, then the retry runs once the database is back", async () => {
    const before = await balance(b!)
    const lock = await holdPurchases(db.url)
    const first = buy(b!, "lost-1")
    await waitUntilBlocked(db.url)
    db.stop()
    const cut = await first
    await lock.release()
    expect(cut.status, await cut.text()).toBe(503)
    expect(cut.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
    db.start()

    // The client retries as told until it gets an answer that is not a 503.
    const started = Date.now()
    let retry: Response
    const statuses: Array<number> = []
    for (;;) {
      retry = await buy(b!, "lost-1")
      statuses.push(retry.status)
      if (retry.status !== 503 || Date.now() - started > 30_000) break
      await new Promise((r) => setTimeout(r, Number(retry.headers.get("retry-after") ?? "1") * 1000))
    }
    const text = await retry.text()
    expect(retry.status, `${statuses.join(",")}: ${text}`).toBe(201)
    expect(
      statuses.filter((s) => s === 409),
      "never refused as still in progress"
    ).toEqual([])
    expect(Date.now() - started, "answered within seconds of the database's return").toBeLessThan(12_000)
    expect(await purchasesWithKey(db.url, key.agentId, "lost-1"), "one purchase for the key").toBe(1)
    expect(await balance(b!), "charged once").toBe(before - priceCents)
  }, 90_000)
})
