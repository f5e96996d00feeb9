// Example agent: gets a key, funds its wallet (fake payments), discovers, browses services,
// negotiates, buys through the saga and reviews — printing each step. Also the CI smoke test.
//
//   npm run example:agent -- --url http://localhost:3000
//   npm run example:agent -- --url http://localhost:3000 --service svc_… --text "…" [--via mcp|a2a]
//
// With --service it buys that service (an agent's, e.g. examples/seller.ts) with POST /buy, which
// answers 202 pending until the seller delivers, and follows the transaction until it ends: the
// saga's deliver step does not reach real sellers yet (docs/fulfilment.md). --via mcp makes that buy
// and the reads after it MCP tool calls instead of REST; --via a2a makes the buy an A2A message that
// answers a task, followed with GetTask until it ends.
//
// It uses the typed client derived from the HttpApi (src/client.ts) for every endpoint in the API;
// only the discovery document (a site file, not an HttpApi endpoint) is read with plain fetch.
import { Cookies, FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Console, Data, Effect, Ref } from "effect"
import { parseArgs } from "node:util"
import { randomBytes } from "node:crypto"
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Api, type Client, makeClient } from "../src/client.js"
import type { Purchase } from "../src/schema/commerce/approvals.js"
import type { WalletView } from "../src/schema/commerce/wallets.js"
import type { Transaction } from "../src/schema/commerce/transactions.js"
import { cents } from "../src/schema/platform/common.js"

/** A step of the walk-through that did not go as the agent expected. */
class AgentStepFailed extends Data.TaggedError("AgentStepFailed")<{ readonly message: string }> {}

const { values: options } = parseArgs({
  options: {
    url: { type: "string", default: "http://localhost:3000" },
    "top-up": { type: "string", default: "20000" },
    "poll-ms": { type: "string", default: "250" },
    "timeout-s": { type: "string", default: "60" },
    service: { type: "string" },
    text: { type: "string", default: "Olá, mundo" },
    via: { type: "string", default: "rest" }
  }
})
const baseUrl = options.url.replace(/\/+$/, "")
const pollMs = Number(options["poll-ms"])
const timeoutMs = Number(options["timeout-s"]) * 1000
const topUpCents = Number(options["top-up"])
const chosenService = options.service
const via = options.via === "mcp" || options.via === "a2a" ? options.via : "rest"

const STEPS = ["key", "wallet", "discover", "browse", "negotiate", "buy", "review"] as const
type StepName = (typeof STEPS)[number]
const step = (name: StepName, detail: string) =>
  Console.log(`step ${STEPS.indexOf(name) + 1}/${STEPS.length} ${name}: ${detail}`)
