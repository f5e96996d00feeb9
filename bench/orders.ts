// The push-order rows of `npm run bench` (docs/fulfilment.md): what the platform adds to an order
// of a push seller, from the buy to the seller's output back in the buyer's hands, against the
// seller's own handling time; and whether one seller's dead endpoint, with 400 of its orders
// waiting, slows another seller's orders. The sellers are receivers in the bench process on
// 127.0.0.1; the buyers are agents with an unlimited wallet policy (the owner's form, at creation).
import { randomBytes } from "node:crypto"
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http"

type Call = (
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>
) => Promise<{ status: number; text: string; headers: Headers }>

export interface OrdersKit {
  readonly call: Call
  readonly listenHttp: (
    handler: (req: IncomingMessage, res: ServerResponse) => void
  ) => Promise<{ server: HttpServer; port: number }>
  readonly sleep: (ms: number) => Promise<unknown>
  readonly log: (line: string) => void
}

export interface OrdersRow {
  readonly target: string
  readonly orders: number
  readonly concurrency: number
  readonly handlingMs: number
  /** The buy of a seeded (simulated) service: the platform's own instant purchase, the same run. */
  readonly simulated: Percentiles
  /** Order posted → output back: the buy's whole time, the seller's handling time, and their difference. */
  readonly total: Percentiles
  readonly seller: Percentiles
  readonly overhead: Percentiles
  /** The same orders while another seller's endpoint is dead with DEAD_BACKLOG orders waiting. */
  readonly totalBesideDead: Percentiles
  readonly deadPending: number
}

export interface Percentiles {
  readonly p50: number
  readonly p99: number
}

const COMMERCE = "/api/v1/agent/commerce"
export const ORDERS_PER_ROUND = 300
/**
 * Buys in flight: the per-seller push cap (docs/fulfilment.md), so no order waits for a slot its own
 * seller's earlier orders hold; more would measure the seller's queue, not the platform.
 */
export const ORDER_CONCURRENCY = 4
export const SELLER_HANDLING_MS = 20
export const DEAD_BACKLOG = 400
const PRICE_CENTS = 100

const percentiles = (xs: ReadonlyArray<number>): Percentiles => {
  const s = [...xs].sort((a, b) => a - b)
  const at = (q: number) => (s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!)
  return { p50: Math.round(at(0.5) * 10) / 10, p99: Math.round(at(0.99) * 10) / 10 }
}

const parse = (text: string): Record<string, unknown> => {
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return {}
  }
}

/** Runs `f` `n` times, `width` at a time. */
const times = async (n: number, width: number, f: (i: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await f(next++)
    })
  )
}

/** An account and an agent whose wallet the owner opened up (no limits, no approvals), with a key. */
const agentWithOpenWallet = async (kit: OrdersKit, base: string) => {
  const signup = await kit.call(base, "POST", "/api/dashboard/signup", {
    email: `bench-orders-${randomBytes(5).toString("hex")}@example.com`,
    password: "correct horse battery",
    name: "Bench"
  })
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`)
  const cookie = (signup.headers.get("set-cookie") ?? "").split(";")[0]!
  const wallet = {
    autonomyLevel: "full_auto",
    approvalThresholdCents: 1_000_000_000,
    perTransactionLimitCents: null,
    dailyLimitCents: null,
    monthlyLimitCents: null
  }
  const agent = await kit.call(base, "POST", "/api/dashboard/agents", { name: "bench-orders", wallet }, { cookie })
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${agent.text}`)
  const agentId = String(parse(agent.text).id)
  const key = await kit.call(
    base,
    "POST",
    `/api/dashboard/agents/${agentId}/keys`,
    { name: "bench", permissions: ["catalog:read", "commerce:*"] },
    { cookie }
  )
  if (key.status !== 201) throw new Error(`key: ${key.status} ${key.text}`)
  return { agentId, authorization: `Bearer ${String(parse(key.text).secret)}` }
}

