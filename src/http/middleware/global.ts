// Global HTTP middleware: request id, body-size limit, JSON 404, one error body shape, logging.
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { Cause, Clock, Context, Effect, Option, Result } from "effect"
import type { unhandled } from "effect/Types"
import { createHash, randomBytes } from "node:crypto"
import { Conflict, Forbidden, IdempotencyKeyReused, InvalidInput, LengthRequired, MethodNotAllowed, NotFound, PayloadTooLarge, UnsupportedMediaType } from "../../schema/platform/errors.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { currentIdempotencyKey, currentIdempotencyScope, Idempotency, type StoredResponse } from "../../services/idempotency/Idempotency.js"
import { encodeError, errorResponse, firstSchemaIssue, internalErrorBody, toErrorBody, withRetryAfter } from "../errors.js"
import { KEY_PREFIX } from "../../schema/keys/keys.js"
import { SESSION_COOKIE } from "./auth.js"
import { presentedKey } from "./authLive.js"
import { isPaymentProblemSource, toPaymentProblem } from "../paymentProblem.js"
import { currentRequestNote, logRequest, newRequestNote } from "../requestLog.js"
import { Api } from "../api.js"
import { routeTable } from "../routeTable.js"
import { currentRequestId } from "../requestId.js"
import { canonicalPath, guardPath, queryOf, routedPath } from "../routePath.js"
import { MCP_ENDPOINT_PATH } from "../mcp/endpoint.js"
import { A2A_ENDPOINT_PATH } from "../a2a/skills.js"


const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const decoder = new TextDecoder()

/**
 * Rewrites a JSON error response from the HttpApi into the one error body (adds type, field,
 * requestId); a payment 402 (or method-unsupported 400) into RFC 9457 problem details.
 */
const normaliseErrorBody = (response: HttpServerResponse.HttpServerResponse, requestId: string, path: string) => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  if (!response.body.contentType.startsWith("application/json")) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(response.body.body))
  } catch {
    return response
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return response
  const record = parsed as Record<string, unknown>
  if (isPaymentProblemSource(record)) {
    const problem = toPaymentProblem(record, requestId, path)
    // The problem's own status: 400 for method-unsupported (the error schema declares 402).
    return HttpServerResponse.text(JSON.stringify(problem), {
      status: typeof problem.status === "number" ? problem.status : response.status,
      contentType: "application/problem+json",
      headers: { ...response.headers, "cache-control": "no-store" }
    })
  }
  if (record.requestId === requestId && typeof record.type === "string") return response
  if (typeof record._tag !== "string") return response
  return HttpServerResponse.jsonUnsafe(toErrorBody(record, requestId), {
    status: response.status,
    headers: response.headers
  })
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** Deepest JSON nesting accepted. Deeper documents overflow the stack of schema error formatting. */
export const MAX_JSON_DEPTH = 64

/**
 * One linear pass over a JSON text (no recursion): the deepest bracket nesting outside strings;
 * whether a string holds a NUL (`\u0000`), which PostgreSQL text cannot store; and whether it holds
 * an unpaired surrogate escape (`\udc00` alone), which PostgreSQL jsonb refuses and no UTF-8 text
 * can carry.
 */
export const scanJson = (text: string): { readonly depth: number; readonly nul: boolean; readonly loneSurrogate: boolean } => {
  let depth = 0
  let max = 0
  let nul = false
  let loneSurrogate = false
  let inString = false
  const hex = (at: number) => (/^[0-9a-fA-F]{4}$/.test(text.slice(at, at + 4)) ? parseInt(text.slice(at, at + 4), 16) : -1)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) {
        if (text.charCodeAt(i + 1) === 117) {
          const unit = hex(i + 2)
          if (unit === 0) nul = true
          else if (unit >= 0xd800 && unit <= 0xdbff) {
            const next = text.startsWith("\\u", i + 6) ? hex(i + 8) : -1
            if (next >= 0xdc00 && next <= 0xdfff) i += 6
            else loneSurrogate = true
          } else if (unit >= 0xdc00 && unit <= 0xdfff) loneSurrogate = true
        }
        i++
      } else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) max = Math.max(max, ++depth)
    else if (c === 125 || c === 93) depth--
  }
  return { depth: max, nul, loneSurrogate }
}
const SURROGATE_MESSAGE = "unpaired UTF-16 surrogate escapes (e.g. \\udc00 alone) are not accepted in any input"
const NUL_MESSAGE = "NUL characters (\\u0000, %00) are not accepted in any input"

