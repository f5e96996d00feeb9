// The route catalogue the agent-facing files list: the HttpApi routes, the procedures, the MCP and
// A2A routes, and the site's own files and pages.
import { AGENT_API_PREFIX } from "../../../schema/platform/routes.js"
import { type CatalogRoute } from "../../../services/discovery/document.js"
import { Api } from "../../api.js"
import { mcpRoutes } from "../../descriptors/mcp.js"
import { a2aRoutes } from "../../descriptors/a2a.js"
import { routeTable } from "../../routeTable.js"
import { procedures } from "../../procedures.js"
import { type PageName, pageNames } from "../pages.js"

export const OPENAPI_PATH = `${AGENT_API_PREFIX}/openapi.json` as const
export const MCP_TOOLS_PATH = `${AGENT_API_PREFIX}/mcp-tools.json` as const
export const DOCS_PATH = "/docs"
export const LOGO_PATH = "/assets/logo.svg"

const pageDescriptions: Readonly<Record<PageName, string>> = {
  "for-ai-agents":
    "How AI agents use the platform: keys, permissions, limits, the commerce protocol (English, Portuguese)",
  integrations: "Active, available and coming-soon integrations",
  terms: "Terms of use",
  whitepaper: "Whitepaper: marketplace, plans, token, governance, risks",
  "legal-guide": "Legal guide: token classification, jurisdictions, data protection"
}

const publicGet = (path: string, description: string): CatalogRoute => ({
  method: "GET",
  path,
  description,
  auth: "public",
  permission: null
})

/** Raw (non-HttpApi) public addresses. */
export const siteRoutes: ReadonlyArray<CatalogRoute> = [
  publicGet("/api/discover", "Discovery document: platform, capabilities, endpoints, agent and commerce entry points"),
  publicGet("/llms.txt", "Plain-text platform description for language models (llmstxt.org)"),
  publicGet("/robots.txt", "Crawler permissions"),
  publicGet("/sitemap.xml", "Sitemap of the public pages"),
  publicGet("/.well-known/ai-plugin.json", "AI plugin manifest (points to the OpenAPI document)"),
  publicGet("/.well-known/mcp.json", "MCP manifest: the MCP endpoint and its tools"),
  publicGet("/.well-known/agent-card.json", "A2A agent card"),
  publicGet(OPENAPI_PATH, "OpenAPI document of the REST API"),
  publicGet(MCP_TOOLS_PATH, "MCP tool list derived from the agent and commerce endpoints"),
  publicGet(DOCS_PATH, "API reference for people"),
  publicGet("/", "Home page"),
  ...pageNames.map((name) => publicGet(`/${name}`, pageDescriptions[name])),
  publicGet("/agent-dashboard", "Agent dashboard: sign in, create agents and API keys")
]

/** Every route of the HttpApi, as the discovery document lists it. */
export const apiRoutes = (api: typeof Api): ReadonlyArray<CatalogRoute> =>
  routeTable(api).map((r) => ({
    method: r.method,
    path: r.path,
    description: r.summary,
    auth: r.auth === "key" ? "bearer" : r.auth,
    permission: r.permission
  }))

/** Every procedure of the procedure table (`/api/trpc/<name>`). */
export const procedureRoutes = (table: typeof procedures): ReadonlyArray<CatalogRoute> =>
  Object.entries(table).map(([name, p]) => ({
    method: p.type === "query" ? "GET" : "POST",
    path: `/api/trpc/${name}`,
    description: p.description,
    auth: p.access._tag === "public" ? "public" : "bearer_or_session",
    permission: p.access._tag === "authenticated" ? (p.access.permission ?? null) : null
  }))

/**
 * What /api/discover lists: generated, so a route added anywhere appears without an edit here. The
 * MCP lines are the routes src/http/mcp/routes.ts registers. Not listed: the fake payment processor's
 * pages (/checkout/fake/…, present only with PAYMENTS=fake; the spec puts the processor's checkout
 * outside the service, and a caller gets its address as `checkoutUrl`), the checkout return pages
 * (browser redirects), and static assets.
 */
export const discoveryCatalog: ReadonlyArray<CatalogRoute> = [
  ...siteRoutes,
  ...apiRoutes(Api),
  ...procedureRoutes(procedures),
  ...mcpRoutes,
  ...a2aRoutes
]