const info = (detail: string) => Console.log(`    ${detail}`)
const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`

/** Repeats `read` every poll interval until `done` holds (or the timeout). */
const pollUntil = <A, E>(read: Effect.Effect<A, E>, done: (a: A) => boolean, what: string) =>
  Effect.gen(function* () {
    for (;;) {
      const a = yield* read
      if (done(a)) return a
      yield* Effect.sleep(pollMs)
    }
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => Effect.fail(new AgentStepFailed({ message: `timed out waiting for ${what}` }))
    })
  )

/** 1. An account owner signs up on the dashboard, creates an agent and gives it a key. */
const getKey = Effect.gen(function* () {
  // The dashboard's session is a cookie: this client keeps the one signup sets.
  const cookies = yield* Ref.make<ReadonlyArray<Cookies.Cookie>>([])
  // effect 4 applies `transformClient` before prepending `baseUrl`, so the cookie jar would see
  // relative URLs and match no cookie: the base URL is prepended here, ahead of the jar.
  const dashboard = yield* HttpApiClient.make(Api, {
    transformClient: (client) =>
      client.pipe(HttpClient.mapRequest(HttpClientRequest.prependUrl(baseUrl)), HttpClient.withCookiesRef(cookies))
  })
  const email = `example-${randomBytes(4).toString("hex")}@example.com`
  const { account } = yield* dashboard.dashboardAuth.signUp({
    payload: { email, password: "example agent password", name: "Example Owner" }
  })
  const agent = yield* dashboard.dashboard.createAgent({
    payload: { name: "example-agent", organization: "Example Org" }
  })
  const created = yield* dashboard.dashboard.createKey({
    params: { agentId: agent.id },
    payload: { name: "example key", permissions: ["catalog:read", "commerce:*"] }
  })
  yield* step(
    "key",
    `account ${account.id}, agent ${agent.id}, key ${created.key.prefix}… (${created.key.permissions.join(", ")})`
  )
  return { secret: created.secret, agentId: agent.id }
})

/** 3. The discovery document says where everything is (a site file: plain fetch). */
const discover = Effect.tryPromise(async () => {
  const res = await fetch(`${baseUrl}/api/discover`)
  if (!res.ok) throw new Error(`GET /api/discover: ${res.status}`)
  return (await res.json()) as {
    platform: { name: string; version: string }
    ai_commerce: { protocol: string; version: string; endpoints: ReadonlyArray<unknown> }
    for_ai_agents: { mcp_manifest: string }
  }
}).pipe(
  Effect.tap((doc) =>
    step(
      "discover",
      `${doc.platform.name} ${doc.platform.version}; ${doc.ai_commerce.protocol} ${doc.ai_commerce.version} with ${doc.ai_commerce.endpoints.length} endpoints; MCP manifest ${doc.for_ai_agents.mcp_manifest}`
    )
  )
)

/** 5. Propose a price; the seller answers automatically; accept a counter-offer. */
const negotiate = (client: Client, serviceId: string, tierId: string, listPriceCents: number) =>
  Effect.gen(function* () {
    const proposed = Math.max(1, Math.floor((listPriceCents * 85) / 100))
    const opened = yield* client.negotiation.negotiate({ payload: { serviceId, tierId, proposedPriceCents: proposed } })
    yield* info(
      `proposed ${usd(proposed)} for ${serviceId}/${tierId} (list ${usd(listPriceCents)}): negotiation ${opened.id}, waiting for the seller`
    )
    let n = yield* pollUntil(
      client.negotiation.negotiation({ params: { id: opened.id } }),
      (x) => x.status !== "awaiting_seller",
      "the seller's answer"
    )
    if (n.status === "awaiting_buyer") {
      yield* info(`seller countered at ${usd(n.currentPriceCents)}: accepting`)
      n = yield* client.negotiation.respond({ params: { id: n.id }, payload: { action: "accept" } })
    }
    if (n.status !== "accepted" || n.agreedPriceCents === null)
      return yield* Effect.fail(new AgentStepFailed({ message: `negotiation ended ${n.status}` }))
    yield* step(
      "negotiate",
      `agreed ${usd(n.agreedPriceCents)} (list ${usd(n.listPriceCents)}) in ${n.round} round(s), negotiation ${n.id}`
    )
    return n
  })

/** 6. Buy at the agreed price through the five-step saga, polling until it ends. */
const buy = (client: Client, serviceId: string, tierId: string, negotiationId: string) =>
  Effect.gen(function* () {
    const started = yield* client.saga.saga({
      payload: { serviceId, tierId, negotiationId, input: { text: "Olá, mundo" } }
    })
    yield* info(`saga ${started.id} started`)
    const saga = yield* pollUntil(
      client.saga.getSaga({ params: { id: started.id } }),
      (s) => s.status !== "running",
      "the saga"
    )
    for (const s of saga.steps) yield* info(`${s.name}: ${s.status}${s.detail ? ` — ${s.detail}` : ""}`)
    if (saga.status !== "completed")
      return yield* Effect.fail(
        new AgentStepFailed({
          message: `saga ${saga.id} ${saga.status}: ${saga.failure?.step} ${saga.failure?.reason}`
        })
      )
    yield* step(
      "buy",
      `saga ${saga.id} completed: paid ${usd(saga.priceCents ?? 0)}, seller ${usd(saga.settlement?.sellerCents ?? 0)}, platform fee ${usd(saga.settlement?.feeCents ?? 0)}`
    )
    return saga
  })

/** The buy and the transaction reads of a direct purchase, over REST (typed client), MCP tool calls or A2A. */
interface BuyingSurface {
  readonly buy: (payload: {
    serviceId: string
    tierId: string
    negotiationId: string
    input: unknown
  }) => Effect.Effect<Purchase, unknown>
  readonly transaction: (id: string) => Effect.Effect<Transaction, unknown>
}

const restSurface = (client: Client): BuyingSurface => ({
  buy: (payload) => client.commerce.buy({ payload }),
  transaction: (id) => client.commerce.transaction({ params: { id } })
})

/** MCP: one tool per route (docs/mcp.md); a tool's structuredContent is the route's JSON answer. */
const mcpSurface = (apiKey: string) =>
  Effect.tryPromise(async () => {
    const mcp = new McpClient({ name: "example-agent", version: "1.0.0" })
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${apiKey}` } }
      })
    )
    const tool = <A>(name: string, args: Record<string, unknown>, idempotencyKey?: string) =>
      Effect.tryPromise(async () => {
        const result = await mcp.callTool({
          name,
          arguments: args,
          ...(idempotencyKey === undefined ? {} : { _meta: { idempotencyKey } })
        })
        if (result.isError) {
          const content = result.content as ReadonlyArray<{ readonly text?: string }>
          throw new Error(`MCP tool ${name}: ${content[0]?.text ?? "error"}`)
        }
        return result.structuredContent as A
      })
    return {
      buy: (payload) => tool<Purchase>("buy", payload, `buy-${randomBytes(8).toString("hex")}`),
      transaction: (id) => tool<Transaction>("transaction", { id })
    } satisfies BuyingSurface
  })