const publishPush = async (kit: OrdersKit, base: string, authorization: string, url: string, p95LatencyMs: number) => {
  const r = await kit.call(
    base,
    "POST",
    `${COMMERCE}/services`,
    {
      name: `Bench push seller ${randomBytes(3).toString("hex")}`,
      description: "Answers each pushed order itself (the bench process).",
      category: "text-analysis",
      pricingModel: "per_call",
      tags: ["bench"],
      tiers: [
        {
          id: "standard",
          name: "Standard",
          priceCents: PRICE_CENTS,
          unit: "call",
          includedUnits: null,
          sla: { uptimePct: 99, p95LatencyMs, supportWindow: "best effort" }
        }
      ],
      fulfilment: { mode: "push", url }
    },
    { authorization, "idempotency-key": `bench-publish-${randomBytes(6).toString("hex")}` }
  )
  if (r.status !== 201) throw new Error(`publish: ${r.status} ${r.text}`)
  return String(parse(r.text).id)
}

/**
 * Per seller and order id: when the order reached the receiver and when its answer was written.
 * The healthy receiver answers the output inline after `handlingMs` (the seller's own work).
 */
const healthyReceiver = async (kit: OrdersKit, handlingMs: number) => {
  const seen = new Map<string, { at: number; answeredAt: number }>()
  const rx = await kit.listenHttp((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const at = performance.now()
      const id = String(req.headers["webhook-id"])
      setTimeout(() => {
        const body = JSON.stringify({ status: "delivered", output: { words: Buffer.concat(chunks).length } })
        res.writeHead(200, { "content-type": "application/json" }).end(body)
        seen.set(id, { at, answeredAt: performance.now() })
      }, handlingMs)
    })
  })
  return { rx, seen }
}

