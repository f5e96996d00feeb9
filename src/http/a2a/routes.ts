// The A2A 1.0 JSON-RPC endpoint (POST /a2a): SendMessage runs one skill of the agent card as its
// Agent API route, in-process through this same router (auth, permissions, limits, validation,
// idempotency as REST and MCP), and answers with an agent Message carrying the route's JSON.
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Context, Effect } from "effect"
import { Unauthorized } from "../../schema/platform/errors.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../requestIdempotency.js"
import { Keys } from "../../services/keys/Keys.js"
import { errorResponse } from "../errors.js"
import { presentedKey } from "../middleware/authLive.js"
import { currentRequestId } from "../requestId.js"
import { isProblem, toRouteRequest } from "../mcp/call.js"
import { agentTools } from "../site/agentFiles/catalog.js"
import { A2A_ENDPOINT_PATH, A2A_PROTOCOL_VERSION, resolveSkills } from "./skills.js"

/** A2A 1.0 JSON-RPC error codes (a2a.proto / the specification's error table). */
export const A2aErrors = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  unsupportedOperation: -32004,
  extendedCardNotConfigured: -32007,
  versionNotSupported: -32009
} as const

type Json = Record<string, unknown>
const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const rpcError = (id: unknown, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0",
  id: id ?? null,
  error: { code, message, ...(data !== undefined ? { data } : {}) }
})
const rpcResult = (id: unknown, result: unknown) => ({ jsonrpc: "2.0", id, result })

const INTERNAL_ORIGIN = "http://a2a.internal"
const skills = resolveSkills(agentTools)
const skillIds = skills.map((s) => s.skill.id).join(", ")

/**
 * The skill and its arguments a user message asks for: a data part `{skill, …arguments}`, or
 * `message.metadata.skill` with the arguments in a data part. Otherwise a reason.
 */
