// What the GET /api/discover document is: its schema as served, the route catalogue it lists, and
// the constants it states (the spec's, and the few it leaves to the operator: docs/discovery.md).
import { Schema } from "effect"
import type { AppConfigShape } from "../platform/AppConfig.js"
import { DiscoveryDocument as SpecDocument, type EndpointLine } from "../../schema/discovery/discovery.js"

/** One route, as the HTTP layer supplies it (generated from the HttpApi and the procedure table). */
export interface CatalogRoute {
  readonly method: string
  /** From the site root, with `:param` placeholders. */
  readonly path: string
  readonly description: string
  readonly auth: EndpointLine["auth"]
  readonly permission: string | null
}

/** The MCP server (Streamable HTTP); its route is registered by src/http/mcp/routes.ts. */
export const MCP_ENDPOINT_PATH = "/mcp" as const

/** How a seller agent receives and answers its orders: the modes, where orders are read and answered. */
const SellerFulfilment = Schema.Struct({
  description: Schema.String,
  default_mode: Schema.Literal("pull"),
  modes: Schema.Array(
    Schema.Struct({ mode: Schema.Literals(["pull", "push", "simulated"]), description: Schema.String })
  ),
  orders_url: Schema.String,
  order_url: Schema.String,
  deliver_url: Schema.String,
  fail_url: Schema.String,
  deadline: Schema.String,
  settlement: Schema.String,
  buyer_wait: Schema.String
})

/**
 * The document as served: the §2.1 schema, plus `for_ai_agents.mcp_endpoint` (the MCP server's
 * Streamable HTTP address; the spec lists only the manifest's) and `ai_commerce.fulfilment` (how
 * sellers get their orders; the spec predates sellers that deliver). Every spec field is kept.
 */
export const DiscoveryDocument = Schema.Struct({
  ...SpecDocument.fields,
  for_ai_agents: Schema.Struct({ ...SpecDocument.fields.for_ai_agents.fields, mcp_endpoint: Schema.String }),
  ai_commerce: Schema.Struct({ ...SpecDocument.fields.ai_commerce.fields, fulfilment: SellerFulfilment })
})
export type DiscoveryDocument = typeof DiscoveryDocument.Type

// ---------------------------------------------------------------------------
// Constants the spec states (and the few it leaves to the operator: docs/discovery.md)
// ---------------------------------------------------------------------------

export const PLATFORM = {
  name: "Agent Commerce",
  tagline: "Build, market and monetize small software products with AI — for people and for AI agents",
  founder: "The platform's founding team",
  organization: "Agent Commerce",
  version: "1.0.0",
  languages: ["pt", "en", "es", "zh-CN", "ja", "ko", "fr", "de", "it"]
} as const

export const DISCOVERY_CACHE_TTL = 3600 as const

/**
 * What this process runs, from its configuration: the payment processor it uses, the APIs it
 * serves, webhooks. Nothing is listed that is not implemented (no sign-in provider, no chat
 * integration); `available` stays empty until something can be switched on by configuration.
 */
export const integrationsFor = (config: Pick<AppConfigShape, "payments">) => ({
  active: [
    config.payments === "stripe" ? "Stripe" : "Test payments (fake processor, no money moves)",
    "REST API (Agent API v1)",
    "tRPC procedures",
    "AI2AIC commerce protocol",
    "MCP tools",
    "Webhooks"
  ],
  available: [] as Array<string>,
  coming_soon: ["Crypto and card micropayments over HTTP 402 (MPP)"]
})

/**
 * Operator-supplied projections (the spec names the fields, not the values). Every value says it is
 * an estimate; replace them here when the business publishes its own.
 */
export const MARKET_DATA = {
  global_ai_market_2033:
    "USD 4.8 trillion (third-party projection, UNCTAD Technology and Innovation Report 2025; an estimate)",
  cagr: "about 26% a year to 2033 (estimate derived from third-party projections)",
  revenue_projection: {
    year_1: "USD 120,000 (projection)",
    year_2: "USD 480,000 (projection)",
    year_3: "USD 1,200,000 (projection)",
    year_5: "USD 6,000,000 (projection)"
  },
  gross_margin: "about 80% (estimate)",
  break_even: "month 18 (projection)",
  note: "All market data are projections and estimates, not investment advice."
} as const

export const DISCLAIMER =
  "The platform token is a utility token, not a security. " +
  "Market data, revenue projections and valuations are projections; " +
  "projections are estimates, not investment advice."