export const pushOrders = async (
  kit: OrdersKit,
  app: { readonly label: string; readonly baseUrl: string },
  simulatedBuy: { readonly serviceId: string; readonly tierId: string }
): Promise<OrdersRow> => {
  const base = app.baseUrl
  const { rx, seen } = await healthyReceiver(kit, SELLER_HANDLING_MS)
  // Accepts the connection and never answers: every push to it waits out the attempt's timeout.
  const dead = await kit.listenHttp(() => {})
  try {
    const seller = await agentWithOpenWallet(kit, base)
    const serviceId = await publishPush(kit, base, seller.authorization, `http://127.0.0.1:${rx.port}/orders`, 2_000)
    const buyers = await Promise.all(Array.from({ length: ORDER_CONCURRENCY }, () => agentWithOpenWallet(kit, base)))
    for (const b of buyers) {
      const r = await kit.call(
        base,
        "POST",
        `${COMMERCE}/wallet/topup`,
        { amountCents: 1_000_000 },
        {
          authorization: b.authorization
        }
      )
      if (r.status >= 300) throw new Error(`top-up: ${r.status} ${r.text}`)
    }
    const buyOnce = async (i: number, body: Record<string, unknown>, expect: number) => {
      const started = performance.now()
      const r = await kit.call(base, "POST", `${COMMERCE}/buy`, body, {
        authorization: buyers[i % buyers.length]!.authorization,
        "idempotency-key": `bench-buy-${randomBytes(8).toString("hex")}`
      })
      const ms = performance.now() - started
      if (r.status !== expect) throw new Error(`buy answered ${r.status} (expected ${expect}): ${r.text.slice(0, 300)}`)
      const tx = parse(r.text).transaction as Record<string, unknown> | null
      return { ms, id: String(tx?.id) }
    }
    const round = async (body: Record<string, unknown>, expect: number, push: boolean) => {
      const total: Array<number> = []
      const sellerMs: Array<number> = []
      const overhead: Array<number> = []
      await times(ORDERS_PER_ROUND, ORDER_CONCURRENCY, async (i) => {
        const { ms, id } = await buyOnce(i, body, expect)
        total.push(ms)
        if (!push) return
        const s = seen.get(id)
        if (s === undefined) throw new Error(`order ${id} completed without reaching its seller`)
        sellerMs.push(s.answeredAt - s.at)
        overhead.push(ms - (s.answeredAt - s.at))
      })
      return { total: percentiles(total), seller: percentiles(sellerMs), overhead: percentiles(overhead) }
    }
    const pushBody = { serviceId, tierId: "standard", input: { text: "the quick brown fox" } }
    const simBody = { serviceId: simulatedBuy.serviceId, tierId: simulatedBuy.tierId, input: { prompt: "bench" } }
    // Warm-up: JIT, connection pools, the first push's connection.
    await round(pushBody, 201, true)
    await round(simBody, 201, false)
    const simulated = (await round(simBody, 201, false)).total
    const alone = await round(pushBody, 201, true)

    // One more seller whose endpoint is dead, DEAD_BACKLOG of its orders waiting (placed 40 at a
    // time; each buy answers 202 pending after ORDER_WAIT_MS). Its deadline is far away, so they
    // stay pending and retried through the measured round.
    const deadSeller = await agentWithOpenWallet(kit, base)
    const deadService = await publishPush(
      kit,
      base,
      deadSeller.authorization,
      `http://127.0.0.1:${dead.port}/x`,
      600_000
    )
    const deadBody = { serviceId: deadService, tierId: "standard", input: { text: "never answered" } }
    await times(DEAD_BACKLOG, 40, async (i) => void (await buyOnce(i, deadBody, 202)))
    const beside = await round(pushBody, 201, true)
    // Count the dead seller's waiting orders through its pages (100 a page), as the seller would see them.
    let pendingShown = 0
    for (let cursor: string | null = null, pages = 0; pages === 0 || (cursor !== null && pages < 20); pages++) {
      const page = await kit.call(
        base,
        "GET",
        `${COMMERCE}/orders?status=pending&limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        undefined,
        { authorization: deadSeller.authorization }
      )
      const body = parse(page.text)
      pendingShown += Array.isArray(body.orders) ? (body.orders as Array<unknown>).length : 0
      cursor = typeof body.nextCursor === "string" ? body.nextCursor : null
    }
    const row: OrdersRow = {
      target: app.label,
      orders: ORDERS_PER_ROUND,
      concurrency: ORDER_CONCURRENCY,
      handlingMs: SELLER_HANDLING_MS,
      simulated,
      total: alone.total,
      seller: alone.seller,
      overhead: alone.overhead,
      totalBesideDead: beside.total,
      deadPending: pendingShown
    }
    kit.log(
      `   ${"push orders (seller 20 ms)".padEnd(40)} overhead p50 ${row.overhead.p50} ms p99 ${row.overhead.p99} ms ` +
        `(seller p50 ${row.seller.p50} ms; simulated buy p50 ${simulated.p50} p99 ${simulated.p99} ms); ` +
        `beside a dead seller p50 ${beside.total.p50} / ${alone.total.p50} ms, p99 ${beside.total.p99} / ${alone.total.p99} ms`
    )
    return row
  } finally {
    for (const s of [rx.server, dead.server]) {
      s.closeAllConnections()
      s.close()
    }
  }
}

const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : "–")

/** The results section for bench/results.md. */
export const ordersSection = (rows: ReadonlyArray<OrdersRow>): Array<string> => {
  if (rows.length === 0) return []
  return [
    `Push orders: a seller endpoint in the bench process answering each pushed order inline after ${SELLER_HANDLING_MS} ms of its own work; ` +
      `${ORDERS_PER_ROUND} buys per round, ${ORDER_CONCURRENCY} at a time (one buyer per connection; 4 is the per-seller push cap, so no order waits behind its own seller's), after an unmeasured warm-up round. ` +
      "Overhead = the buy's whole time (order placed, pushed, answered, settled, answered to the buyer) minus the seller's handling time for that order. " +
      `The anchor is a buy of a seeded (simulated) service in the same run, same concurrency. Then one more seller whose endpoint accepts and never answers, ${DEAD_BACKLOG} of its orders pending, and the healthy seller's round again (docs/fulfilment.md).`,
    "",
    "| target | overhead p50 / p99 ms | seller p50 / p99 ms | simulated buy p50 / p99 ms | overhead ÷ simulated buy (p50, p99) | buy p50 / p99 ms, alone | beside a dead seller | ratio p50, p99 (bar 2×) | dead seller's pending |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.target} | ${r.overhead.p50} / ${r.overhead.p99} | ${r.seller.p50} / ${r.seller.p99} | ${r.simulated.p50} / ${r.simulated.p99} | ` +
        `${ratio(r.overhead.p50, r.simulated.p50)}, ${ratio(r.overhead.p99, r.simulated.p99)} | ${r.total.p50} / ${r.total.p99} | ` +
        `${r.totalBesideDead.p50} / ${r.totalBesideDead.p99} | ${ratio(r.totalBesideDead.p50, r.total.p50)}, ${ratio(r.totalBesideDead.p99, r.total.p99)} | ${r.deadPending} |`
    ),
    ""
  ]
}
