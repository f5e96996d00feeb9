// Example seller agent: publishes a small real service — text statistics (words, characters,
// sentences, keywords and a one-sentence summary), computed here, no model called — and fulfils its
// orders for real, by pull or by push. Also the CI end-to-end test's seller (test/examples/seller.test.ts).
//
//   npx tsx examples/seller.ts --url http://localhost:3000 --mode pull
//   npx tsx examples/seller.ts --url http://localhost:3000 --mode push   # the server needs WEBHOOKS_ALLOW_LOOPBACK=true
//
// pull: lists its pending orders, waiting for the next one (GET /commerce/orders?waitMs=…), and
// answers each with deliver or fail. push: starts an http server, publishes its address, verifies the
// Standard Webhooks signature of every order posted to it with the secret shown once at publish, and
// answers inline (200 delivered / failed), or accepts a long text (202) and delivers it afterwards
// through the API. Plain fetch and node:http only, so it reads the same in any language.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { parseArgs } from "node:util"

const { values: options } = parseArgs({
  options: {
    url: { type: "string", default: "http://localhost:3000" },
    mode: { type: "string", default: "pull" },
    "api-key": { type: "string" },
    "price-cents": { type: "string", default: "25" },
    "wait-ms": { type: "string", default: "20000" },
    port: { type: "string", default: "0" },
    "public-url": { type: "string" },
    "slow-over": { type: "string", default: "2000" },
    "floor-pct": { type: "string", default: "80" },
    "negotiation-poll-ms": { type: "string", default: "2000" },
    orders: { type: "string", default: "0" }
  }
})
const baseUrl = options.url.replace(/\/+$/, "")
const mode = options.mode
if (mode !== "pull" && mode !== "push") {
  console.error(`example seller failed: --mode must be pull or push, not ${mode}`)
  process.exit(2)
}
const waitMs = Number(options["wait-ms"])
const slowOverChars = Number(options["slow-over"])
const stopAfter = Number(options.orders)
const floorPct = Number(options["floor-pct"])
const negotiationPollMs = Number(options["negotiation-poll-ms"])
const COMMERCE = "/api/v1/agent/commerce"

const STEPS = ["key", "discover", "publish", "serve"] as const
const step = (name: (typeof STEPS)[number], detail: string) =>
  console.log(`step ${STEPS.indexOf(name) + 1}/${STEPS.length} ${name}: ${detail}`)
const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** An answer of the platform the seller did not expect, with the platform's own error type and message. */
class PlatformError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string
  ) {
    super(message)
  }
}

type Json = Record<string, unknown>
const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** One call to the API: JSON in and out; 429 waits as long as Retry-After says and tries again. */
const call = async <A = Json>(
  method: string,
  path: string,
  init: { key?: string; cookie?: string; body?: unknown; idempotencyKey?: string } = {}
): Promise<{ body: A; headers: Headers; status: number }> => {
  for (let attempt = 0; ; attempt++) {
    const headers: Record<string, string> = {}
    if (init.key) headers.authorization = `Bearer ${init.key}`
    if (init.cookie) headers.cookie = init.cookie
    if (init.body !== undefined) headers["content-type"] = "application/json"
    if (init.idempotencyKey) headers["idempotency-key"] = init.idempotencyKey
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body)
    })
    const text = await res.text()
    const body: unknown = text === "" ? null : JSON.parse(text)
    if (res.status === 429 && attempt < 5) {
      await sleep(Number(res.headers.get("retry-after") ?? "1") * 1000)
      continue
    }
    if (!res.ok) {
      const e = isRecord(body) ? body : {}
      throw new PlatformError(
        res.status,
        String(e.type ?? res.status),
        `${method} ${path}: ${res.status} ${String(e.message ?? text)}`
      )
    }
    return { body: body as A, headers: res.headers, status: res.status }
  }
}

// ---- the service itself: text in, statistics out, computed locally and deterministically ----

type Outcome = { readonly ok: true; readonly output: Json } | { readonly ok: false; readonly error: string }