/** Refuses JSON bodies nested deeper than MAX_JSON_DEPTH, or holding NUL, before any decoder sees them. */
const withJsonGuard = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  inner: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  MUTATING.has(request.method) && isJsonMediaType(request.headers["content-type"])
    ? Effect.flatMap(request.text, (text) => {
        const scan = scanJson(text)
        if (scan.depth > MAX_JSON_DEPTH) {
          return Effect.succeed(errorResponse(new InvalidInput({ message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` }), requestId))
        }
        if (scan.nul) return Effect.succeed(errorResponse(new InvalidInput({ message: NUL_MESSAGE }), requestId))
        if (scan.loneSurrogate) return Effect.succeed(errorResponse(new InvalidInput({ message: SURROGATE_MESSAGE }), requestId))
        return inner
      })
    : inner

/**
 * The media type of a Content-Type header: lower-cased `type/subtype` without parameters, or ""
 * when absent or malformed (RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS parameter )`).
 */
export const mediaTypeOf = (header: string | undefined): string => {
  if (header === undefined) return ""
  const essence = header.split(";", 1)[0].trim().toLowerCase()
  return /^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+$/.test(essence) ? essence : ""
}

/**
 * Only `application/json` is JSON here (any parameters, e.g. a charset). `+json` types
 * (vnd.api+json, merge-patch+json, problem+json) carry other semantics this API does not
 * implement, so they are refused with 415 rather than read as plain JSON; a header that merely
 * contains "json" (`application/jsonx`, `multipart/form-data; boundary=json`) is not JSON at all.
 */
export const isJsonMediaType = (header: string | undefined): boolean => mediaTypeOf(header) === "application/json"

/** The origin (scheme://host[:port]) of a URL, or undefined. */
const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * A write that carries the session cookie and no bearer key, and is not the dashboard's own call:
 * not `application/json`, or an `Origin` other than the service's (BASE_URL's, or the Host the
 * request was sent to), or `Sec-Fetch-Site` other than same-origin / none. Clients that send
 * neither header (curl, the CLI, tests) are judged by the media type alone; browsers always send
 * Origin on a cross-site POST.
 */
export const crossSiteCookieWrite = (request: HttpServerRequest.HttpServerRequest, baseUrl: string): boolean => {
  if (request.headers.authorization !== undefined || request.cookies[SESSION_COOKIE] === undefined) return false
  if (!isJsonMediaType(request.headers["content-type"])) return true
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin" && site !== "none") return true
  const origin = request.headers.origin
  if (origin === undefined) return false
  const allowed = new Set([originOf(baseUrl)])
  const host = request.headers.host
  if (host) for (const scheme of ["http", "https"]) allowed.add(`${scheme}://${host}`)
  return !allowed.has(originOf(origin) ?? origin)
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
/**
 * JSON-RPC envelopes whose calls carry their own keys (an MCP tool call's `_meta.idempotencyKey`,
 * an A2A message's `metadata.idempotencyKey`): a header key there would name every message of a
 * connection, so it is not applied, and the calls made in process never inherit it.
 */
const ENVELOPE_PATHS: ReadonlySet<string> = new Set([MCP_ENDPOINT_PATH, A2A_ENDPOINT_PATH])
/**
 * A whole one-time secret — an API key (not just its display prefix) or a webhook signing secret:
 * a response holding one is never persisted.
 */
const API_KEY_SECRET = new RegExp(`${KEY_PREFIX}[A-Za-z0-9_-]{40,}|whsec_[A-Za-z0-9+/=_-]{24,}`)
/** Stored instead of a response that held a new key's secret: retries learn the first request ran, and nothing is kept in plaintext. */
const secretWithheld = (requestId: string): StoredResponse => ({
  status: 409,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(
    toErrorBody(
      encodeError(
        new Conflict({
          message:
            "the first request with this Idempotency-Key succeeded; its response held a one-time secret (an API key or a webhook signing " +
            "secret), which is never stored. List your keys (GET /api/dashboard/keys) or rotate the webhook secret if it was lost."
        })
      ),
      requestId
    )
  )
})
/**
 * Outcomes that say "not processed, try again": never replayed. A 402 is one of them: the client
 * that pays and retries with the same key must get the paid answer, not the challenge again.
 */
const replayable = (status: number) => status < 500 && status !== 429 && status !== 401 && status !== 402 && status !== 413
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")
/** Sorts object keys at every level, so the same JSON written in another key order is the same request. */
const sortKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortKeys)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]))
      : value
/** The body as compared for Idempotency-Key reuse: canonical JSON when it parses, else the bytes. */
const canonicalBody = (text: string): string => {
  if (text === "") return text
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)))
  } catch {
    return text
  }
}
const WAIT_STEP_MS = 50
const WAIT_STEPS = 200