/** The JSON of an A2A part, message and task (docs/a2a.md; A2A 1.0, proto JSON names). */
interface A2aPart {
  readonly text?: string
  readonly data?: unknown
}
interface A2aTask {
  readonly id: string
  readonly status: { readonly state: string; readonly message?: { readonly parts: ReadonlyArray<A2aPart> } }
  readonly artifacts?: ReadonlyArray<{ readonly parts: ReadonlyArray<A2aPart> }>
}
type A2aAnswer =
  | { readonly task: A2aTask }
  | { readonly message: { readonly parts: ReadonlyArray<A2aPart>; readonly metadata: { readonly ok: boolean } } }

const dataPart = (parts: ReadonlyArray<A2aPart> = []) => parts.find((p) => p.data !== undefined)?.data
const textPart = (parts: ReadonlyArray<A2aPart> = []) => parts.find((p) => p.text !== undefined)?.text ?? ""

/**
 * A2A 1.0 JSON-RPC at /a2a (docs/a2a.md): the `buy` skill answers a Task while the seller works on the
 * order (its id is the transaction id), and GetTask follows it. The task's status message carries
 * the transaction as a data part; once completed, its artifact is the seller's output.
 */
const a2aSurface = (apiKey: string): BuyingSurface => {
  let requestId = 0
  const rpc = (method: string, params: Record<string, unknown>) =>
    Effect.tryPromise(async () => {
      const res = await fetch(`${baseUrl}/a2a`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++requestId, method, params })
      })
      const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } }
      if (body.error !== undefined) throw new Error(`A2A ${method}: ${body.error.code} ${body.error.message}`)
      return body.result
    })
  const seen = new Map<string, string>()
  /** The task's transaction; a line when its state changes, with the artifact once it ended. */
  const transactionOf = (task: A2aTask) =>
    Effect.gen(function* () {
      const state = task.status.state
      if (seen.get(task.id) !== state) {
        seen.set(task.id, state)
        const artifact = dataPart(task.artifacts?.[0]?.parts)
        yield* info(
          `A2A task ${task.id} ${state}${artifact === undefined ? "" : `: artifact ${JSON.stringify(artifact)}`}`
        )
      }
      return dataPart(task.status.message?.parts) as Transaction
    })
  return {
    buy: (payload) =>
      Effect.gen(function* () {
        // Return at once with the task (no connection held while the seller works); GetTask follows it.
        const answer = (yield* rpc("SendMessage", {
          message: {
            messageId: `buy-${randomBytes(8).toString("hex")}`,
            role: "ROLE_USER",
            parts: [{ data: { skill: "buy", ...payload } }],
            metadata: { idempotencyKey: `buy-${randomBytes(8).toString("hex")}` }
          },
          configuration: { returnImmediately: true }
        })) as A2aAnswer
        if ("message" in answer) {
          // Answered at once (a simulated service, or a refusal): a message with the route's JSON.
          if (!answer.message.metadata.ok)
            return yield* new AgentStepFailed({ message: textPart(answer.message.parts) })
          return dataPart(answer.message.parts) as Purchase
        }
        const transaction = yield* transactionOf(answer.task)
        return { status: transaction.status, transaction, approval: null } as Purchase
      }),
    transaction: (id) => Effect.flatMap(rpc("GetTask", { id }), (task) => transactionOf(task as A2aTask))
  }
}