/** The text of an order's input: `{"text": "…"}` or a bare string. */
const textOf = (input: unknown): string | undefined =>
  typeof input === "string" ? input : isRecord(input) && typeof input.text === "string" ? input.text : undefined

const textStats = (input: unknown): Outcome => {
  const text = textOf(input)
  if (text === undefined) return { ok: false, error: 'input must be {"text": "…"} or a string' }
  if (text.trim() === "") return { ok: false, error: "input.text is empty" }
  const words = text.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []
  const sentences = text
    .split(/(?<=[.!?…])\s+/u)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const counts = new Map<string, number>()
  for (const w of words) if (w.length > 3) counts.set(w.toLowerCase(), (counts.get(w.toLowerCase()) ?? 0) + 1)
  const keywords = [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 5)
    .map(([w]) => w)
  const first = (sentences[0] ?? text).split(/\s+/u)
  const summary = first.length > 25 ? `${first.slice(0, 25).join(" ")}…` : first.join(" ")
  return {
    ok: true,
    output: { words: words.length, characters: [...text].length, sentences: sentences.length, keywords, summary }
  }
}

// ---- 1. a key with commerce:sell (an owner signs up and makes one), unless given ----

const getKey = async (): Promise<string> => {
  if (options["api-key"]) {
    step("key", "using the key given with --api-key (it needs catalog:read and commerce:sell)")
    return options["api-key"]
  }
  const email = `seller-${randomBytes(4).toString("hex")}@example.com`
  const signup = await call<{ account: { id: string } }>("POST", "/api/dashboard/signup", {
    body: { email, password: "example seller password", name: "Example Seller Owner" }
  })
  // The dashboard's session is a cookie; this is the whole cookie jar the example needs.
  const cookie = signup.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ")
  const agent = await call<{ id: string }>("POST", "/api/dashboard/agents", {
    cookie,
    body: { name: "example-seller", organization: "Example Seller Org" }
  })
  const created = await call<{ secret: string; key: { prefix: string; permissions: ReadonlyArray<string> } }>(
    "POST",
    `/api/dashboard/agents/${agent.body.id}/keys`,
    { cookie, body: { name: "seller key", permissions: ["catalog:read", "commerce:*"] } }
  )
  step(
    "key",
    `account ${signup.body.account.id}, agent ${agent.body.id}, key ${created.body.key.prefix}… (${created.body.key.permissions.join(", ")})`
  )
  return created.body.secret
}

// ---- 2. the discovery document says how sellers get their orders ----

const discover = async () => {
  const { body } = await call<{ ai_commerce: { fulfilment?: { modes?: ReadonlyArray<{ mode: string }> } } }>(
    "GET",
    "/api/discover"
  )
  const modes = body.ai_commerce.fulfilment?.modes?.map((m) => m.mode) ?? []
  step("discover", `fulfilment modes offered: ${modes.length > 0 ? modes.join(", ") : "(not listed)"}`)
}

// ---- 3. publish the service, with the fulfilment chosen ----

const publish = async (key: string, pushUrl: string | undefined) => {
  const priceCents = Number(options["price-cents"])
  const { body } = await call<{ id: string; name: string; fulfilment: { mode: string }; fulfilmentSecret?: string }>(
    "POST",
    `${COMMERCE}/services`,
    {
      key,
      idempotencyKey: `publish-${randomBytes(8).toString("hex")}`,
      body: {
        name: "Text stats (example seller)",
        description:
          "Word, character and sentence counts, the five most frequent words and a one-sentence summary of a text. " +
          'Input: {"text": "…"}. Computed by the example seller agent itself.',
        category: "text-analysis",
        pricingModel: "per_call",
        tags: ["example", "text"],
        tiers: [
          {
            id: "standard",
            name: "Standard",
            priceCents,
            unit: "call",
            includedUnits: null,
            sla: { uptimePct: 99, p95LatencyMs: 2000, supportWindow: "best effort" }
          }
        ],
        fulfilment: pushUrl === undefined ? { mode: "pull" } : { mode: "push", url: pushUrl }
      }
    }
  )
  step(
    "publish",
    `service ${body.id} "${body.name}" tier standard at ${usd(priceCents)} per call, fulfilment ${body.fulfilment.mode}` +
      (body.fulfilmentSecret === undefined ? "" : " (signing secret received, shown once)")
  )
  return { serviceId: body.id, secret: body.fulfilmentSecret }
}