/**
 * Idempotency-Key on POST/PUT/PATCH/DELETE: the first response is stored (status, headers, body)
 * and replayed to every retry with the same key and request; the same key with a different
 * request is 422; a retry while the first is still running waits for it (up to 10 s, then 409);
 * an attempt that stopped renewing its lease (its process died or lost the database) is taken
 * over within IDEMPOTENCY_LEASE_MS, inside that wait (docs/idempotency.md).
 * Keys are scoped to the caller's credential, so two callers cannot see each other's responses.
 */
const withIdempotency = <E, R>(
  idempotency: Context.Service.Shape<typeof Idempotency>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  inner: Effect.Effect<Attempt, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  const key = request.headers["idempotency-key"]
  if (key === undefined || !MUTATING.has(request.method) || ENVELOPE_PATHS.has(guardPath(request.url))) return Effect.map(inner, (a) => a.response)
  if (!IDEMPOTENCY_KEY.test(key)) {
    return Effect.succeed(
      errorResponse(new InvalidInput({ message: "Idempotency-Key must be 1 to 255 visible ASCII characters", field: "Idempotency-Key" }), requestId)
    )
  }
  return idempotent(idempotency, request, requestId, inner, key) as Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
}

/**
 * A request's answer, and whether a handler gave it: the route matched, the caller was
 * authenticated and allowed, and the input decoded. Only such answers are stored under an
 * Idempotency-Key; a refusal before the handler changed nothing, and storing it would turn the
 * corrected request with the same key into a 422.
 */
interface Attempt {
  readonly response: HttpServerResponse.HttpServerResponse
  readonly reached: boolean
}

/** A 403 that names the permission the caller lacks: the auth middleware's refusal (or a service's, equally without effect). */
const missingPermission = (response: HttpServerResponse.HttpServerResponse): boolean => {
  if (response.status !== 403 || response.body._tag !== "Uint8Array") return false
  try {
    const body = JSON.parse(decoder.decode(response.body.body)) as { permission?: unknown }
    return typeof body?.permission === "string"
  } catch {
    return false
  }
}

