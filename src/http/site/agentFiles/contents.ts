// The agent-facing files' contents, pure functions of the configuration and the route catalogue:
// llms.txt, robots.txt, sitemap.xml, the plugin, MCP and A2A manifests, the MCP tool list, the logo.
import { A2A_X402_EXTENSION } from "../../../schema/a2a/x402Task.js"
import { type AppConfigShape } from "../../../services/platform/AppConfig.js"
import { AGENT_API_PREFIX, COMMERCE_PREFIX } from "../../../schema/platform/routes.js"
import { type CatalogRoute, PLATFORM } from "../../../services/discovery/document.js"
import { MCP_CAPABILITIES, MCP_ENDPOINT_PATH, MCP_PROTOCOL_VERSION } from "../../descriptors/mcp.js"
import { A2A_ENDPOINT_PATH, A2A_PROTOCOL_VERSION, a2aSkills } from "../../descriptors/a2a.js"
import { type ApiTool, snakeCase, toMcpTool } from "../../descriptors/tools.js"
import { pageNames } from "../pages.js"
import { DOCS_PATH, LOGO_PATH, MCP_TOOLS_PATH, OPENAPI_PATH } from "./catalog.js"

const isAgentApi = (r: CatalogRoute) =>
  r.auth !== "public" && r.path.startsWith(`${AGENT_API_PREFIX}/`) && !r.path.startsWith(`${COMMERCE_PREFIX}/`)
const isCommerce = (r: CatalogRoute) => r.path === COMMERCE_PREFIX || r.path.startsWith(`${COMMERCE_PREFIX}/`)
const mdLink = (text: string, url: string, note?: string) =>
  `- [${text.replace(/[[\]]/g, "")}](${url})${note ? `: ${note}` : ""}`

/** llms.txt (llmstxt.org): H1, a `>` summary, then `##` sections of markdown links. */
export const llmsTxt = (config: AppConfigShape, catalog: ReadonlyArray<CatalogRoute>): string => {
  const base = config.baseUrl
  const u = (p: string) => `${base}${p}`
  const endpoint = (r: CatalogRoute) =>
    mdLink(
      `${r.method} ${r.path}`,
      u(r.path),
      `${r.description}${r.permission ? ` (permission: ${r.permission})` : ""}`
    )
  const agent = catalog.filter(isAgentApi)
  const commerce = catalog.filter(isCommerce)
  const publicApi = catalog.filter(
    (r) => r.auth === "public" && (r.path.startsWith("/api/trpc/") || r.path === "/invest/api")
  )
  const authProcedures = catalog.filter((r) => r.auth !== "public" && r.path.startsWith("/api/trpc/"))
  return [
    `# ${PLATFORM.name}`,
    "",
    `> ${PLATFORM.name} is a platform for building, marketing and monetizing small software products with AI assistance. ` +
      `AI agents use the Agent API v1 (${u(AGENT_API_PREFIX)}, bearer API keys) and the AI2AIC agent-to-agent commerce protocol ` +
      `(${u(COMMERCE_PREFIX)}).`,
    "",
    `Marketplace templates in 8 categories; creators receive 85% of revenue and the platform 15%. Subscription plans Starter, Pro and Scale. ` +
      `The platform token is a utility token, not a security (Brazil, Paraguay); projections are estimates, not investment advice. ` +
      `Agent API rate limit: ${config.rateLimitPerMinute} requests per minute and ${config.rateLimitPerDay} per day per key. ` +
      `Send keys as \`Authorization: Bearer <key>\`; create them at ${u("/agent-dashboard")}.`,
    "",
    ...(config.x402._tag === "Some"
      ? [
          `Per-call services also take x402 v2 (scheme exact, ${config.x402.value.network}, asset ${config.x402.value.asset}) with no API key: ` +
            `the paid call's 402 carries PAYMENT-REQUIRED; retry with PAYMENT-SIGNATURE. Escrow until the seller delivers, refunds on the chain ` +
            `(docs/x402.md). Over A2A (POST /a2a, extension ${A2A_X402_EXTENSION}) a buy without a key is a task in ` +
            `TASK_STATE_INPUT_REQUIRED carrying x402.payment.required; pay it with a message naming the task and carrying ` +
            `the signed PaymentPayload in metadata["x402.payment.payload"] (docs/a2a.md).`,
          ""
        ]
      : []),
    "## Docs",
    "",
    mdLink(
      "For AI agents",
      u("/for-ai-agents"),
      "keys, permissions, rate limits, the commerce protocol, a quick start"
    ),
    mdLink("Discovery document", u("/api/discover"), "everything below as JSON, generated from the live route table"),
    mdLink("OpenAPI document", u(OPENAPI_PATH), "machine-readable description of the REST API"),
    mdLink("API reference", u(DOCS_PATH), "every endpoint, for people"),
    mdLink("Integrations", u("/integrations"), "what the platform connects to"),
    "",
    "## Agent API v1",
    "",
    ...(agent.length > 0
      ? agent.map(endpoint)
      : [mdLink("Agent API overview", u("/for-ai-agents"), "endpoints appear here as they are enabled")]),
    "",
    "## AI2AIC commerce protocol",
    "",
    ...(commerce.length > 0
      ? commerce.map(endpoint)
      : [
          mdLink(
            "AI2AIC overview",
            u("/for-ai-agents#ai2aic"),
            "protocol 1.0.0; its endpoints appear here as they are enabled"
          )
        ]),
    "",
    "## Public endpoints",
    "",
    ...publicApi.map(endpoint),
    ...authProcedures.map(endpoint),
    "",
    "## Agent files",
    "",
    mdLink("MCP manifest", u("/.well-known/mcp.json"), `MCP server at ${u(MCP_ENDPOINT_PATH)} (streamable HTTP)`),
    mdLink("MCP tools", u(MCP_TOOLS_PATH), "one tool per agent and commerce endpoint, with JSON Schema inputs"),
    mdLink("AI plugin manifest", u("/.well-known/ai-plugin.json")),
    mdLink("A2A agent card", u("/.well-known/agent-card.json")),
    mdLink("Sitemap", u("/sitemap.xml")),
    "",
    "## Optional",
    "",
    mdLink("Whitepaper", u("/whitepaper"), "marketplace, plans, token, governance, risks"),
    mdLink("Terms", u("/terms")),
    mdLink("Legal guide", u("/legal-guide")),
    mdLink("Agent dashboard", u("/agent-dashboard"), "for the people who own agents"),
    ""
  ].join("\n")
}

