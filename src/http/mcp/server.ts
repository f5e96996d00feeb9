// The MCP server (stock @modelcontextprotocol/sdk, Streamable HTTP, stateless): lists the tools
// derived from the HttpApi and runs each tool call as a request to the tool's own REST route.
import { PLATFORM } from "../../services/discovery/document.js"
import { type ApiTool, toMcpTool } from "../descriptors/tools.js"
import { isProblem, toRouteRequest } from "../descriptors/toolRequest.js"
import { argumentError, toToolResult } from "./call.js"
import { MCP_CAPABILITIES } from "../descriptors/mcp.js"
import {
  credentialFromMeta,
  paymentRefusal,
  receiptMeta,
  x402PaymentFromMeta,
  x402Required,
  x402RequiredResult,
  x402SettleMeta
} from "./payment.js"

/**
 * The SDK, loaded on the first MCP request (it and zod cost memory in a server that may never
 * serve MCP; docs/performance.md). src/http/mcp/routes.ts loads it once and passes it in.
 */
export const loadMcpSdk = async () => {
  const [server, transport, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return {
    Server: server.Server,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ErrorCode: types.ErrorCode
  }
}
export type McpSdk = Awaited<ReturnType<typeof loadMcpSdk>>

/** Runs one HTTP request through the application's router (the same one that serves REST). */
export type Dispatch = (request: Request) => Promise<Response>

/** What every tool call of one MCP request carries to its route: the caller's credentials. */
export interface CallerHeaders {
  readonly authorization: string
  readonly requestId: string
  readonly acceptLanguage?: string
  /**
   * How a payment-required answer is written: MPP's -32042 error (the default), or x402's tool
   * result (`/mcp?payment=x402`, for x402 MCP clients, which read the result, not the error).
   */
  readonly paymentTransport?: "mpp" | "x402"
}

/** Origin of the in-process requests (never resolved: the router only reads the path). */
const INTERNAL_ORIGIN = "http://mcp.internal"
const ID_CHARS = /[^A-Za-z0-9._-]/g
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

const INSTRUCTIONS =
  "Tools of the Agent API v1 and the AI2AIC commerce protocol. Each tool is one REST endpoint (see the tool's _meta: " +
  "method, path, permission) and runs with the caller's API key, its permissions and rate limit. Start with `me` to see " +
  "the key's permissions. A failed call returns isError with the API's typed error (type, message, status)."

/** A fresh server for one HTTP request (stateless mode: nothing survives the request). */
export const makeMcpServer = (
  sdk: McpSdk,
  tools: ReadonlyArray<ApiTool>,
  dispatch: Dispatch,
  caller: CallerHeaders
) => {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode } = sdk
  const byName = new Map(tools.map((t) => [t.name, t]))
  const listed = tools.map(toMcpTool)
  // The low-level Server, not McpServer: McpServer registers its own tool handlers and overwrites
  // the declared capability with `listChanged: true`; these handlers also take the JSON Schemas as
  // they are (McpServer.registerTool wants zod).
  const server = new Server(
    { name: "agent-commerce", title: PLATFORM.name, version: PLATFORM.version },
    {
      capabilities: { tools: { ...MCP_CAPABILITIES.tools }, experimental: { ...MCP_CAPABILITIES.experimental } },
      instructions: INSTRUCTIONS
    }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed as unknown as Array<never> }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name)
    // A plain Error with a code, not McpError: McpError's message already carries "MCP error -32602: ",
    // the SDK sends that message as the JSON-RPC error text, and the client's McpError prefixes it
    // again ("MCP error -32602: MCP error -32602: …"). Sent bare, the client shows the prefix once.
    if (!tool) throw Object.assign(new Error(`unknown tool: ${request.params.name}`), { code: ErrorCode.InvalidParams })
    const requestId = `${caller.requestId}.${String(extra.requestId).replace(ID_CHARS, "").slice(0, 24)}`
    const route = toRouteRequest(tool, request.params.arguments ?? {})
    if (isProblem(route)) return argumentError(route, requestId)
    const headers: Record<string, string> = {
      authorization: caller.authorization,
      accept: "application/json",
      "x-request-id": requestId.slice(0, 128)
    }
    if (caller.acceptLanguage) headers["accept-language"] = caller.acceptLanguage
    // The call's own key or none (never the envelope's); a malformed one is refused rather than
    // dropped, so a client never believes a purchase is keyed when it is not.
    const idempotencyKey = request.params._meta?.idempotencyKey
    if (idempotencyKey !== undefined) {
      if (typeof idempotencyKey !== "string" || !IDEMPOTENCY_KEY.test(idempotencyKey)) {
        return argumentError(
          { message: "_meta.idempotencyKey: must be 1 to 255 visible ASCII characters", field: "_meta.idempotencyKey" },
          requestId
        )
      }
      headers["idempotency-key"] = idempotencyKey
    }
    if (route.body !== undefined) {
      headers["content-type"] = "application/json"
      headers["content-length"] = String(Buffer.byteLength(route.body))
    }
    // A Payment credential in _meta (draft-payment-transport-mcp) goes to the route in the HTTP
    // form it verifies; Authorization keeps the key, so it travels in Payment-Authorization.
    const credential = credentialFromMeta(request.params._meta)
    if (credential !== undefined) headers["payment-authorization"] = credential
    // An x402 payment in _meta (x402's MCP transport) goes to the route as its PAYMENT-SIGNATURE.
    const x402Payment = x402PaymentFromMeta(request.params._meta)
    if (x402Payment !== undefined) headers["payment-signature"] = x402Payment
    const response = await dispatch(
      new Request(`${INTERNAL_ORIGIN}${route.path}`, {
        method: route.method,
        headers,
        body: route.body,
        signal: extra.signal
      })
    )
    const text = await response.text()
    // x402's payment required (or its payment refused) is x402's tool result for an x402 caller.
    const required = x402Required(response.status, response.headers)
    if (required !== undefined && (x402Payment !== undefined || caller.paymentTransport === "x402"))
      return x402RequiredResult(required, response.headers)
    // A payment refusal is a JSON-RPC error (-32042, or -32043 when a credential was refused) with
    // the fresh challenge, so payment-aware clients can pay and call again; when the route offers
    // x402 too, its PaymentRequired rides along in `data.x402`.
    const refusal =
      x402Payment === undefined
        ? paymentRefusal(response.status, response.headers, text, credential !== undefined)
        : undefined
    if (refusal) {
      const data = required === undefined ? refusal.data : { ...refusal.data, x402: required }
      throw Object.assign(new Error(refusal.message), { code: refusal.code, data })
    }
    const result = toToolResult(response.status, text, response.headers.get("retry-after"))
    const meta = { ...receiptMeta(response.headers), ...x402SettleMeta(response.headers) }
    return Object.keys(meta).length === 0 ? result : { ...result, _meta: meta }
  })
  return server
}

/** Serves one Streamable HTTP request (POST with JSON-RPC) with a fresh server and transport. */
export const serveMcpRequest = async (
  sdk: McpSdk,
  request: Request,
  tools: ReadonlyArray<ApiTool>,
  dispatch: Dispatch,
  caller: CallerHeaders
) => {
  const server = makeMcpServer(sdk, tools, dispatch, caller)
  const transport = new sdk.Transport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  try {
    await server.connect(transport)
    return await transport.handleRequest(request)
  } finally {
    await server.close()
  }
}