/** The body of withIdempotency, its generator function made once (not per request). */
const idempotent = Effect.fnUntraced(function* (
  idempotency: Context.Service.Shape<typeof Idempotency>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  inner: Effect.Effect<Attempt, unknown, unknown>,
  key: string
) {
    const body = yield* request.text.pipe(Effect.option)
    if (Option.isNone(body)) return (yield* inner).response
    const cookie = request.cookies[SESSION_COOKIE]
    // Without credentials the caller is its network address, so two anonymous clients never share keys.
    const anonymous = `anonymous:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
    // The key, wherever it travels: a Payment credential in Authorization (key in X-API-Key)
    // changes with every payment and must not change the scope.
    const presented = presentedKey(request.headers.authorization, request.headers["x-api-key"])
    const who = presented !== undefined ? `Bearer ${presented}` : (request.headers.authorization ?? (cookie ? `session:${cookie}` : anonymous))
    const scope = sha256(who)
    // The path as the router reads it (case kept: ids are case-sensitive), so `//api/x` and
    // `/api/x` with one key are one request, not two.
    const requestHash = sha256(`${request.method} ${canonicalPath(request.url)}?${queryOf(request.url)}\n${canonicalBody(body.value)}`)
    const mismatch = () =>
      errorResponse(
        new IdempotencyKeyReused({ message: "this Idempotency-Key was already used with a different request (method, path or body)" }),
        requestId
      )
    for (let step = 0; step < WAIT_STEPS; step++) {
      const claim = yield* Effect.result(idempotency.begin(scope, key, requestHash))
      if (claim._tag === "Failure") return errorResponse(claim.failure, requestId)
      const state = claim.success
      if (state._tag === "Started") {
        const owner = state.owner
        // The lease is renewed while the handler runs; if this process dies, or loses the database
        // (and so cannot release the key), it lapses within seconds and a retry runs.
        const { response, reached } = yield* idempotency.hold(
          scope,
          key,
          owner,
          inner.pipe(
            Effect.provideService(currentIdempotencyKey, key),
            Effect.provideService(currentIdempotencyScope, scope),
            Effect.onExit((exit) => (exit._tag === "Failure" ? Effect.ignore(idempotency.release(scope, key, owner)) : Effect.void))
          )
        )
        if (reached && replayable(response.status) && response.body._tag === "Uint8Array") {
          const headers: Record<string, string> = {}
          for (const [name, value] of Object.entries(response.headers)) {
            if (name !== "set-cookie" && name !== "x-request-id") headers[name] = value
          }
          headers["content-type"] = response.body.contentType
          const text = decoder.decode(response.body.body)
          const stored: StoredResponse = API_KEY_SECRET.test(text) ? secretWithheld(requestId) : { status: response.status, headers, body: text }
          yield* Effect.ignore(idempotency.complete(scope, key, owner, stored))
        } else {
          yield* Effect.ignore(idempotency.release(scope, key, owner))
        }
        return response
      }
      if (state.requestHash !== requestHash) return mismatch()
      if (state._tag === "Done") {
        const { "content-type": contentType, ...headers } = state.response.headers
        return HttpServerResponse.text(state.response.body, {
          status: state.response.status,
          contentType: contentType ?? "application/json",
          headers: { ...headers, "idempotent-replayed": "true" }
        })
      }
      yield* Effect.sleep(WAIT_STEP_MS)
    }
    return errorResponse(new Conflict({ message: "a request with this Idempotency-Key is still in progress; retry later" }), requestId)
})

/** Where a schema decode failed, as the one error body names it: the first issue's path and message. */
const decodeFailure = (error: HttpApiError.HttpApiSchemaError): InvalidInput => {
  const { path, message: detail } = firstSchemaIssue(error.cause)
  const field = path ? path : error.kind === "Payload" || error.kind === "Body" ? undefined : error.kind.toLowerCase()
  if ((error.kind === "Payload" || error.kind === "Body") && !path && /JSON/i.test(detail)) {
    return new InvalidInput({ message: "request body is not valid JSON" })
  }
  return new InvalidInput({ message: field ? `${field}: ${detail}` : detail, ...(field ? { field } : {}) })
}

/**
 * The methods each path of the HttpApi answers: a request for one of these paths with another
 * method is 405 with Allow, not 404 (the path exists).
 */
