// The primary killed under load, as an operator would meet it (ops/ha/: etcd, two Patroni nodes
// in synchronous mode, haproxy routing to the primary, two service processes). Several agents buy,
// propose prices and top up through both processes with a fresh Idempotency-Key each, honouring
// Retry-After; the primary's Patroni and postmaster are killed with -9; the load goes on through the
// failover; every request that failed is then retried once with its key and body. What a client is
// promised: every acknowledged purchase exists, nothing is charged or credited twice, every
// acknowledged proposal exists once (the one its client was told of) and none other, the books
// check, no 5xx but 503, every 503 says Retry-After, every retried key (at least one buy among them) has one outcome, and buying
// stops no longer than the database itself does (+ 2 s).
import { execFile, spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { underContract } from "../fixtures/contract.js"
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import { cheapestTier, freePort, ledgerInvariants } from "../scale/harness.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const HA = path.join(root, "ops", "ha")
const PG_BIN = "/usr/lib/postgresql/15/bin"
const COMMERCE = "/api/v1/agent/commerce"
const AGENTS = 6
// Of every five requests of a loop: three buys, a price proposal, a top-up.
const kindOf = (n: number): Attempt["kind"] => (n % 5 === 4 ? "topup" : n % 5 === 2 ? "negotiate" : "buy")
const PATHS: Record<Attempt["kind"], string> = { buy: "buy", negotiate: "negotiate", topup: "wallet/topup" }
const CLIENT_TIMEOUT_MS = 15_000

/** What is missing to run the cluster here, or undefined. */
const haMissing = (): string | undefined => {
  const absent = ["etcd", "patroni", "haproxy", "curl"].filter(
    (c) => spawnSync("sh", ["-c", `command -v ${c}`]).status !== 0
  )
  if (absent.length > 0)
    return `${absent.join(", ")} not installed (apt-get install -y patroni etcd-server haproxy; .ci/run does)`
  if (spawnSync(path.join(PG_BIN, "postgres"), ["--version"]).status !== 0) return `no PostgreSQL 15 at ${PG_BIN}`
  if (process.getuid?.() === 0 && spawnSync("id", ["-u", "postgres"]).status !== 0)
    return "running as root and there is no postgres user to run PostgreSQL as"
  return undefined
}
const missing = haMissing()
const skip = skipUnlessCi(missing, false)

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer()
    s.once("error", () => resolve(false))
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)))
  })

