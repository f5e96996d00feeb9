// The discovery document of GET /api/discover (spec §2.1) and the visitor classification it carries.
import { Schema } from "effect"
import { Plan, Template } from "../marketplace/marketplace.js"

export const VisitorClass = Schema.Literals(["ai_agent", "crawler", "browser", "unknown"])
export type VisitorClass = typeof VisitorClass.Type

export const Visitor = Schema.Struct({
  classified_as: VisitorClass,
  agent_name: Schema.NullOr(Schema.String),
  organization: Schema.NullOr(Schema.String),
  message: Schema.String,
  /** True only when a valid bearer key named the agent. */
  authenticated: Schema.Boolean,
  /** What the classification rests on. */
  detected_by: Schema.Literals(["api_key", "user_agent", "none"]),
  /** The key's permissions (authenticated visitors only). */
  permissions: Schema.optional(Schema.Array(Schema.String))
})
export type Visitor = typeof Visitor.Type

/** One line of an endpoint list in `api_endpoints` (paths from the site root). */
export const EndpointLine = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  description: Schema.String,
  url: Schema.String,
  auth: Schema.Literals(["public", "bearer", "session", "bearer_or_session"]),
  permission: Schema.NullOr(Schema.String)
})
export type EndpointLine = typeof EndpointLine.Type

/** One line of the agent API / commerce endpoint lists (paths relative to the list's base_url). */
export const ApiLine = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  desc: Schema.String,
  url: Schema.String,
  permission: Schema.NullOr(Schema.String)
})
export type ApiLine = typeof ApiLine.Type

const Strings = Schema.Array(Schema.String)

export const DiscoveryDocument = Schema.Struct({
  platform: Schema.Struct({
    name: Schema.String,
    tagline: Schema.String,
    url: Schema.String,
    founder: Schema.String,
    organization: Schema.String,
    version: Schema.String,
    languages: Strings
  }),
  visitor: Visitor,
  capabilities: Schema.Struct({
    voice_builder: Schema.Struct({
      status: Schema.String,
      description: Schema.String,
      supported_inputs: Strings,
      ai_models: Strings
    }),
    marketplace: Schema.Struct({
      status: Schema.String,
      total_templates: Schema.Int,
      categories: Strings,
      templates: Schema.Array(Template)
    }),
    monetization: Schema.Struct({
      status: Schema.String,
      payment_processor: Schema.String,
      plans: Schema.Array(Plan),
      revenue_share: Schema.Struct({ creator: Schema.String, platform: Schema.String })
    }),
    investment: Schema.Struct({
      status: Schema.String,
      token: Schema.String,
      token_symbol: Schema.String,
      token_type: Schema.String,
      stake_available: Schema.String,
      valuation: Schema.String,
      governance: Schema.String,
      ai_agent_investment: Schema.Boolean,
      api_endpoint: Schema.String
    }),
    security: Schema.Struct({
      encryption: Schema.String,
      transport: Schema.String,
      model: Schema.String,
      compliance: Strings
    })
  }),
  api_endpoints: Schema.Struct({
    public: Schema.Array(EndpointLine),
    authenticated: Schema.Array(EndpointLine)
  }),
  integrations: Schema.Struct({
    active: Strings,
    available: Strings,
    coming_soon: Strings,
    custom_mcp: Schema.Boolean,
    details_url: Schema.String
  }),
  for_ai_agents: Schema.Struct({
    dedicated_page: Schema.String,
    agent_dashboard: Schema.String,
    llms_txt: Schema.String,
    plugin_manifest: Schema.String,
    mcp_manifest: Schema.String,
    openapi_spec: Schema.String,
    mcp_tools: Schema.String,
    agent_card: Schema.String,
    agent_api_v1: Schema.Struct({
      base_url: Schema.String,
      auth: Schema.String,
      rate_limit: Schema.String,
      endpoints: Schema.Array(ApiLine),
      permissions: Strings
    }),
    use_cases: Strings
  }),
  ai_commerce: Schema.Struct({
    protocol: Schema.Literal("AI2AIC"),
    version: Schema.String,
    description: Schema.String,
    base_url: Schema.String,
    auth: Schema.String,
    capabilities: Strings,
    endpoints: Schema.Array(ApiLine),
    quick_start: Schema.Struct({
      autonomous_purchase_url: Schema.String,
      saga_url: Schema.String,
      wallet_url: Schema.String,
      negotiate_url: Schema.String,
      how_to_buy: Schema.String,
      how_to_negotiate: Schema.String
    }),
    permissions: Strings,
    autonomy_levels: Strings,
    pricing_models: Strings,
    settlement: Schema.String,
    trust_system: Schema.Struct({
      reputation: Schema.String,
      leaderboard: Schema.String,
      reviews: Schema.String,
      sla_monitoring: Schema.String
    }),
    mpp: Schema.Struct({
      status: Schema.Literal("pending_early_access"),
      methods: Strings,
      min_charge_usd: Schema.String,
      protocol: Schema.String,
      fallback: Schema.String,
      discovery_url: Schema.String,
      health_url: Schema.String
    }),
    /** x402 v2 on the paid call, when configured (docs/x402.md). */
    x402: Schema.optional(
      Schema.Struct({
        version: Schema.Literal(2),
        scheme: Schema.Literal("exact"),
        network: Schema.String,
        asset: Schema.String,
        pay_to: Schema.String,
        api_key_required: Schema.Boolean,
        how_to_pay: Schema.String,
        /** The a2a-x402 extension's URI: the same payment for a buy over A2A (docs/a2a.md). */
        a2a_extension: Schema.String
      })
    )
  }),
  market_data: Schema.Struct({
    global_ai_market_2033: Schema.String,
    cagr: Schema.String,
    revenue_projection: Schema.Struct({
      year_1: Schema.String,
      year_2: Schema.String,
      year_3: Schema.String,
      year_5: Schema.String
    }),
    gross_margin: Schema.String,
    break_even: Schema.String,
    note: Schema.String
  }),
  legal: Schema.Struct({
    jurisdiction: Strings,
    token_classification: Schema.String,
    disclaimer: Schema.String,
    terms_url: Schema.String,
    whitepaper_url: Schema.String,
    legal_guide_url: Schema.String
  }),
  _meta: Schema.Struct({
    generated_at: Schema.String,
    format: Schema.String,
    purpose: Schema.String,
    cache_ttl: Schema.Literal(3600),
    spec: Schema.String
  })
})
export type DiscoveryDocument = typeof DiscoveryDocument.Type