export const pathMethods = (): ((pathname: string) => ReadonlyArray<string> | undefined) => {
  const byPath = new Map<string, Set<string>>()
  for (const r of routeTable(Api)) {
    const methods = byPath.get(r.path) ?? new Set<string>()
    methods.add(r.method.toUpperCase())
    byPath.set(r.path, methods)
  }
  const patterns = [...byPath].map(([path, methods]) => ({
    regex: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+")}$`, "i"),
    methods: [...methods].sort()
  }))
  return (pathname) => {
    const allow = new Set<string>()
    for (const p of patterns) if (p.regex.test(pathname)) for (const m of p.methods) allow.add(m)
    return allow.size > 0 ? [...allow].sort() : undefined
  }
}

/**
 * The answer for a request that failed below the handlers: an unknown route, a body or parameter
 * that does not decode, a body over the limit. Decode failures arrive as defects in 4.x (an
 * HttpApiSchemaError, a RequestParseError), so they are matched before the catch-all 500.
 */
const answerFailure = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  maxBodyBytes: number,
  allowedMethods: (pathname: string) => ReadonlyArray<string> | undefined
) => {
  const failure = Cause.findErrorOption(cause)
  const defect = Cause.findDefect(cause)
  const found = Option.isSome(failure) ? failure.value : Result.isSuccess(defect) ? defect.success : undefined
  if (HttpServerError.isHttpServerError(found)) {
    if (found.reason._tag === "RouteNotFound") {
      const pathname = request.url.split("?")[0]
      // The path the router failed to match, read as it reads it (`/API//x/` is `/api/x`).
      const allow = allowedMethods(routedPath(request.url))
      if (allow && !allow.includes(request.method)) {
        return Effect.succeed(
          errorResponse(new MethodNotAllowed({ message: `${pathname} answers ${allow.join(", ")}, not ${request.method}`, allow: [...allow] }), requestId, {
            allow: allow.join(", ")
          })
        )
      }
      return Effect.succeed(errorResponse(new NotFound({ message: `no route for ${request.method} ${request.url.split("?")[0]}`, resource: "route" }), requestId))
    }
    if (found.reason._tag === "RequestParseError") {
      return Effect.succeed(
        found.reason.reason === "BodyTooLarge"
          ? errorResponse(new PayloadTooLarge({ message: `request body is over the limit of ${maxBodyBytes} bytes`, limitBytes: maxBodyBytes }), requestId, { connection: "close" })
          : errorResponse(new InvalidInput({ message: "request body is not valid JSON" }), requestId)
      )
    }
  }
  if (HttpApiError.HttpApiSchemaError.is(found)) return Effect.succeed(errorResponse(decodeFailure(found), requestId))
  if (found instanceof HttpApiError.HttpApiPayloadTooLarge) {
    return Effect.succeed(
      errorResponse(new PayloadTooLarge({ message: `request body is over the limit of ${maxBodyBytes} bytes`, limitBytes: maxBodyBytes }), requestId, { connection: "close" })
    )
  }
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
  return Effect.logError("unhandled request failure", cause).pipe(Effect.as(HttpServerResponse.jsonUnsafe(internalErrorBody(requestId), { status: 500 })))
}