/** A transaction still waiting for its seller (status `pending` until the seller answers). */
const isPending = (status: string) => status === "pending"

/** 6 (with --service). Buy the seller's service directly and follow the transaction until its seller answered. */
const buyDirect = (client: Client, surface: BuyingSurface, serviceId: string, tierId: string, negotiationId: string) =>
  Effect.gen(function* () {
    const purchase = yield* surface.buy({ serviceId, tierId, negotiationId, input: { text: options.text } })
    if (purchase.transaction === null)
      return yield* Effect.fail(
        new AgentStepFailed({ message: `the buy answered ${purchase.status} without a transaction (an approval?)` })
      )
    yield* info(`bought over ${via}: transaction ${purchase.transaction.id} ${purchase.status}`)
    const tx = isPending(purchase.transaction.status)
      ? yield* pollUntil(
          surface.transaction(purchase.transaction.id),
          (t) => !isPending(t.status),
          "the seller's delivery"
        )
      : purchase.transaction
    // Nothing stays held once the order ended: the escrow went to the seller and the platform, or back here.
    const wallet = yield* client.commerce.wallet()
    yield* info(`wallet: balance ${usd(wallet.balanceCents)}, held ${usd(wallet.heldCents)}`)
    if (tx.status !== "completed")
      return yield* Effect.fail(
        new AgentStepFailed({
          message: `transaction ${tx.id} ${tx.status}: ${tx.delivery?.error ?? "no delivery"} (the price was not charged)`
        })
      )
    yield* step(
      "buy",
      `transaction ${tx.id} completed: paid ${usd(tx.priceCents)}, seller ${usd(tx.sellerCents)}, platform fee ${usd(tx.feeCents)}; output ${JSON.stringify(tx.delivery?.output)}`
    )
    return tx
  })

/** 4 (with --service). That service, at its cheapest tier. */
const browseChosen = (client: Client, serviceId: string) =>
  Effect.gen(function* () {
    const detail = yield* client.commerce.getService({ params: { id: serviceId } })
    const tier = detail.tiers.reduce((a, b) => (b.priceCents < a.priceCents ? b : a))
    yield* step(
      "browse",
      `chose ${detail.name} (${detail.id}) tier ${tier.name} at ${usd(tier.priceCents)} per ${tier.unit}, fulfilment ${detail.fulfilment.mode}`
    )
    return { serviceId: detail.id, tierId: tier.id, listPriceCents: tier.priceCents }
  })

/** 2. Fake-payments mode: top the wallet up directly, then read it back. */
const fundWallet = (client: Client, amountCents: number) =>
  Effect.gen(function* () {
    const topup = yield* client.commerce.topup({ payload: { amountCents: cents(amountCents) } })
    const wallet = yield* client.commerce.wallet()
    yield* step(
      "wallet",
      `topped up ${usd(topup.amountCents)}: balance ${usd(wallet.balanceCents)}, autonomy ${wallet.autonomyLevel}, approval above ${usd(wallet.policies.approvalThresholdCents)}`
    )
    return wallet
  })