// ---- answering: idempotent, so a retry of the same answer is the same result ----

let answered = 0
const finished = () => {
  answered++
  if (stopAfter > 0 && answered >= stopAfter) {
    console.log("done")
    process.exit(0)
  }
}

/** Delivers or fails one order through the API; an order already closed (expired) is only reported. */
const answerThroughApi = async (key: string, orderId: string, outcome: Outcome) => {
  const [verb, body] = outcome.ok ? ["deliver", { output: outcome.output }] : ["fail", { error: outcome.error }]
  try {
    await call("POST", `${COMMERCE}/orders/${orderId}/${verb}`, { key, body, idempotencyKey: `${verb}-${orderId}` })
    console.log(
      `order ${orderId} ${outcome.ok ? `delivered: ${describe(outcome.output)}` : `failed: ${outcome.error}`}`
    )
  } catch (e) {
    if (!(e instanceof PlatformError) || e.status !== 409) throw e
    console.log(`order ${orderId} was closed before the answer (${e.message})`)
  }
  finished()
}

const describe = (output: Json) => `${String(output.words)} words, "${String(output.summary)}"`

// ---- negotiations: the seller answers its own, within the platform's 30 s window ----

interface NegotiationLine {
  readonly id: string
  readonly listPriceCents: number
  readonly currentPriceCents: number
  readonly sellerAskCents: number | null
  readonly round: number
}

/**
 * This seller's policy: an offer at or above `--floor-pct` of the list price is accepted; a lower
 * one is countered at that floor once (the buyer may accept it); an offer still below it is
 * rejected. Answers come within one poll of the buyer's move, well inside the 29.6 s after which the
 * platform's automatic seller would answer instead.
 */
const negotiationAnswer = (n: NegotiationLine) => {
  const floor = Math.ceil((n.listPriceCents * floorPct) / 100)
  if (n.currentPriceCents >= floor) return { action: "accept" as const }
  if (n.sellerAskCents === null || n.sellerAskCents > floor)
    return { action: "counter" as const, counterPriceCents: floor }
  return { action: "reject" as const }
}

const answerNegotiations = async (key: string) => {
  for (;;) {
    const { body } = await call<{ data: ReadonlyArray<NegotiationLine> }>(
      "GET",
      `${COMMERCE}/negotiations?role=seller&status=awaiting_seller&limit=20`,
      { key }
    )
    for (const n of body.data) {
      const answer = negotiationAnswer(n)
      try {
        await call("POST", `${COMMERCE}/negotiate/${n.id}/respond`, {
          key,
          body: answer,
          idempotencyKey: `respond-${n.id}-${n.round}`
        })
        console.log(
          `negotiation ${n.id}: offer ${usd(n.currentPriceCents)} of ${usd(n.listPriceCents)}, ${answer.action}` +
            (answer.counterPriceCents !== undefined ? ` at ${usd(answer.counterPriceCents)}` : "")
        )
      } catch (e) {
        // The buyer moved, or the automatic answer came first: the next poll sees the new state.
        if (!(e instanceof PlatformError) || e.status !== 409) throw e
      }
    }
    await sleep(negotiationPollMs)
  }
}

// ---- 4a. pull: wait for orders, answer each ----

interface OrderLine {
  readonly id: string
  readonly input: unknown
  readonly priceCents: number
  readonly deadlineAt: string
}

const servePull = async (key: string) => {
  step("serve", `pulling orders (waiting up to ${waitMs} ms per request)`)
  for (;;) {
    const { body } = await call<{ orders: ReadonlyArray<OrderLine> }>(
      "GET",
      `${COMMERCE}/orders?status=pending&limit=20&waitMs=${waitMs}`,
      { key }
    )
    for (const order of body.orders) {
      console.log(`order ${order.id} received (${usd(order.priceCents)}, due ${order.deadlineAt})`)
      await answerThroughApi(key, order.id, textStats(order.input))
    }
  }
}

