// Discovery: builds the GET /api/discover document (spec §2.1) from config, live catalogue data and
// the route catalogue, classifies the visitor, and keeps the encoded document cached per visitor.
import { AGENT_API_PREFIX, COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { Clock, Effect, Option, Ref, Schema, Context, Layer } from "effect"
import { createHash } from "node:crypto"
import { AppConfig, type AppConfigShape } from "../platform/AppConfig.js"
import { type ApiLine, DiscoveryDocument as SpecDocument, type EndpointLine, type Visitor, type VisitorClass } from "../../schema/discovery/discovery.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { agentPermissions, commercePermissions } from "../../schema/keys/keys.js"
import { type Plan, type Template, templateCategories } from "../../schema/marketplace/marketplace.js"
import { InputKind } from "../../schema/projects/builder.js"
import { revenueShare } from "../../schema/projects/catalog.js"
import { Evaluator } from "../projects/Evaluator.js"
import { PLATFORM_TOKEN_PRICE_CENTS, PLATFORM_TOTAL_SUPPLY, STAKE_PERCENT, TOP_HOLDERS } from "../invest/Invest.js"
import { Keys } from "../keys/Keys.js"
import { Marketplace } from "../marketplace/Marketplace.js"

// ---------------------------------------------------------------------------
// Route catalogue (supplied by the HTTP layer, generated from the HttpApi and the procedure table)
// ---------------------------------------------------------------------------

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

/**
 * The document as served: the §2.1 schema, plus `for_ai_agents.mcp_endpoint` (the MCP server's
 * Streamable HTTP address; the spec lists only the manifest's). Every spec field is kept.
 */
export const DiscoveryDocument = Schema.Struct({
  ...SpecDocument.fields,
  for_ai_agents: Schema.Struct({ ...SpecDocument.fields.for_ai_agents.fields, mcp_endpoint: Schema.String })
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
/** How often a cached document re-reads templates and plans to see whether it must be rebuilt. */
export const REVALIDATE_MS = 60_000

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
  global_ai_market_2033: "USD 4.8 trillion (third-party projection, UNCTAD Technology and Innovation Report 2025; an estimate)",
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
  "The platform token is a utility token, not a security. Market data, revenue projections and valuations are projections; " +
  "projections are estimates, not investment advice."

// ---------------------------------------------------------------------------
// Visitor classification (pure)
// ---------------------------------------------------------------------------

export interface UserAgentClass {
  readonly classified_as: VisitorClass
  readonly agent_name: string | null
  readonly organization: string | null
}

type Known = readonly [pattern: RegExp, name: string, organization: string | null, kind: VisitorClass]

/** Checked in order; the first match wins. AI agents before crawlers before browsers (AI bots send Mozilla-style strings). */
const KNOWN_USER_AGENTS: ReadonlyArray<Known> = [
  [/ChatGPT-User/i, "ChatGPT-User", "OpenAI", "ai_agent"],
  [/OAI-SearchBot/i, "OAI-SearchBot", "OpenAI", "ai_agent"],
  [/GPTBot/i, "GPTBot", "OpenAI", "ai_agent"],
  [/Claude-User/i, "Claude-User", "Anthropic", "ai_agent"],
  [/Claude-SearchBot/i, "Claude-SearchBot", "Anthropic", "ai_agent"],
  [/Claude-Web/i, "Claude-Web", "Anthropic", "ai_agent"],
  [/ClaudeBot/i, "ClaudeBot", "Anthropic", "ai_agent"],
  [/anthropic-ai/i, "anthropic-ai", "Anthropic", "ai_agent"],
  [/\bAnthropic\//i, "Anthropic SDK", "Anthropic", "ai_agent"],
  [/\bOpenAI\//i, "OpenAI SDK", "OpenAI", "ai_agent"],
  [/Perplexity-User/i, "Perplexity-User", "Perplexity", "ai_agent"],
  [/PerplexityBot/i, "PerplexityBot", "Perplexity", "ai_agent"],
  [/MistralAI-User/i, "MistralAI-User", "Mistral AI", "ai_agent"],
  [/cohere-ai/i, "cohere-ai", "Cohere", "ai_agent"],
  [/meta-externalagent/i, "meta-externalagent", "Meta", "ai_agent"],
  [/Google-CloudVertexBot/i, "Google-CloudVertexBot", "Google", "ai_agent"],
  [/Gemini/i, "Gemini", "Google", "ai_agent"],
  [/YouBot/i, "YouBot", "You.com", "ai_agent"],
  [/DuckAssistBot/i, "DuckAssistBot", "DuckDuckGo", "ai_agent"],
  [/LangChain/i, "LangChain", null, "ai_agent"],
  [/llama[-_ ]?index/i, "LlamaIndex", null, "ai_agent"],
  [/python-requests/i, "python-requests", null, "ai_agent"],
  [/python-httpx/i, "python-httpx", null, "ai_agent"],
  [/aiohttp/i, "aiohttp", null, "ai_agent"],
  [/Python-urllib/i, "Python-urllib", null, "ai_agent"],
  [/^curl\//i, "curl", null, "ai_agent"],
  [/^Wget\//i, "Wget", null, "ai_agent"],
  [/node-fetch/i, "node-fetch", null, "ai_agent"],
  [/\bundici\b/i, "undici", null, "ai_agent"],
  [/^node$/i, "node", null, "ai_agent"],
  [/\baxios\//i, "axios", null, "ai_agent"],
  [/Go-http-client/i, "Go-http-client", null, "ai_agent"],
  [/okhttp/i, "okhttp", null, "ai_agent"],
  [/^(Deno|Bun)\//i, "JavaScript runtime", null, "ai_agent"],
  [/Googlebot/i, "Googlebot", "Google", "crawler"],
  [/bingbot/i, "bingbot", "Microsoft", "crawler"],
  [/DuckDuckBot/i, "DuckDuckBot", "DuckDuckGo", "crawler"],
  [/Baiduspider/i, "Baiduspider", "Baidu", "crawler"],
  [/YandexBot/i, "YandexBot", "Yandex", "crawler"],
  [/Slurp/i, "Slurp", "Yahoo", "crawler"],
  [/Applebot/i, "Applebot", "Apple", "crawler"],
  [/Amazonbot/i, "Amazonbot", "Amazon", "crawler"],
  [/CCBot/i, "CCBot", "Common Crawl", "crawler"],
  [/Bytespider/i, "Bytespider", "ByteDance", "crawler"],
  [/facebookexternalhit/i, "facebookexternalhit", "Meta", "crawler"],
  [/Twitterbot/i, "Twitterbot", "X", "crawler"],
  [/LinkedInBot/i, "LinkedInBot", "LinkedIn", "crawler"]
]

const GENERIC_BOT = /bot\b|crawl|spider|slurp|archiver|fetcher/i
const BROWSER = /^Mozilla\/5\.0 .*(Chrome|Chromium|Firefox|Safari|Edg|OPR|Gecko)\//

/** Classifies a User-Agent header: known AI agents and clients, crawlers, browsers, else unknown. */
export const classifyUserAgent = (userAgent: string | undefined): UserAgentClass => {
  const ua = (userAgent ?? "").trim()
  if (ua === "") return { classified_as: "unknown", agent_name: null, organization: null }
  for (const [pattern, name, organization, kind] of KNOWN_USER_AGENTS) {
    if (pattern.test(ua)) return { classified_as: kind, agent_name: name, organization }
  }
  if (GENERIC_BOT.test(ua)) return { classified_as: "crawler", agent_name: null, organization: null }
  if (BROWSER.test(ua)) return { classified_as: "browser", agent_name: null, organization: null }
  return { classified_as: "unknown", agent_name: null, organization: null }
}

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i

const visitorMessage = (base: string, c: UserAgentClass): string => {
  switch (c.classified_as) {
    case "ai_agent":
      return (
        `Welcome${c.agent_name ? `, ${c.agent_name}` : ""}: you are classified as an AI agent. Start with for_ai_agents; ` +
        `get an API key at ${base}/agent-dashboard and send it as Authorization: Bearer <key> to ${base}${AGENT_API_PREFIX}.`
      )
    case "crawler":
      return `Welcome, crawler. Public pages are listed in ${base}/sitemap.xml; crawl rules are in ${base}/robots.txt.`
    case "browser":
      return `This is the machine-readable description of the platform; the human-readable site starts at ${base}/.`
    case "unknown":
      return `Your client could not be classified from its User-Agent. AI agents: read ${base}/llms.txt and for_ai_agents.`
  }
}

// ---------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------

const plain = <A extends object>(a: A): A => ({ ...a })

interface Inputs {
  readonly templates: ReadonlyArray<Template>
  readonly plans: ReadonlyArray<Plan>
}

const usd = (cents: number) =>
  `USD ${(cents / 100).toLocaleString("en-US", { minimumFractionDigits: cents % 100 === 0 ? 0 : 2, maximumFractionDigits: 2 })}`

const relative = (path: string, prefix: string) => path.slice(prefix.length) || "/"

/** The document without its visitor member (the part shared by every caller). */
export const buildDocument = (
  config: AppConfigShape,
  inputs: Inputs,
  routes: ReadonlyArray<CatalogRoute>,
  evaluatorName: string,
  generatedAt: string
): Omit<DiscoveryDocument, "visitor"> => {
  const base = config.baseUrl
  const u = (path: string) => `${base}${path}`
  const line = (r: CatalogRoute): EndpointLine => ({
    method: r.method,
    path: r.path,
    description: r.description,
    url: u(r.path),
    auth: r.auth,
    permission: r.permission
  })
  const apiLine = (prefix: string) => (r: CatalogRoute): ApiLine => ({
    method: r.method,
    path: relative(r.path, prefix),
    desc: r.description,
    url: u(r.path),
    permission: r.permission
  })
  const under = (prefix: string) => (r: CatalogRoute) => r.path === prefix || r.path.startsWith(`${prefix}/`)
  const isCommerce = under(COMMERCE_PREFIX)
  const agentRoutes = routes.filter((r) => r.auth !== "public" && under(AGENT_API_PREFIX)(r) && !isCommerce(r))
  const commerceRoutes = routes.filter(isCommerce)
  const commerce = u(COMMERCE_PREFIX)
  const present = new Set(inputs.templates.map((t) => t.category))
  const valuationCents = PLATFORM_TOTAL_SUPPLY * PLATFORM_TOKEN_PRICE_CENTS

  return {
    platform: {
      name: PLATFORM.name,
      tagline: PLATFORM.tagline,
      url: base,
      founder: PLATFORM.founder,
      organization: PLATFORM.organization,
      version: PLATFORM.version,
      languages: [...PLATFORM.languages]
    },
    capabilities: {
      voice_builder: {
        status: "active (simulated builds)",
        description:
          "Describe a product by voice, text, PDF, image or CSV and the builder turns it into a project; the build runs as a " +
          `background job you follow at ${u(`${AGENT_API_PREFIX}/status/:id`)}. Builds are simulated: nothing is deployed.`,
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
        payment_processor: config.payments === "stripe" ? "Stripe" : "Stripe (a fake processor stands in for it in this deployment)",
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
    },
    api_endpoints: {
      public: routes.filter((r) => r.auth === "public").map(line),
      authenticated: routes.filter((r) => r.auth !== "public").map(line)
    },
    integrations: {
      ...integrationsFor(config),
      custom_mcp: true,
      details_url: u("/integrations")
    },
    for_ai_agents: {
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
    },
    ai_commerce: {
      protocol: "AI2AIC",
      version: "1.0.0",
      description: "Agent-to-agent commerce: discover AI services, buy them autonomously within spending policies, negotiate, settle instantly, review and build a reputation.",
      base_url: commerce,
      auth: "Bearer API key with commerce:* permissions",
      capabilities: [
        "service_discovery",
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
        how_to_buy: `POST ${commerce}/buy with {"serviceId","tierId","input"} and a key holding commerce:buy; the wallet must hold enough credits and the purchase must fit its spending policies.`,
        how_to_negotiate: `POST ${commerce}/negotiate with {"serviceId","tierId","proposedPriceCents","terms"}; the seller answers within 30 seconds (accept, reject or counter); reply with POST ${commerce}/negotiate/:id/respond.`
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
      mpp: {
        status: "pending_early_access",
        methods: ["crypto.charge", "card.charge"],
        min_charge_usd: "0.01",
        protocol: "HTTP 402",
        fallback: "internal_credits",
        discovery_url: `${commerce}/mpp`,
        health_url: `${commerce}/mpp/health`
      }
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

// ---------------------------------------------------------------------------
// Encoding and caching
// ---------------------------------------------------------------------------

/** The encoded document: body bytes, strong ETag, and whether it is personalised by a key. */
export interface EncodedDocument {
  readonly body: Uint8Array
  readonly etag: string
  readonly personalised: boolean
}

export interface DiscoveryRequest {
  readonly routes: ReadonlyArray<CatalogRoute>
  readonly authorization?: string | undefined
  readonly userAgent?: string | undefined
}

interface Built {
  readonly routes: ReadonlyArray<CatalogRoute>
  readonly inputsKey: string
  readonly checkedAt: number
  readonly generatedAt: string
  /** `{"platform":…,"visitor":` */
  readonly head: Uint8Array
  /** `,"capabilities":…}` */
  readonly tail: Uint8Array
  /** Anonymous variants, keyed by visitor class and name. */
  readonly anonymous: ReadonlyMap<string, EncodedDocument>
}

const encoder = new TextEncoder()

const etagOf = (body: Uint8Array) => `"${createHash("sha1").update(body).digest("base64url")}"`

const assemble = (built: Built, visitor: Visitor, personalised: boolean): EncodedDocument => {
  const middle = encoder.encode(JSON.stringify(visitor))
  const body = new Uint8Array(built.head.length + middle.length + built.tail.length)
  body.set(built.head, 0)
  body.set(middle, built.head.length)
  body.set(built.tail, built.head.length + middle.length)
  return { body, etag: etagOf(body), personalised }
}

export class Discovery extends Context.Service<Discovery>()("Discovery", {
  make: Effect.gen(function* () {
    const config = yield* AppConfig
    const marketplace = yield* Marketplace
    const keys = yield* Keys
    const evaluator = yield* Evaluator
    const cache = yield* Ref.make<Option.Option<Built>>(Option.none())

    const readInputs = Effect.all({ templates: marketplace.listTemplates, plans: marketplace.listPlans })
    const keyOf = (inputs: Inputs) => JSON.stringify(inputs)

    const rebuild = (routes: ReadonlyArray<CatalogRoute>, inputs: Inputs, now: number) => {
      const generatedAt = new Date(now).toISOString()
      const { platform, ...rest } = buildDocument(config, inputs, routes, evaluator.name, generatedAt)
      const built: Built = {
        routes,
        inputsKey: keyOf(inputs),
        checkedAt: now,
        generatedAt,
        head: encoder.encode(`{"platform":${JSON.stringify(platform)},"visitor":`),
        tail: encoder.encode(`,${JSON.stringify(rest).slice(1)}`),
        anonymous: new Map()
      }
      return built
    }

    /** The cached build, rebuilt when missing, when the routes changed, or when templates or plans changed. */
    const current: (routes: ReadonlyArray<CatalogRoute>) => Effect.Effect<Built, StorageUnavailable> =
      Effect.fnUntraced(function* (routes: ReadonlyArray<CatalogRoute>) {
        const now = yield* Clock.currentTimeMillis
        const cached = yield* Ref.get(cache)
        if (Option.isSome(cached) && cached.value.routes === routes && now - cached.value.checkedAt < REVALIDATE_MS) {
          return cached.value
        }
        const inputs = yield* readInputs
        const key = keyOf(inputs)
        const next =
          Option.isSome(cached) && cached.value.routes === routes && cached.value.inputsKey === key
            ? { ...cached.value, checkedAt: now }
            : rebuild(routes, inputs, now)
        yield* Ref.set(cache, Option.some(next))
        return next
      })

    /** Names the agent behind a valid bearer key (no rate limit is spent); undefined otherwise. */
    const keyVisitor = Effect.fnUntraced(function* (authorization: string | undefined) {
      const match = BEARER.exec(authorization ?? "")
      if (!match) return { visitor: undefined, rejected: authorization !== undefined ? "not a bearer token" : undefined }
      const result = yield* Effect.result(keys.authenticate(match[1]))
      if (result._tag === "Failure") {
        const e = result.failure
        return { visitor: undefined, rejected: e._tag === "Unauthorized" ? e.message : "the key could not be checked" }
      }
      const { agent, key } = result.success
      const visitor: Visitor = {
        classified_as: "ai_agent",
        agent_name: agent.name,
        organization: agent.organization,
        message:
          `Authenticated as agent "${agent.name}"${agent.organization ? ` of ${agent.organization}` : ""}. ` +
          `Your key may call the endpoints its permissions allow: ${key.permissions.join(", ")}.`,
        authenticated: true,
        detected_by: "api_key",
        permissions: [...key.permissions]
      }
      return { visitor, rejected: undefined }
    })

    const anonymousVisitor = (userAgent: string | undefined, c: UserAgentClass, rejected: string | undefined): Visitor => {
      const message = visitorMessage(config.baseUrl, c)
      return {
        ...c,
        message: rejected ? `The Authorization header was not accepted (${rejected}); classified by User-Agent instead. ${message}` : message,
        authenticated: false,
        detected_by: (userAgent ?? "").trim() === "" ? "none" : "user_agent"
      }
    }

    // The hot path of an anonymous request is a clock read, a Ref read, the User-Agent match and a
    // map lookup; no span, so it stays close to a raw server (issue 11 benchmarks it).
    const document: (request: DiscoveryRequest) => Effect.Effect<EncodedDocument, StorageUnavailable> =
      Effect.fnUntraced(function* (request: DiscoveryRequest) {
        const built = yield* current(request.routes)
        const c = classifyUserAgent(request.userAgent)
        if (request.authorization !== undefined) {
          const { visitor, rejected } = yield* keyVisitor(request.authorization)
          return assemble(built, visitor ?? anonymousVisitor(request.userAgent, c, rejected), true)
        }
        const cacheKey = `${c.classified_as}|${c.agent_name ?? ""}|${(request.userAgent ?? "").trim() === "" ? "none" : "ua"}`
        const hit = built.anonymous.get(cacheKey)
        if (hit) return hit
        const encoded = assemble(built, anonymousVisitor(request.userAgent, c, undefined), false)
        // Only the build this variant belongs to gains it (a concurrent rebuild keeps its own map).
        yield* Ref.update(cache, (cached) =>
          Option.isSome(cached) && cached.value.generatedAt === built.generatedAt && cached.value.routes === built.routes
            ? Option.some({ ...cached.value, anonymous: new Map(cached.value.anonymous).set(cacheKey, encoded) })
            : cached
        )
        return encoded
      })

    /** The decoded document for a visitor (tests and other surfaces; the HTTP route uses `document`). */
    const build = (request: DiscoveryRequest) =>
      Effect.map(document(request), (d) => JSON.parse(new TextDecoder().decode(d.body)) as DiscoveryDocument)

    return { document, build, classifyUserAgent } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Discovery, Discovery.make).pipe(Layer.provide([Keys.layer, Marketplace.layer]))
}