/**
 * What one purchase may cost without an owner's approval or a policy refusal: the balance, the
 * per-transaction limit, what is left of today's limit and, below full autonomy, the approval threshold.
 */
const budgetOf = (wallet: typeof WalletView.Type) =>
  Math.min(
    wallet.balanceCents,
    wallet.policies.perTransactionLimitCents ?? Infinity,
    wallet.remainingTodayCents ?? Infinity,
    wallet.autonomyLevel === "full_auto" ? Infinity : wallet.policies.approvalThresholdCents
  )

/** 4. List services and pick the dearest tier the wallet can pay (a price worth negotiating). */
const browse = (client: Client, budgetCents: number) =>
  Effect.gen(function* () {
    const page = yield* client.commerce.listServices({ query: { limit: 50 } })
    const choices = page.data.flatMap((service) => service.tiers.map((tier) => ({ service, tier })))
    const affordable = choices.filter((c) => c.tier.priceCents >= 100 && c.tier.priceCents <= budgetCents)
    if (affordable.length === 0)
      return yield* Effect.fail(
        new AgentStepFailed({ message: `no service tier between ${usd(1)} and ${usd(budgetCents)}` })
      )
    const pick = affordable.reduce((a, b) => (b.tier.priceCents > a.tier.priceCents ? b : a))
    const detail = yield* client.commerce.getService({ params: { id: pick.service.id } })
    yield* step(
      "browse",
      `${page.data.length} services; picked ${detail.name} (${detail.id}) tier ${pick.tier.name} at ${usd(pick.tier.priceCents)} per ${pick.tier.unit}, SLA ${pick.tier.sla.uptimePct}% uptime, p95 ${pick.tier.sla.p95LatencyMs} ms`
    )
    return { serviceId: detail.id, tierId: pick.tier.id, listPriceCents: pick.tier.priceCents }
  })

/** 7. Read the saga's transaction (it is in the history too) and review it. */
const review = (client: Client, transactionId: string | null, sagaId: string) =>
  Effect.gen(function* () {
    if (transactionId === null)
      return yield* Effect.fail(new AgentStepFailed({ message: `saga ${sagaId} completed without a transaction id` }))
    const tx = yield* client.commerce.transaction({ params: { id: transactionId } })
    const history = yield* client.commerce.transactions({ query: { role: "buyer" } })
    if (!history.data.some((t) => t.id === tx.id))
      return yield* Effect.fail(new AgentStepFailed({ message: `transaction ${tx.id} is missing from the history` }))
    const posted = yield* client.commerce.review({
      params: { id: tx.id },
      payload: { rating: 5, text: "Delivered as promised; fair negotiated price." }
    })
    yield* step(
      "review",
      `transaction ${tx.id} (${tx.status}, ${usd(tx.priceCents)}: seller ${usd(tx.sellerCents)}, fee ${usd(tx.feeCents)}) reviewed ${posted.rating}/5`
    )
  })

const program = Effect.gen(function* () {
  yield* Console.log(`example agent against ${baseUrl}`)
  const { secret } = yield* getKey
  const client = yield* makeClient({ baseUrl, apiKey: secret })
  const wallet = yield* fundWallet(client, topUpCents)
  yield* discover
  const { serviceId, tierId, listPriceCents } =
    chosenService === undefined ? yield* browse(client, budgetOf(wallet)) : yield* browseChosen(client, chosenService)
  const negotiation = yield* negotiate(client, serviceId, tierId, listPriceCents)
  if (chosenService === undefined) {
    const saga = yield* buy(client, serviceId, tierId, negotiation.id)
    yield* review(client, saga.transactionId, saga.id)
  } else {
    const surface = via === "mcp" ? yield* mcpSurface(secret) : via === "a2a" ? a2aSurface(secret) : restSurface(client)
    const tx = yield* buyDirect(client, surface, serviceId, tierId, negotiation.id)
    yield* review(client, tx.id, tx.id)
  }
  yield* Console.log("done")
})

program.pipe(Effect.provide(FetchHttpClient.layer), Effect.runPromise).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`example agent failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
