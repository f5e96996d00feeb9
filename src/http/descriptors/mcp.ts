// The MCP endpoint's address and its one usable route, shared by the router (src/http/mcp/routes.ts
// registers exactly these), the idempotency middleware and the route catalogue of /api/discover,
// llms.txt and the manifests.
import type { HttpMethod } from "effect/http"
import { type CatalogRoute, MCP_ENDPOINT_PATH } from "../../services/discovery/document.js"

/** The MCP server's address (Streamable HTTP). */
export { MCP_ENDPOINT_PATH }

/**
 * What initialize announces, and what /.well-known/mcp.json publishes as `capabilities` (one object,
 * so they cannot disagree). The tool list is fixed by the HttpApi: `listChanged` is false. Paid
 * tools take Payment credentials (draft-payment-transport-mcp): the methods and intents accepted.
 */
export const MCP_CAPABILITIES = {
  tools: { listChanged: false },
  experimental: { payment: { methods: { credits: { intents: ["charge"] } } } }
} as const

/** The MCP protocol revision the stock SDK negotiates (its LATEST_PROTOCOL_VERSION); older ones are still accepted. */
export const MCP_PROTOCOL_VERSION = "2025-11-25"

/** A catalogue line that is also a registrable route. */
export interface McpRoute extends CatalogRoute {
  readonly method: Exclude<HttpMethod.HttpMethod, "HEAD">
  readonly path: `/${string}`
}

/**
 * The routes of the MCP endpoint a caller can use. Only POST carries JSON-RPC messages (the server
 * is stateless; GET and DELETE answer 405 and are not listed). Any valid key may open the envelope;
 * each tool needs the permission of its own REST route.
 */
export const mcpRoutes: ReadonlyArray<McpRoute> = [
  {
    method: "POST",
    path: MCP_ENDPOINT_PATH,
    description:
      "MCP server (Streamable HTTP, JSON-RPC 2.0): every Agent API v1 and AI2AIC endpoint as a tool; " +
      "any valid key opens it, each tool needs its endpoint's permission and spends one request of the key's rate limit",
    auth: "bearer",
    permission: null
  }
]