/** The public pages of the sitemap, in order. */
export const sitemapPaths: ReadonlyArray<string> = [
  "/",
  ...pageNames.map((n) => `/${n}`),
  "/agent-dashboard",
  DOCS_PATH
]

const xmlEscape = (s: string) =>
  s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&apos;"
  )

export const sitemapXml = (base: string): string =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...sitemapPaths.map(
      (p) =>
        `  <url><loc>${xmlEscape(`${base}${p}`)}</loc><changefreq>weekly</changefreq><priority>${p === "/" ? "1.0" : "0.8"}</priority></url>`
    ),
    "</urlset>",
    ""
  ].join("\n")

export const robotsTxt = (base: string, catalog: ReadonlyArray<CatalogRoute>): string => {
  const allowed = [
    ...new Set(
      catalog
        .filter(
          (r) =>
            r.auth === "public" &&
            r.method === "GET" &&
            !r.path.includes(":") &&
            !r.path.startsWith("/api/dashboard") &&
            r.path !== "/"
        )
        .map((r) =>
          r.path.startsWith("/.well-known/") ? "/.well-known/" : r.path.startsWith("/api/trpc/") ? "/api/trpc/" : r.path
        )
    )
  ]
  return [
    `# Crawler rules for ${PLATFORM.name}. AI agents are welcome: read ${base}/llms.txt and ${base}/api/discover.`,
    "User-agent: *",
    "Allow: /",
    ...allowed.map((p) => `Allow: ${p}`),
    "Disallow: /api/dashboard",
    "",
    `Sitemap: ${base}/sitemap.xml`,
    ""
  ].join("\n")
}

const contactEmail = (base: string) => `support@${new URL(base).hostname}`

export const aiPluginManifest = (base: string) => ({
  schema_version: "v1",
  name_for_human: PLATFORM.name,
  name_for_model: snakeCase(PLATFORM.name),
  description_for_human:
    "Build, buy, evaluate and invest in small AI-built software products; trade AI services with other agents.",
  description_for_model:
    "Agent API v1 for the platform's marketplace: browse the catalog, evaluate and acquire projects, create projects and follow their builds, " +
    "invest utility tokens, and use the AI2AIC commerce protocol to buy, negotiate and settle AI services. Send the user's API key as a bearer token. " +
    "Start with GET /api/v1/agent/me to see the key's permissions.",
  auth: { type: "user_http", authorization_type: "bearer" },
  api: { type: "openapi", url: `${base}${OPENAPI_PATH}`, is_user_authenticated: true },
  logo_url: `${base}${LOGO_PATH}`,
  contact_email: contactEmail(base),
  legal_info_url: `${base}/terms`
})

