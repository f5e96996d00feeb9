// The discovery document's sections (spec §2.1), each built from the configuration, the live
// catalogue inputs and the route catalogue; buildDocument puts them together in the spec's order.
import { A2A_X402_EXTENSION } from "../../schema/a2a/x402Task.js"
import { AGENT_API_PREFIX, COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import type { AppConfigShape } from "../platform/AppConfig.js"
import type { ApiLine, EndpointLine } from "../../schema/discovery/discovery.js"
import { agentPermissions, commercePermissions } from "../../schema/keys/keys.js"
import { type Plan, type Template, templateCategories } from "../../schema/marketplace/marketplace.js"
import { InputKind } from "../../schema/projects/builder.js"
import { revenueShare } from "../../schema/projects/catalog.js"
import { PLATFORM_TOKEN_PRICE_CENTS, PLATFORM_TOTAL_SUPPLY, STAKE_PERCENT, TOP_HOLDERS } from "../invest/policy.js"
import {
  type CatalogRoute,
  DISCLAIMER,
  DISCOVERY_CACHE_TTL,
  type DiscoveryDocument,
  integrationsFor,
  MARKET_DATA,
  MCP_ENDPOINT_PATH,
  PLATFORM
} from "./document.js"
import { fulfilmentSection } from "./fulfilment.js"

type Doc = Omit<DiscoveryDocument, "visitor">

const plain = <A extends object>(a: A): A => ({ ...a })

/** What the catalogue holds now: the document is rebuilt when either changes. */
export interface Inputs {
  readonly templates: ReadonlyArray<Template>
  readonly plans: ReadonlyArray<Plan>
}

const usd = (cents: number) => {
  const digits = { minimumFractionDigits: cents % 100 === 0 ? 0 : 2, maximumFractionDigits: 2 }
  return `USD ${(cents / 100).toLocaleString("en-US", digits)}`
}

const relative = (path: string, prefix: string) => path.slice(prefix.length) || "/"

const under = (prefix: string) => (r: CatalogRoute) => r.path === prefix || r.path.startsWith(`${prefix}/`)
const isCommerce = under(COMMERCE_PREFIX)

/** Absolute addresses and the two shapes a route is listed in. */
const linksFor = (base: string) => {
  const u = (path: string) => `${base}${path}`
  const line = (r: CatalogRoute): EndpointLine => ({
    method: r.method,
    path: r.path,
    description: r.description,
    url: u(r.path),
    auth: r.auth,
    permission: r.permission
  })
  const apiLine =
    (prefix: string) =>
    (r: CatalogRoute): ApiLine => ({
      method: r.method,
      path: relative(r.path, prefix),
      desc: r.description,
      url: u(r.path),
      permission: r.permission
    })
  return { u, line, apiLine }
}
type Links = ReturnType<typeof linksFor>

const platformSection = (base: string): Doc["platform"] => ({
  name: PLATFORM.name,
  tagline: PLATFORM.tagline,
  url: base,
  founder: PLATFORM.founder,
  organization: PLATFORM.organization,
  version: PLATFORM.version,
  languages: [...PLATFORM.languages]
})

const capabilitiesSection = (
  config: AppConfigShape,
  inputs: Inputs,
  evaluatorName: string,
  { u }: Links
): Doc["capabilities"] => {
  const present = new Set(inputs.templates.map((t) => t.category))
  const valuationCents = PLATFORM_TOTAL_SUPPLY * PLATFORM_TOKEN_PRICE_CENTS
  return {
    voice_builder: {
      status: "active (simulated builds)",
      description:
        "Describe a product by voice, text, PDF, image or CSV and the builder turns it into a project; " +
        `the build runs as a background job you follow at ${u(`${AGENT_API_PREFIX}/status/:id`)}. ` +
        "Builds are simulated: nothing is deployed.",
      supported_inputs: [...InputKind.literals],
      ai_models: [evaluatorName, "builder-simulation-v1"]
    },
    marketplace: {
      status: "active",
      total_templates: inputs.templates.length,
      categories: templateCategories.filter((c) => present.has(c)),
      templates: inputs.templates.map(plain)
    },
    monetization: {
      status: "active",
      payment_processor:
        config.payments === "stripe" ? "Stripe" : "Stripe (a fake processor stands in for it in this deployment)",
      plans: inputs.plans.map(plain),
      revenue_share: { creator: revenueShare.creator, platform: revenueShare.platform }
    },
    investment: {
      status: "active",
      token: config.tokenName,
      token_symbol: config.tokenSymbol,
      token_type: "utility",
      stake_available: `${STAKE_PERCENT}%`,
      valuation:
        `${usd(valuationCents)} (${PLATFORM_TOTAL_SUPPLY.toLocaleString("en-US")} ${config.tokenSymbol} at ` +
        `${usd(PLATFORM_TOKEN_PRICE_CENTS)} each; an estimate, not investment advice)`,
      governance: `top ${TOP_HOLDERS} investors + founder veto`,
      ai_agent_investment: true,
      api_endpoint: u("/invest/api")
    },
    security: {
      encryption: "AES-256",
      transport: "TLS 1.3",
      model: "zero-trust",
      compliance: ["GDPR", "LGPD", "CCPA", "PIPA", "APPI"]
    }
  }
}

const forAiAgentsSection = (
  config: AppConfigShape,
  routes: ReadonlyArray<CatalogRoute>,
  { apiLine, u }: Links
): Doc["for_ai_agents"] => {
  const agentRoutes = routes.filter((r) => r.auth !== "public" && under(AGENT_API_PREFIX)(r) && !isCommerce(r))
  return {
    dedicated_page: u("/for-ai-agents"),
    agent_dashboard: u("/agent-dashboard"),
    llms_txt: u("/llms.txt"),
    plugin_manifest: u("/.well-known/ai-plugin.json"),
    mcp_manifest: u("/.well-known/mcp.json"),
    mcp_endpoint: u(MCP_ENDPOINT_PATH),
    openapi_spec: u(`${AGENT_API_PREFIX}/openapi.json`),
    mcp_tools: u(`${AGENT_API_PREFIX}/mcp-tools.json`),
    agent_card: u("/.well-known/agent-card.json"),
    agent_api_v1: {
      base_url: u(AGENT_API_PREFIX),
      auth: "Authorization: Bearer <API key> (create keys at /agent-dashboard)",
      rate_limit: `${config.rateLimitPerMinute}/minute, ${config.rateLimitPerDay}/day per key`,
      endpoints: agentRoutes.map(apiLine(AGENT_API_PREFIX)),
      permissions: [...agentPermissions]
    },
    use_cases: [
      "Browse and evaluate marketplace projects before acquiring one",
      "Acquire a project through the payment processor",
      "Create a project from a template or a description and follow its build",
      "Invest platform utility tokens and vote on governance proposals",
      "Buy and sell AI services from other agents over the AI2AIC protocol",
      "Negotiate prices and settle instantly with escrow-backed sagas"
    ]
  }
}

const aiCommerceSection = (routes: ReadonlyArray<CatalogRoute>, { apiLine, u }: Links): Doc["ai_commerce"] => {
  const commerceRoutes = routes.filter(isCommerce)
  const commerce = u(COMMERCE_PREFIX)
  return {
    protocol: "AI2AIC",
    version: "1.0.0",
    description:
      "Agent-to-agent commerce: discover AI services, buy them autonomously within spending policies, negotiate, " +
      "settle instantly, review and build a reputation.",
    base_url: commerce,
    auth: "Bearer API key with commerce:* permissions",
    capabilities: [
      "service_discovery",
      "seller_fulfilment",
      "autonomous_purchase",
      "commerce_saga",
      "negotiation",
      "wallet_and_spending_policies",
      "disputes",
      "reviews_and_reputation",
      "analytics"
    ],
    endpoints: commerceRoutes.map(apiLine(COMMERCE_PREFIX)),
    quick_start: {
      autonomous_purchase_url: `${commerce}/buy`,
      saga_url: `${commerce}/saga`,
      wallet_url: `${commerce}/wallet`,
      negotiate_url: `${commerce}/negotiate`,
      how_to_buy:
        `POST ${commerce}/buy with {"serviceId","tierId","input"} and a key holding commerce:buy; ` +
        "the wallet must hold enough credits and the purchase must fit its spending policies.",
      how_to_negotiate:
        `POST ${commerce}/negotiate with {"serviceId","tierId","proposedPriceCents","terms"}; ` +
        "the seller answers within 30 seconds (accept, reject or counter); " +
        `reply with POST ${commerce}/negotiate/:id/respond.`
    },
    permissions: [...commercePermissions],
    autonomy_levels: ["manual", "semi_auto", "full_auto"],
    pricing_models: ["per_call", "monthly", "usage_based", "tiered"],
    settlement: "instant: 85% seller, 15% platform fee",
    trust_system: {
      reputation: "agent trust score from 0 to 1000, in bands from Bronze up to Diamond",
      leaderboard: `${commerce}/leaderboard`,
      reviews: "post-purchase reviews, 1 to 5 stars",
      sla_monitoring: `per-tier SLA compliance at ${commerce}/services/:id/sla`
    },
    fulfilment: fulfilmentSection(commerce),
    mpp: {
      status: "pending_early_access",
      methods: ["crypto.charge", "card.charge"],
      min_charge_usd: "0.01",
      protocol: "HTTP 402",
      fallback: "internal_credits",
      discovery_url: `${commerce}/mpp`,
      health_url: `${commerce}/mpp/health`
    }
  }
}

/** The document without its visitor member (the part shared by every caller). */
export const buildDocument = (
  config: AppConfigShape,
  inputs: Inputs,
  routes: ReadonlyArray<CatalogRoute>,
  evaluatorName: string,
  generatedAt: string
): Doc => {
  const links = linksFor(config.baseUrl)
  const { line, u } = links
  return {
    platform: platformSection(config.baseUrl),
    capabilities: capabilitiesSection(config, inputs, evaluatorName, links),
    api_endpoints: {
      public: routes.filter((r) => r.auth === "public").map(line),
      authenticated: routes.filter((r) => r.auth !== "public").map(line)
    },
    integrations: {
      ...integrationsFor(config),
      custom_mcp: true,
      details_url: u("/integrations")
    },
    for_ai_agents: forAiAgentsSection(config, routes, links),
    ai_commerce: {
      ...aiCommerceSection(routes, links),
      ...(config.x402._tag === "Some"
        ? {
            x402: {
              version: 2 as const,
              scheme: "exact" as const,
              network: config.x402.value.network,
              asset: config.x402.value.asset,
              pay_to: config.x402.value.payTo,
              api_key_required: false,
              how_to_pay:
                "POST a per_call service's /invoke: the 402 carries PAYMENT-REQUIRED (x402 v2); retry with " +
                "PAYMENT-SIGNATURE; the answer carries PAYMENT-RESPONSE",
              // The same payment over A2A (docs/a2a.md "Paying with x402").
              a2a_extension: A2A_X402_EXTENSION
            }
          }
        : {})
    },
    market_data: {
      ...MARKET_DATA,
      revenue_projection: { ...MARKET_DATA.revenue_projection }
    },
    legal: {
      jurisdiction: ["Brazil", "Paraguay"],
      token_classification: "utility token — not a security",
      disclaimer: DISCLAIMER,
      terms_url: u("/terms"),
      whitepaper_url: u("/whitepaper"),
      legal_guide_url: u("/legal-guide")
    },
    _meta: {
      generated_at: generatedAt,
      format: "application/json",
      purpose: "Machine-readable description of the platform for AI agents, crawlers and integrators",
      cache_ttl: DISCOVERY_CACHE_TTL,
      spec: "service-interface §2.1"
    }
  }
}
