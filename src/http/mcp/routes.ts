// The /mcp route: bearer-key check, then the MCP server over the Streamable HTTP transport, with tool
// calls dispatched in-process through this same router (auth, permissions, limits, validation as REST).
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Context, Effect } from "effect"
import { Unauthorized } from "../../schema/platform/errors.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../requestIdempotency.js"
import { Keys } from "../../services/keys/Keys.js"
import { errorResponse } from "../errors.js"
import { currentRequestId } from "../requestId.js"
import { agentTools } from "../descriptors/tools.js"
import { MCP_ENDPOINT_PATH, mcpRoutes } from "../descriptors/mcp.js"
import { loadMcpSdk, serveMcpRequest } from "./server.js"

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i
/** Headers the in-process Request must not copy (they describe the outer connection). */
const HOP_BY_HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade"])

const challenge = (description: string) => ({
  "www-authenticate": `Bearer realm="agent-api", error="invalid_token", error_description="${description.replace(/"/g, "'")}"`
})

/**
 * Only POST carries messages in stateless mode: there is no session to stream to (GET) or end
 * (DELETE), so both answer 405 as the Streamable HTTP transport allows.
 */
const methodNotAllowed = HttpServerResponse.jsonUnsafe(
  {
    jsonrpc: "2.0",
    error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST" },
    id: null
  },
  { status: 405, headers: { allow: "POST" } }
)

export const McpRoutesLive = HttpRouter.use(
  Effect.fnUntraced(function* (router) {
    // Loaded on the first MCP request, once (see loadMcpSdk).
    const sdk = yield* Effect.cached(Effect.promise(loadMcpSdk))
    const post = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = yield* currentRequestId
      const keys = yield* Keys
      // The envelope (initialize, tools/list) needs a valid key but spends no rate limit; each
      // tools/call spends one request on its own route, exactly as the REST call would.
      const authorization = request.headers.authorization ?? ""
      const match = BEARER.exec(authorization)
      if (!match) {
        return errorResponse(
          new Unauthorized({ message: "missing API key: send Authorization: Bearer <key>" }),
          requestId,
          challenge("missing bearer token")
        )
      }
      const denied = yield* keys.authenticate(match[1]).pipe(
        Effect.as(undefined),
        Effect.catch((e) => Effect.succeed(e))
      )
      if (denied)
        return errorResponse(denied, requestId, denied._tag === "Unauthorized" ? challenge(denied.message) : {})

      const body = yield* request.text
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) if (!HOP_BY_HOP.has(name)) headers.set(name, value)
      // The in-process request runs through this same router (global middleware, auth, limits),
      // with this request's services (4.x: toWebHandler replaces toWebHandlerRuntime).
      // Each tool call carries its own Idempotency-Key (`_meta.idempotencyKey`) or none: nothing of
      // the envelope's request may stand in for it.
      const context = Context.add(
        Context.add(yield* Effect.context<never>(), currentIdempotencyKey, undefined),
        currentIdempotencyScope,
        ""
      )
      const handler = HttpEffect.toWebHandler(router.asHttpEffect())
      const dispatch = (inner: Request) => handler(inner, context)
      const caller = {
        authorization,
        requestId,
        acceptLanguage: request.headers["accept-language"],
        paymentTransport: /[?&]payment=x402(?:&|$)/.test(request.url) ? ("x402" as const) : ("mpp" as const)
      }
      const loaded = yield* sdk
      const response = yield* Effect.promise((signal) =>
        serveMcpRequest(
          loaded,
          new Request(`http://mcp.internal${request.url}`, { method: "POST", headers, body, signal }),
          agentTools,
          dispatch,
          caller
        ).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }))
      )
      const out: Record<string, string> = {}
      response.headers.forEach((value, name) => {
        if (name !== "content-type" && name !== "content-length") out[name] = value
      })
      return HttpServerResponse.text(response.text, {
        status: response.status,
        contentType: response.headers.get("content-type") ?? "application/json",
        headers: out
      })
    })
    // The listed routes (POST /mcp) are the ones registered here, so /api/discover cannot drift.
    for (const route of mcpRoutes) yield* router.add(route.method as "POST", route.path, post)
    yield* router.add("GET", MCP_ENDPOINT_PATH, methodNotAllowed)
    yield* router.add("DELETE", MCP_ENDPOINT_PATH, methodNotAllowed)
  })
)