interface Attempt {
  readonly kind: "buy" | "negotiate" | "topup"
  readonly agent: number
  readonly key: string
  readonly body: string
  readonly phase: "load" | "retry"
  readonly started: number
  readonly ended: number
  /** HTTP status, or 0 when no answer came (connection error, client timeout). */
  readonly status: number
  readonly retryAfter: string | null
  readonly json: Record<string, unknown> | undefined
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const gapAround = (times: ReadonlyArray<number>, from: number, to: number) => {
  const inside = times.filter((t) => t >= from && t <= to).sort((a, b) => a - b)
  let gap = 0
  for (let i = 1; i < inside.length; i++) gap = Math.max(gap, inside[i] - inside[i - 1])
  return gap
}

describe.skipIf(skip !== undefined)(`failover of the primary under buy load${skip ? ` — ${skip}` : ""}`, () => {
  const haDir = mkdtempSync(path.join(os.tmpdir(), "ha-failover-"))
  // PostgreSQL runs as the postgres user when the test runs as root: it must reach the cluster's folder.
  chmodSync(haDir, 0o755)
  const env: Record<string, string> = { HA_DIR: path.join(haDir, "cluster") }
  let databaseUrl = ""
  let urls: Array<string> = []
  const releases: Array<() => void> = []
  // A script that fails brings the cluster's logs (etcd, both nodes, the services) with its error.
  const script = (name: string, args: ReadonlyArray<string> = [], timeout = 180_000) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        "bash",
        [path.join(HA, name), ...args],
        { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env }, timeout },
        (error, stdout, stderr) =>
          error ? reject(new Error(`ops/ha/${name} failed: ${error.message}\n${stderr}\n${logs()}`)) : resolve(stdout)
      )
    )
  const logs = () => {
    const dir = path.join(env.HA_DIR, "log")
    try {
      return readdirSync(dir)
        .map((f) => `--- ${f}\n${readFileSync(path.join(dir, f), "utf8").slice(-3000)}`)
        .join("\n")
    } catch {
      return "(no logs)"
    }
  }

  beforeAll(async () => {
    requirePrerequisite(missing)
    for (const name of [
      "ETCD_PORT",
      "ETCD_PEER_PORT",
      "PG1_PORT",
      "PG2_PORT",
      "API1_PORT",
      "API2_PORT",
      "HAPROXY_PORT",
      "HAPROXY_STATS_PORT"
    ])
      env[name] = String(await freePort())
    let service = await freePort()
    while (!(await portFree(service + 1))) service = await freePort()
    env.SERVICE_PORT = String(service)
    const up = await script("up.sh")
    databaseUrl = /DATABASE_URL=(\S+)/.exec(up)![1]
    // The build of the source under test (FAILOVER_BUILD=0 reuses dist/ while iterating on the test itself).
    Object.assign(env, {
      BUILD: process.env.FAILOVER_BUILD ?? "1",
      RATE_LIMIT_PER_MINUTE: "1000000",
      RATE_LIMIT_PER_DAY: "100000000",
      NEGOTIATION_DELAY_MS: "200"
    })
    urls = (await script("services.sh", ["2"]))
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("http://"))
    expect(urls).toHaveLength(2)
    for (const url of urls) releases.push((await underContract(url)).release)
  }, 240_000)

  afterAll(async () => {
    await script("down.sh", [], 60_000).catch((e: unknown) => console.error(String(e)))
    rmSync(haDir, { recursive: true, force: true })
    for (const release of releases) release()
  }, 90_000)

  it("kill -9 of the primary's Patroni and postmaster: the load rides through, and every promise holds", async () => {
    // Agents, each funded through the first process.
    const keys: Array<AgentKey> = []
    for (let i = 0; i < AGENTS; i++) keys.push(await createAgentKey(urls[i % 2], ["catalog:read", "commerce:*"]))
    const tier = cheapestTier(await (await fetch(`${urls[0]}${COMMERCE}/services`, { headers: keys[0].auth })).json())!
    expect(tier, "a buyable service").toBeDefined()
    const buyBody = JSON.stringify({ serviceId: tier.serviceId, tierId: tier.tierId, input: { prompt: "failover" } })
    const topupBody = JSON.stringify({ amountCents: 700 })
    const negotiateBody = JSON.stringify({
      serviceId: tier.serviceId,
      tierId: tier.tierId,
      proposedPriceCents: Math.max(1, Math.floor(tier.priceCents * 0.9))
    })
    const bodies: Record<Attempt["kind"], string> = { buy: buyBody, negotiate: negotiateBody, topup: topupBody }
    const funding = 1_000_000
    for (const key of keys) {
      const res = await fetch(`${urls[0]}${COMMERCE}/wallet/topup`, {
        method: "POST",
        headers: { ...key.auth, "content-type": "application/json" },
        body: JSON.stringify({ amountCents: funding })
      })
      expect(res.status, await res.clone().text()).toBe(201)
    }

    const attempts: Array<Attempt> = []
    const send = async (
      agent: number,
      kind: Attempt["kind"],
      key: string,
      body: string,
      url: string,
      phase: Attempt["phase"]
    ): Promise<Attempt> => {
      const started = Date.now()
      let status = 0
      let retryAfter: string | null = null
      let json: Record<string, unknown> | undefined
      try {
        const res = await fetch(`${url}${COMMERCE}/${PATHS[kind]}`, {
          method: "POST",
          headers: { ...keys[agent].auth, "content-type": "application/json", "idempotency-key": key },
          body,
          signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS)
        })
        status = res.status
        retryAfter = res.headers.get("retry-after")
        const text = await res.text()
        try {
          json = JSON.parse(text) as Record<string, unknown>
        } catch {
          json = undefined
        }
      } catch {
        status = 0
      }
      const attempt: Attempt = { kind, agent, key, body, phase, started, ended: Date.now(), status, retryAfter, json }
      attempts.push(attempt)
      return attempt
    }

    // The database's own window: a bare writer through haproxy, one insert every 100 ms.
    const probes: Array<number> = []
    let stopping = false
    const prober = (async () => {
      let client: pg.Client | undefined
      while (!stopping) {
        try {
          if (!client) {
            client = new pg.Client({
              connectionString: databaseUrl,
              connectionTimeoutMillis: 1_000,
              query_timeout: 2_000
            })
            client.on("error", () => undefined)
            await client.connect()
            await client.query("CREATE TABLE IF NOT EXISTS failover_probe (at timestamptz NOT NULL)")
          }
          await client.query("INSERT INTO failover_probe VALUES (now())")
          probes.push(Date.now())
        } catch {
          // Not awaited: ending a client whose server vanished mid-query may never settle.
          void client?.end().catch(() => undefined)
          client = undefined
        }
        await sleep(100)
      }
      void client?.end().catch(() => undefined)
    })()

    // The load: one loop per agent, alternating processes, honouring Retry-After.
    let turn = 0
    const loop = async (agent: number) => {
      for (let n = 0; !stopping; n++) {
        const kind = kindOf(n)
        const a = await send(agent, kind, `${kind}-${agent}-${n}`, bodies[kind], urls[turn++ % 2], "load")
        if (a.status === 503) await sleep(Number(a.retryAfter ?? "1") * 1000)
        else if (a.status === 0) await sleep(250)
      }
    }
    const loops = keys.map((_, i) => loop(i))
    const ok = (a: Attempt) => a.status >= 200 && a.status < 300
    const boughtAfter = (t: number) => attempts.filter((a) => a.kind === "buy" && ok(a) && a.ended > t).length

    try {
      const warm = Date.now()
      while (Date.now() - warm < 5_000 || boughtAfter(warm) < 50) {
        if (Date.now() - warm > 60_000) throw new Error(`no load before the kill: ${boughtAfter(warm)} buys`)
        await sleep(100)
      }
      const killedAt = Date.now()
      const killedPort = (await script("kill-primary.sh", [], 30_000)).trim().split("\n").pop()!
      // The standby's Patroni says when it is the primary. Until then a write that succeeds may still
      // be an old backend of the killed postmaster finishing its connection, not the cluster back.
      const standbyPort = killedPort === env.API1_PORT ? env.API2_PORT : env.API1_PORT
      const promoted = () =>
        fetch(`http://127.0.0.1:${standbyPort}/primary`, { signal: AbortSignal.timeout(1_000) }).then(
          (r) => r.status === 200,
          () => false
        )
      let promotedAt = 0
      // Until the standby is promoted and both the bare writer and buying are back after it, then 4 s
      // more of load on the new primary.
      const deadline = killedAt + 90_000
      while (!(promotedAt > 0 && probes.some((t) => t > promotedAt) && boughtAfter(promotedAt) > 0)) {
        if (promotedAt === 0 && (await promoted())) promotedAt = Date.now()
        if (Date.now() > deadline) {
          const after = probes.filter((t) => t > killedAt + 500).length
          const status = await script("status.sh", [], 10_000).catch((e: unknown) => String(e))
          throw new Error(
            `no recovery within 90 s (standby ${promotedAt > 0 ? "promoted" : "not promoted"}): ${after} bare writes and ${boughtAfter(killedAt + 500)} buys since the kill\n${status}\n${logs()}`
          )
        }
        await sleep(100)
      }
      const recovered = Date.now()
      await sleep(4_000)
      stopping = true
      await Promise.all([...loops, prober])

      // Every request that got no answer or a 5xx is retried with its key and body, as a client told
      // Retry-After would: again after that many seconds while it is still 503 (a cluster that came
      // back for a moment may still be electing its leader), at most five rounds.
      const failed = attempts.filter((a) => a.phase === "load" && (a.status === 0 || a.status >= 500))
      const retried = new Map<string, Attempt>()
      for (let round = 0; round < 5; round++) {
        const due = failed.filter((a) => {
          const last = retried.get(`${a.agent}/${a.key}`)
          return last === undefined || last.status === 0 || last.status === 503
        })
        if (due.length === 0) break
        if (round > 0)
          await sleep(
            1_000 * Math.max(1, ...due.map((a) => Number(retried.get(`${a.agent}/${a.key}`)?.retryAfter ?? 1) || 1))
          )
        for (let i = 0; i < due.length; i += 8) {
          const batch = due.slice(i, i + 8)
          const answers = await Promise.all(
            batch.map((a, j) => send(a.agent, a.kind, a.key, a.body, urls[(i + j) % 2], "retry"))
          )
          batch.forEach((a, j) => retried.set(`${a.agent}/${a.key}`, answers[j]))
        }
      }

      // The figures, for docs/scaling.md.
      const dbWindow = gapAround(probes, killedAt - 1_000, recovered + 4_000)
      const buyTimes = attempts.filter((a) => a.kind === "buy" && ok(a) && a.phase === "load").map((a) => a.ended)
      const buyWindow = gapAround(buyTimes, killedAt - 1_000, recovered + 4_000)
      const load = attempts.filter((a) => a.phase === "load")
      const count = (p: (a: Attempt) => boolean) => load.filter(p).length
      console.log(
        `failover: ${load.length} requests (${count((a) => a.kind === "buy" && ok(a))} buys, ${count((a) => a.kind === "negotiate" && ok(a))} proposals, ${count((a) => a.kind === "topup" && ok(a))} top-ups acknowledged), ` +
          `${count((a) => a.status === 503)} × 503, ${count((a) => a.status === 0)} without an answer, ${failed.length} retried; ` +
          `database window ${dbWindow} ms, window without successful buys ${buyWindow} ms`
      )

      // No 5xx but 503; every 503 says when to retry.
      const other5xx = attempts.filter((a) => a.status >= 500 && a.status !== 503)
      expect(
        other5xx.map((a) => `${a.key}: ${a.status} ${JSON.stringify(a.json)}`),
        "no 5xx other than 503"
      ).toEqual([])
      const bare503 = attempts.filter((a) => a.status === 503 && !/^[1-9]\d*$/.test(a.retryAfter ?? ""))
      expect(
        bare503.map((a) => a.key),
        "every 503 carries Retry-After"
      ).toEqual([])
      // Load errors other than the outage's: none (the wallets are funded far beyond the run).
      expect(
        load
          .filter((a) => a.status >= 400 && a.status < 500)
          .map((a) => `${a.key}: ${a.status} ${JSON.stringify(a.json)}`)
      ).toEqual([])

      // Every retried key has one outcome: the retry is answered, and answered the same way again.
      // Not vacuously: the outage cut off buys (and the checks below judge their retries).
      const retriedKinds = [...retried.values()].map((a) => a.kind)
      expect(
        retriedKinds.filter((k) => k === "buy").length,
        `retried buys (retried: ${retried.size}, of them ${retriedKinds.filter((k) => k === "buy").length} buys)`
      ).toBeGreaterThan(0)
      const unresolved = [...retried.values()].filter((a) => !ok(a))
      expect(
        unresolved.map((a) => `${a.key}: ${a.status} ${JSON.stringify(a.json)}`),
        "every retry resolves"
      ).toEqual([])
      // The buys first: at least one of them is replayed.
      const replayed = [...retried.values()].sort((a, b) => Number(b.kind === "buy") - Number(a.kind === "buy"))
      for (const a of replayed.slice(0, 20)) {
        const again = await send(a.agent, a.kind, a.key, a.body, urls[0], "retry")
        expect(again.status, `${a.key} replayed`).toBe(a.status)
        expect(again.json, `${a.key}: the same outcome again`).toEqual(a.json)
      }

      // The final outcome of every key, and what the database holds.
      const final = new Map<string, Attempt>()
      for (const a of load) final.set(`${a.agent}/${a.key}`, ok(a) ? a : (retried.get(`${a.agent}/${a.key}`) ?? a))
      const db = new pg.Client({ connectionString: databaseUrl })
      await db.connect()
      try {
        for (let agent = 0; agent < AGENTS; agent++) {
          const agentId = keys[agent].agentId
          const mine = [...final.values()].filter((a) => a.agent === agent)
          const acknowledgedBuys = mine.filter((a) => a.kind === "buy" && ok(a))
          const rows = (
            await db.query<{ idempotency_key: string; id: string }>(
              "SELECT idempotency_key, id FROM commerce_transactions WHERE buyer_agent_id = $1",
              [agentId]
            )
          ).rows
          // Every acknowledged purchase exists, once; no purchase exists that its client was not told of.
          expect(
            rows.map((r) => r.idempotency_key).sort(),
            `agent ${agent}: one purchase per acknowledged key`
          ).toEqual(acknowledgedBuys.map((a) => a.key).sort())
          const txIds = new Set(rows.map((r) => r.id))
          const answered = acknowledgedBuys.map((a) => (a.json?.transaction as { id?: string } | undefined)?.id)
          expect(
            answered.filter((id) => id === undefined || !txIds.has(id)),
            `agent ${agent}: every answered transaction is stored`
          ).toEqual([])
          // Top-ups: one credit per acknowledged key (plus the funding).
          const credits = Number(
            (
              await db.query<{ n: number }>(
                "SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'grant' AND reference LIKE $1",
                [`topup:${agentId}:%`]
              )
            ).rows[0].n
          )
          expect(credits, `agent ${agent}: one credit per acknowledged top-up`).toBe(
            1 + mine.filter((a) => a.kind === "topup" && ok(a)).length
          )
          // Proposals: one negotiation per acknowledged key, the one its client was told of, and no other.
          const proposed = mine.filter((a) => a.kind === "negotiate" && ok(a))
          const negotiations = (
            await db.query<{ id: string }>("SELECT id FROM negotiations WHERE buyer_agent_id = $1", [agentId])
          ).rows.map((r) => r.id)
          expect(negotiations.sort(), `agent ${agent}: one negotiation per acknowledged proposal`).toEqual(
            proposed.map((a) => a.json?.id as string).sort()
          )
        }
      } finally {
        await db.end()
      }

      // The books: balanced, balances equal postings, nothing settled twice, counters recomputed equal.
      const books = await ledgerInvariants(databaseUrl)
      expect(books.totalCents, "postings sum to zero").toBe(0)
      expect(books.mismatched, "stored balances equal the sum of postings").toEqual([])
      expect(books.negative, "no wallet below zero").toEqual([])
      expect(books.doubleSettled, "no reference settled twice").toEqual([])
      expect(books.unmatched, "every completed purchase has exactly its ledger entry").toEqual([])
      expect(books.spendDrift, "the running spend totals equal a recomputation").toEqual([])
      expect(books.counterDrift, "the agents' counters equal a recomputation").toEqual([])

      // Both processes serve again without a restart.
      for (const url of urls) expect((await fetch(`${url}/health`)).status, `${url} serves`).toBe(200)

      // Buying stopped no longer than the database did, plus 2 s.
      expect(dbWindow, "the bare writer saw the failover").toBeGreaterThan(1_000)
      expect(buyWindow, `window without buys (${buyWindow} ms) vs the database's (${dbWindow} ms)`).toBeLessThanOrEqual(
        dbWindow + 2_000
      )
    } finally {
      stopping = true
      await Promise.allSettled([...loops, prober])
    }
  }, 300_000)
})