// ---- 4b. push: an http server the platform posts each order to ----

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" with the secret's bytes. */
const verifySignature = (secret: string, req: IncomingMessage, raw: string): string | undefined => {
  const id = req.headers["webhook-id"]
  const timestamp = req.headers["webhook-timestamp"]
  const signatures = req.headers["webhook-signature"]
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string")
    return "missing webhook-id, webhook-timestamp or webhook-signature"
  // A replayed old request is refused: the platform signs each attempt with the current time.
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return "webhook-timestamp is more than 5 minutes away"
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const expected = Buffer.from(createHmac("sha256", key).update(`${id}.${timestamp}.${raw}`).digest("base64"))
  const ok = signatures.split(" ").some((s) => {
    const given = Buffer.from(s.startsWith("v1,") ? s.slice(3) : "")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  return ok ? undefined : "no valid v1 signature"
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let size = 0
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size > 1_048_576) req.destroy(new Error("body over 1 MiB"))
      else chunks.push(c)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** The inline answers already given, by order id: a repeated push (same webhook-id) gets the same one. */
const inlineAnswers = new Map<string, { status: number; body: unknown }>()

const servePush = async (key: string) => {
  let secret = ""
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== "POST" || req.url !== "/orders") return reply(res, 404, { error: "not found" })
      const raw = await readBody(req)
      const refused = verifySignature(secret, req, raw)
      if (refused !== undefined) return reply(res, 401, { error: refused })
      const event = JSON.parse(raw) as { type: string; data: OrderLine & { orderId: string } }
      if (event.type !== "order.created") return reply(res, 400, { error: `unknown type ${event.type}` })
      const { orderId, input } = event.data
      const earlier = inlineAnswers.get(orderId)
      if (earlier !== undefined) return reply(res, earlier.status, earlier.body)
      console.log(`order ${orderId} pushed (${usd(event.data.priceCents)}, due ${event.data.deadlineAt})`)
      const outcome = textStats(input)
      const long = (textOf(input)?.length ?? 0) > slowOverChars
      if (outcome.ok && long) {
        // A long text is worked on after the answer: accepted now, delivered through the API later.
        inlineAnswers.set(orderId, { status: 202, body: { status: "accepted" } })
        reply(res, 202, { status: "accepted" })
        console.log(`order ${orderId} accepted: a long text, delivered through the API when done`)
        await sleep(200)
        return answerThroughApi(key, orderId, outcome)
      }
      const answer = outcome.ok
        ? { status: 200, body: { status: "delivered", output: outcome.output } }
        : { status: 200, body: { status: "failed", error: outcome.error } }
      inlineAnswers.set(orderId, answer)
      reply(res, answer.status, answer.body)
      console.log(
        `order ${orderId} ${outcome.ok ? `delivered: ${describe(outcome.output)}` : `failed: ${outcome.error}`}`
      )
      finished()
    })().catch((e: unknown) => {
      console.error(`order push not handled: ${e instanceof Error ? e.message : String(e)}`)
      if (!res.headersSent) reply(res, 500, { error: "seller error" })
    })
  })
  await new Promise<void>((resolve) => server.listen(Number(options.port), "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const pushUrl = options["public-url"] ?? `http://127.0.0.1:${port}/orders`
  const published = await publish(key, pushUrl)
  if (published.secret === undefined) throw new Error("publishing a push service showed no fulfilmentSecret")
  secret = published.secret
  step("serve", `orders are pushed to ${pushUrl}; texts over ${slowOverChars} characters are delivered later`)
  return published
}

const main = async () => {
  console.log(`example seller (${mode}) against ${baseUrl}`)
  const key = await getKey()
  await discover()
  const negotiating = () =>
    answerNegotiations(key).catch((error: unknown) => {
      console.error(`example seller failed: ${error instanceof Error ? error.message : String(error)}`)
      process.exit(1)
    })
  if (mode === "push") {
    await servePush(key)
    void negotiating()
    return
  }
  await publish(key, undefined)
  void negotiating()
  await servePull(key)
}

main().catch((error: unknown) => {
  console.error(`example seller failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
