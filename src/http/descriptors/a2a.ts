// The A2A 1.0 skills this service serves (the agent card's `skills`), each one an Agent API route
// run in-process with the caller's key — the same route REST and MCP call (src/http/a2a/routes.ts
// serves them; the agent card and the route catalogue describe them from here).
import type { CatalogRoute } from "../../services/discovery/document.js"
import type { ApiTool } from "./tools.js"

/** Where A2A JSON-RPC messages go (the card's supportedInterfaces[0].url). */
export const A2A_ENDPOINT_PATH = "/a2a" as const
/** The A2A protocol version served (A2A-Version header, card interface). */
export const A2A_PROTOCOL_VERSION = "1.0"

export interface A2aSkill {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  /** The MCP tool (= REST route) the skill runs. */
  readonly tool: string
  /** One example message data part. */
  readonly example: Record<string, unknown>
  /** What the skill answers, when not only a message (the agent card's description says it). */
  readonly reply?: string
}

export const a2aSkills: ReadonlyArray<A2aSkill> = [
  {
    id: "browse_services",
    name: "Browse services",
    description:
      "List the AI services on sale (filters: category, q, pricingModel, minPriceCents, maxPriceCents, minRating, sellerId, limit, cursor), with tiers and prices.",
    tags: ["commerce", "catalog", "commerce:read"],
    tool: "list_services",
    example: { skill: "browse_services", category: "translation", limit: 5 }
  },
  {
    id: "buy",
    name: "Buy a service",
    description:
      "Buy a service tier from the agent's wallet (serviceId, tierId, optional input, negotiationId): the purchase and its delivery.",
    tags: ["commerce", "purchase", "commerce:buy"],
    tool: "buy",
    reply:
      "the reply is a message with the result as a data part, or, when the service's seller has not delivered yet, a Task whose id is the transaction id (working; by default the reply first waits for the seller a few seconds): follow it with GetTask until it is completed (the seller's output is its artifact) or failed (refunded).",
    example: { skill: "buy", serviceId: "svc_doc_translate", tierId: "starter", input: { doc: "a.pdf" } }
  },
  {
    id: "buy_saga",
    name: "Buy through the saga",
    description:
      "Buy a service tier through the five-step purchase saga quote → escrow → deliver → settle → confirm (serviceId, tierId, optional input, negotiationId): the price is held in escrow and the seller paid only once it delivers; any failure before settle gives it all back.",
    tags: ["commerce", "purchase", "saga", "commerce:buy"],
    tool: "saga",
    reply:
      "the reply is a Task whose id is the saga id (saga_…): working while a step waits (on an agent's service, until its seller delivers), completed with the seller's output as its artifact, or failed (compensated: nothing charged) with the failed step and its reason; each step's state is in the task's metadata. Follow it with GetTask, SubscribeToTask or a push notification config.",
    example: { skill: "buy_saga", serviceId: "svc_doc_translate", tierId: "starter", input: { doc: "a.pdf" } }
  },
  {
    id: "negotiate",
    name: "Negotiate a price",
    description:
      "Open a price negotiation with a service's seller (serviceId, tierId, proposedPriceCents, optional terms {volume, durationMonths}); the seller answers within 30 s.",
    tags: ["commerce", "negotiation", "commerce:negotiate"],
    tool: "negotiate",
    example: { skill: "negotiate", serviceId: "svc_doc_translate", tierId: "starter", proposedPriceCents: 1500 }
  },
  {
    id: "check_transaction",
    name: "Check a transaction",
    description: "One of the agent's transactions by id (as buyer or seller): status, price, delivery.",
    tags: ["commerce", "transactions", "commerce:read"],
    tool: "transaction",
    example: { skill: "check_transaction", id: "tx_…" }
  },
  {
    id: "list_orders",
    name: "List your orders (seller)",
    description:
      "The orders placed for your services, oldest first (status: pending, delivered, failed, expired, cancelled; cursor, limit; waitMs holds an empty first page until the next order): each with its input and deadline.",
    tags: ["commerce", "fulfilment", "seller", "commerce:sell"],
    tool: "list_orders",
    example: { skill: "list_orders", status: "pending", limit: 10 }
  },
  {
    id: "deliver_order",
    name: "Deliver an order (seller)",
    description:
      "Deliver one of your pending orders (id, output, optional latencyMs): you are paid 85 % of the price at once; the same delivery again answers the same; after the order ended, 409.",
    tags: ["commerce", "fulfilment", "seller", "commerce:sell"],
    tool: "deliver_order",
    example: { skill: "deliver_order", id: "tx_…", output: { text: "done" } }
  },
  {
    id: "fail_order",
    name: "Fail an order (seller)",
    description:
      "Fail one of your pending orders you cannot deliver (id, error): the buyer is refunded in full and the failure counts against your SLA.",
    tags: ["commerce", "fulfilment", "seller", "commerce:sell"],
    tool: "fail_order",
    example: { skill: "fail_order", id: "tx_…", error: "input too long" }
  }
]

/** The skills with their tools; fails at startup if a tool was renamed. */
export const resolveSkills = (tools: ReadonlyArray<ApiTool>) =>
  a2aSkills.map((skill) => {
    const tool = tools.find((t) => t.name === skill.tool)
    if (!tool) throw new Error(`A2A skill ${skill.id}: no tool named ${skill.tool}`)
    return { skill, tool }
  })

/** The endpoint's one route, as /api/discover, llms.txt and robots list it. */
export const a2aRoutes: ReadonlyArray<
  CatalogRoute & { readonly method: "POST"; readonly path: typeof A2A_ENDPOINT_PATH }
> = [
  {
    method: "POST",
    path: A2A_ENDPOINT_PATH,
    description: `A2A ${A2A_PROTOCOL_VERSION} JSON-RPC (SendMessage, SendStreamingMessage over SSE, GetTask, ListTasks, CancelTask, SubscribeToTask): the agent card's skills (browse_services, buy, buy_saga, negotiate, check_transaction; a seller's list_orders, deliver_order, fail_order), each run as its Agent API route with the caller's key; a buy waiting on its seller is a task named by its transaction, a saga a task named by the saga`,
    auth: "bearer",
    permission: null
  }
]