export const skillCall = (
  message: unknown
): { readonly skill: string; readonly args: Json } | { readonly problem: string } => {
  if (!isRecord(message)) return { problem: "params.message is required" }
  const parts = Array.isArray(message.parts) ? message.parts : []
  const data = parts.find((p): p is { data: Json } => isRecord(p) && isRecord(p.data))?.data
  const fromMeta =
    isRecord(message.metadata) && typeof message.metadata.skill === "string" ? message.metadata.skill : undefined
  const named = data && typeof data.skill === "string" ? data.skill : fromMeta
  if (named === undefined)
    return { problem: `name the skill: a data part {"skill": "<id>", …arguments} (skills: ${skillIds})` }
  const { skill: _skill, ...args } = data ?? {}
  void _skill
  return { skill: named, args }
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/**
 * The message's own Idempotency-Key: `message.metadata.idempotencyKey` (or, as first documented,
 * the request's `metadata.idempotencyKey`; both given must agree). None when absent; a malformed
 * one is refused rather than dropped, so a client never believes a purchase is keyed when it is not.
 */
export const messageIdempotencyKey = (
  params: Json
): { readonly key: string | undefined } | { readonly problem: string; readonly field: string } => {
  const message = isRecord(params.message) ? params.message : {}
  const found = [
    ["message.metadata.idempotencyKey", isRecord(message.metadata) ? message.metadata.idempotencyKey : undefined],
    ["metadata.idempotencyKey", isRecord(params.metadata) ? params.metadata.idempotencyKey : undefined]
  ].filter((entry): entry is [string, unknown] => entry[1] !== undefined)
  for (const [field, value] of found) {
    if (typeof value !== "string" || !IDEMPOTENCY_KEY.test(value))
      return { problem: `${field}: must be 1 to 255 visible ASCII characters`, field }
  }
  if (found.length === 2 && found[0][1] !== found[1][1]) {
    return {
      problem: "message.metadata.idempotencyKey and metadata.idempotencyKey differ: send one",
      field: "message.metadata.idempotencyKey"
    }
  }
  return { key: found[0]?.[1] as string | undefined }
}

const retryAfterOf = (headers: Headers): { readonly retryAfterSeconds?: number } => {
  const value = headers.get("retry-after")
  return value !== null && /^\d+$/.test(value) ? { retryAfterSeconds: Number(value) } : {}
}

/** Runs JSON-RPC request bodies; `dispatch` runs one REST request through the router. */
export const handleA2a = async (
  body: unknown,
  dispatch: (request: Request) => Promise<Response>,
  credentials: Record<string, string>,
  requestId: string
): Promise<Json> => {
  if (!isRecord(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string")
    return rpcError(isRecord(body) ? body.id : null, A2aErrors.invalidRequest, "not a JSON-RPC 2.0 request")
  const { id, method } = body
  const params = isRecord(body.params) ? body.params : {}
  switch (method) {
    case "SendMessage": {
      const call = skillCall(params.message)
      if ("problem" in call) return rpcError(id, A2aErrors.invalidParams, call.problem)
      const found = skills.find((s) => s.skill.id === call.skill)
      if (!found) return rpcError(id, A2aErrors.invalidParams, `unknown skill ${call.skill} (skills: ${skillIds})`)
      const route = toRouteRequest(found.tool, call.args)
      if (isProblem(route)) return rpcError(id, A2aErrors.invalidParams, route.message, { field: route.field })
      const headers: Record<string, string> = {
        ...credentials,
        accept: "application/json",
        "x-request-id": `${requestId}.a2a`.slice(0, 128)
      }
      const key = messageIdempotencyKey(params)
      if ("problem" in key) return rpcError(id, A2aErrors.invalidParams, key.problem, { field: key.field })
      if (key.key !== undefined) headers["idempotency-key"] = key.key
      if (route.body !== undefined) {
        headers["content-type"] = "application/json"
        headers["content-length"] = String(Buffer.byteLength(route.body))
      }
      const response = await dispatch(
        new Request(`${INTERNAL_ORIGIN}${route.path}`, { method: route.method, headers, body: route.body })
      )
      const text = await response.text()
      let json: unknown = undefined
      try {
        json = text === "" ? {} : JSON.parse(text)
      } catch {
        json = { text }
      }
      const ok = response.status < 400
      const message = params.message as Json
      const summary = ok
        ? `${found.skill.name}: done (${response.status})`
        : `${found.skill.name}: refused (${response.status}) ${isRecord(json) && typeof json.message === "string" ? json.message : ""}`.trim()
      // The skill's answer is one agent message (A2A allows a Message for a request that needs no
      // task): the route's JSON as a data part, a one-line summary as text.
      return rpcResult(id, {
        message: {
          messageId: `${requestId}.reply`,
          ...(typeof message.contextId === "string" && message.contextId !== ""
            ? { contextId: message.contextId }
            : {}),
          role: "ROLE_AGENT",
          parts: [
            { text: summary, mediaType: "text/plain" },
            { data: json, mediaType: "application/json" }
          ],
          // A route's Retry-After (a 503, a 429) in seconds: the message has no headers to carry it.
          metadata: { skill: found.skill.id, httpStatus: response.status, ok, ...retryAfterOf(response.headers) }
        }
      })
    }
    case "GetTask":
    case "CancelTask":
    case "SubscribeToTask":
      // Every skill answers at once with a Message; no task is ever created.
      return rpcError(
        id,
        A2aErrors.taskNotFound,
        "no such task: this agent answers each skill with a message and keeps no tasks"
      )
    case "ListTasks":
      return rpcResult(id, { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 })
    case "SendStreamingMessage":
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
    case "ListTaskPushNotificationConfigs":
    case "DeleteTaskPushNotificationConfig":
      return rpcError(
        id,
        A2aErrors.unsupportedOperation,
        `${method} is not supported (capabilities: streaming false, pushNotifications false)`
      )
    case "GetExtendedAgentCard":
      return rpcError(id, A2aErrors.extendedCardNotConfigured, "no extended agent card")
    default:
      return rpcError(id, A2aErrors.methodNotFound, `unknown method ${method}`)
  }
}

export const A2aRoutesLive = HttpRouter.use(
  Effect.fnUntraced(function* (router) {
    const post = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = yield* currentRequestId
      const keys = yield* Keys
      // A2A-Version (absent: 1.0 assumed); another major version is refused as the spec asks.
      const version = request.headers["a2a-version"]
      if (version !== undefined && version.trim().split(".")[0] !== A2A_PROTOCOL_VERSION.split(".")[0]) {
        return HttpServerResponse.jsonUnsafe(
          rpcError(
            null,
            A2aErrors.versionNotSupported,
            `A2A-Version ${version} is not supported; this agent speaks ${A2A_PROTOCOL_VERSION}`
          )
        )
      }
      const key = presentedKey(request.headers.authorization, request.headers["x-api-key"])
      const challenge = { "www-authenticate": `Bearer realm="agent-api", ApiKey realm="agent-api", header="X-API-Key"` }
      if (key === undefined)
        return errorResponse(
          new Unauthorized({ message: "missing API key: send Authorization: Bearer <key> (or X-API-Key)" }),
          requestId,
          challenge
        )
      const denied = yield* keys.authenticate(key).pipe(
        Effect.as(undefined),
        Effect.catch((e) => Effect.succeed(e))
      )
      if (denied) return errorResponse(denied, requestId, denied._tag === "Unauthorized" ? challenge : {})
      const text = yield* request.text
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return HttpServerResponse.jsonUnsafe(rpcError(null, A2aErrors.parse, "request body is not valid JSON"))
      }
      // Each message carries its own Idempotency-Key (`message.metadata.idempotencyKey`) or none:
      // nothing of the envelope's request may stand in for it.
      const context = Context.add(
        Context.add(yield* Effect.context<never>(), currentIdempotencyKey, undefined),
        currentIdempotencyScope,
        ""
      )
      const handler = HttpEffect.toWebHandler(router.asHttpEffect())
      const dispatch = (inner: Request) => handler(inner, context)
      // Each skill runs with the caller's key, in whichever header it came.
      const credentials = { authorization: `Bearer ${key}` }
      const answer = yield* Effect.promise(() => handleA2a(body, dispatch, credentials, requestId))
      return HttpServerResponse.jsonUnsafe(answer, { headers: { "a2a-version": A2A_PROTOCOL_VERSION } })
    })
    yield* router.add("POST", A2A_ENDPOINT_PATH, post)
  })
)