export const mcpToolsDocument = (tools: ReadonlyArray<ApiTool>) => ({ tools: tools.map(toMcpTool) })

export const mcpManifest = (base: string, tools: ReadonlyArray<ApiTool>) => ({
  name: snakeCase(PLATFORM.name).replace(/_/g, "-"),
  title: PLATFORM.name,
  version: PLATFORM.version,
  description: "MCP server of the platform: one tool per Agent API v1 and AI2AIC commerce endpoint.",
  protocolVersion: MCP_PROTOCOL_VERSION,
  endpoint: `${base}${MCP_ENDPOINT_PATH}`,
  transport: { type: "streamable-http", url: `${base}${MCP_ENDPOINT_PATH}` },
  authentication: {
    type: "bearer",
    header: "Authorization",
    description: "An agent API key (Authorization: Bearer <key>); each tool needs the permission its endpoint needs.",
    obtain_url: `${base}/agent-dashboard`
  },
  capabilities: { tools: { ...MCP_CAPABILITIES.tools }, experimental: { ...MCP_CAPABILITIES.experimental } },
  tools_url: `${base}${MCP_TOOLS_PATH}`,
  documentation_url: `${base}/for-ai-agents`,
  tools: tools.map(toMcpTool)
})

/**
 * The A2A 1.0 agent card (a2a.proto AgentCard, proto JSON field names): the JSON-RPC interface at
 * /a2a and the skills it really serves (src/http/descriptors/a2a.ts), with the bearer / X-API-Key schemes.
 */
export const agentCard = (base: string, options: { readonly x402?: boolean } = {}) => ({
  name: PLATFORM.name,
  description: `${PLATFORM.tagline}. An A2A agent for the AI2AIC commerce protocol: browse AI services, buy, negotiate and check transactions with an agent API key. Plain text is answered too: say "list services", "price of svc_…", "buy svc_… tier …" or "status of tx_…".`,
  supportedInterfaces: [
    { url: `${base}${A2A_ENDPOINT_PATH}`, protocolBinding: "JSONRPC", protocolVersion: A2A_PROTOCOL_VERSION }
  ],
  provider: { organization: PLATFORM.organization, url: base },
  version: PLATFORM.version,
  documentationUrl: `${base}/for-ai-agents`,
  capabilities: {
    streaming: true,
    pushNotifications: true,
    extendedAgentCard: true,
    // The a2a-x402 extension, when x402 is configured (docs/a2a.md "Paying with x402"): not required,
    // since a keyed agent may pay with credits; a buy without a key is paid with x402.
    ...(options.x402
      ? {
          extensions: [
            {
              uri: A2A_X402_EXTENSION,
              description:
                "Supports payments using the x402 protocol for on-chain settlement: the buy skill answers a task in TASK_STATE_INPUT_REQUIRED with x402.payment.required; a buy paid this way needs no API key.",
              required: false
            }
          ]
        }
      : {})
  },
  securitySchemes: {
    bearer: {
      httpAuthSecurityScheme: {
        scheme: "Bearer",
        bearerFormat: "API key",
        description: `Agent API key created at ${base}/agent-dashboard.`
      }
    },
    apiKey: {
      apiKeySecurityScheme: { location: "header", name: "X-API-Key", description: "The same API key, in X-API-Key." }
    }
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }],
  defaultInputModes: ["application/json", "text/plain"],
  defaultOutputModes: ["application/json", "text/plain"],
  skills: a2aSkills.map((s) => ({
    id: s.id,
    name: s.name,
    description: `${s.description} Send a message with a data part ${JSON.stringify({ skill: s.id })} plus the arguments; ${s.reply ?? "the reply is a message with the result as a data part."}`,
    tags: [...s.tags],
    examples: [JSON.stringify(s.example)],
    inputModes: ["application/json", "text/plain"],
    outputModes: ["application/json", "text/plain"]
  })),
  iconUrl: `${base}${LOGO_PATH}`
})

export const logoSvg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" role="img" aria-label="${PLATFORM.name}"><rect width="64" height="64" rx="14" fill="#0a58a8"/><path d="M18 44 32 18l14 26h-7l-7-13-7 13z" fill="#fff"/></svg>\n`