export const GlobalMiddlewareLive = HttpRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const idempotency = yield* Idempotency
    const allowedMethods = pathMethods()
    // Request ids: a random prefix per server and a counter (unique across processes, no syscall per request).
    const requestIdPrefix = `req_${randomBytes(6).toString("base64url")}`
    let requestCounter = 0
    const nextRequestId = () => `${requestIdPrefix}${(++requestCounter).toString(36)}`
    // The generator function is made once here, not per request: one made per call leaves old-space
    // objects (its hidden class) pointing at young ones and promotes garbage (docs/performance.md, "Memory soak").
    const handle = Effect.fnUntraced(function* (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled>) {
      const startedNanos = yield* Clock.currentTimeNanos
      const request = yield* HttpServerRequest.HttpServerRequest
      const note = newRequestNote()
      // The router puts the matched route in the fiber's context only while the handler runs (and
      // the wrappers below restore the context on the way out), so it is read right at the end of
      // the routed effect, success or failure.
      const routed = Effect.onExit(httpEffect, () =>
        Effect.withFiber((fiber) => {
          note.route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.route.path
          return Effect.void
        })
      )
      const incoming = request.headers["x-request-id"]
      const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : nextRequestId()
      const length = Number(request.headers["content-length"] ?? "0")
      const contentType = request.headers["content-type"]
      // Path guards compare the path the router will match, not the raw URL (`//API/…` routes too).
      const isApi = guardPath(request.url).startsWith("/api/")
      let response: HttpServerResponse.HttpServerResponse
      if (Number.isFinite(length) && length > config.maxBodyBytes) {
        response = errorResponse(
          new PayloadTooLarge({ message: `request body is ${length} bytes; the limit is ${config.maxBodyBytes}`, limitBytes: config.maxBodyBytes }),
          requestId,
          { connection: "close" }
        )
      } else if (/%00/i.test(request.url)) {
        response = errorResponse(new InvalidInput({ message: NUL_MESSAGE }), requestId)
      } else if (MUTATING.has(request.method) && request.headers["content-length"] === undefined && request.headers["transfer-encoding"] !== undefined) {
        // A chunked body's size is only known by reading it: ask for a length instead, so the
        // limit is checked before a byte is read.
        response = errorResponse(
          new LengthRequired({ message: "send the request body with a Content-Length header; chunked bodies are not accepted" }),
          requestId,
          { connection: "close" }
        )
      } else if (MUTATING.has(request.method) && isApi && crossSiteCookieWrite(request, config.baseUrl)) {
        // A write authenticated by the session cookie alone must be the dashboard's own JSON call:
        // a cross-site form (text/plain, urlencoded, multipart, even with an empty body) or another
        // origin is refused before it reaches a handler (CSRF).
        response = errorResponse(
          new Forbidden({
            message: "a write authenticated by the session cookie must be a JSON request (Content-Type: application/json) from the dashboard's own origin"
          }),
          requestId
        )
      } else if (MUTATING.has(request.method) && length > 0 && isApi && !isJsonMediaType(contentType)) {
        // Every /api/ body is JSON; a form or text body would otherwise be read as no input at all.
        response = errorResponse(
          new UnsupportedMediaType({
            message: `request bodies are JSON: send Content-Type: application/json (got ${JSON.stringify(contentType ?? "none")})`,
            field: "Content-Type"
          }),
          requestId
        )
      } else {
        // Failures below the handlers (no route, a method the path does not serve, input that does
        // not decode, a JSON guard's refusal) are answered inside the idempotency wrapper but marked
        // as not reached, so they are never stored under the key.
        const answered = withJsonGuard(request, requestId, routed).pipe(
          Effect.map((response): Attempt => ({ response, reached: note.route !== undefined && !missingPermission(response) })),
          Effect.catchCause((cause) =>
            Effect.map(answerFailure(cause, request, requestId, config.maxBodyBytes, allowedMethods), (response): Attempt => ({ response, reached: false }))
          )
        )
        response = yield* withIdempotency(idempotency, request, requestId, answered).pipe(
          Effect.catchCause((cause) => answerFailure(cause, request, requestId, config.maxBodyBytes, allowedMethods)),
          Effect.provideService(currentRequestId, requestId),
          Effect.provideService(currentRequestNote, note),
          Effect.annotateLogs("requestId", requestId)
        )
        response = normaliseErrorBody(response, requestId, request.url.split("?")[0])
      }
      const durationMs = Math.round(Number((yield* Clock.currentTimeNanos) - startedNanos) / 1e5) / 10
      yield* logRequest({ method: request.method, route: note.route, status: response.status, durationMs, requestId, agentId: note.agentId, accountId: note.accountId })
      // Every 503, whichever route or page answered it, says when to try again.
      return HttpServerResponse.setHeaders(withRetryAfter(response), {
        "x-request-id": requestId,
        "x-content-type-options": "nosniff"
      })
    })
    // Every failure is answered above; the type keeps `unhandled` as the router's contract asks.
    return (httpEffect) => handle(httpEffect) as Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled, HttpServerRequest.HttpServerRequest>
  }),
  { global: true }
)
