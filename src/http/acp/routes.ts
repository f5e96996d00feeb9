// The Agentic Commerce Protocol's seller endpoints (2026-04-17) under /acp (docs/acp.md):
// POST /acp/checkout_sessions, GET and POST /acp/checkout_sessions/{id}, POST …/{id}/complete and
// …/{id}/cancel, with the spec's headers: API-Version on every request; Idempotency-Key on every
// POST (400 when absent, 409 while the first attempt runs, 422 when reused for another request, the
// first answer replayed with Idempotent-Replayed: true), through the project's Idempotency service;
// Authorization: Bearer <an agent API key> (its rate limit counted as on the Agent API).
// Errors are the spec's Error ({type, code, message, param}), never the project's body.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { ACP_API_VERSION } from "../../schema/acp/sessions.js"
import { AcpCheckout, type AcpSessionView } from "../../services/acp/AcpCheckout.js"
import { Idempotency } from "../../services/idempotency/Idempotency.js"
import type { Caller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { encodeError, statusOf } from "../errors.js"
import { authenticateBearerWith } from "../middleware/authLive.js"
import { replayable, replayed, requestHashOf, scopeOf } from "../middleware/idempotencyRecord.js"
import { canonicalPath } from "../routePath.js"
import {
  acpError,
  type BadRequest,
  CARD_HANDLER_PATH,
  cardHandlerSpec,
  cardInstrumentSchema,
  isBadRequest,
  readComplete,
  readCreate,
  readUpdate,
  renderSession,
  WALLET_HANDLER_PATH,
  walletConfigSchema,
  walletHandlerSpec,
  walletInstrumentSchema
} from "./wire.js"

/** Where the ACP endpoints live (the spec's paths under this prefix). */
export const ACP_PREFIX = "/acp"

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
const decoder = new TextDecoder()

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store", ...headers } })

/** The spec's Error for one of the service's typed refusals (docs/acp.md, "Errors"). */
const refusal = (error: unknown) => {
  const status = statusOf(error)
  const body = encodeError(error)
  const tag = typeof body._tag === "string" ? body._tag : "InternalError"
  const message = typeof body.message === "string" ? body.message : "internal error"
  const field = typeof body.field === "string" ? body.field : undefined
  const code =
    tag === "InvalidInput"
      ? "invalid"
      : tag === "InsufficientCredits" || tag === "CardDeclined"
        ? "payment_declined"
        : tag === "SessionClosed"
          ? "session_closed"
          : tag === "SessionNotCancelable"
            ? "not_cancelable"
            : tag.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()
  const type = status === 503 ? "service_unavailable" : status >= 500 ? "processing_error" : "invalid_request"
  const param = field === undefined ? undefined : field.startsWith("$") ? field : `$.${field}`
  const headers: Record<string, string> =
    typeof body.retryAfterSeconds === "number" ? { "retry-after": String(body.retryAfterSeconds) } : {}
  if (status === 401) headers["www-authenticate"] = `Bearer realm="acp"`
  return json(
    acpError(code, status >= 500 && status !== 503 ? "internal error" : message, param, type),
    status,
    headers
  )
}

const badRequest = (b: BadRequest) => json(acpError("invalid", b.message, b.param), 400)

/** The request's headers the spec asks every answer to echo. */
const echoed = (request: HttpServerRequest.HttpServerRequest) => {
  const out: Record<string, string> = {}
  const requestId = request.headers["request-id"]
  if (requestId !== undefined) out["request-id"] = requestId
  return out
}

export const AcpRoutesLive = HttpRouter.use(
  Effect.fnUntraced(function* (router) {
    const checkout = yield* AcpCheckout
    const idempotency = yield* Idempotency
    const keys = yield* Keys
    const limiter = yield* RateLimiter
    const { baseUrl } = yield* AppConfig

    /** API-Version and the key, before anything else: the caller, or the refusal to answer. */
    const admit = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
      const version = request.headers["api-version"]
      if (version === undefined || version.trim() === "")
        return json(acpError("api_version_required", `send API-Version: ${ACP_API_VERSION}`), 400)
      if (version.trim() !== ACP_API_VERSION)
        return json(
          acpError(
            "unsupported_api_version",
            `API-Version ${version} is not supported: this seller speaks ${ACP_API_VERSION}`
          ),
          400
        )
      return yield* authenticateBearerWith(keys, limiter, request.headers.authorization, null).pipe(
        Effect.catch((e) => Effect.succeed(refusal(e)))
      )
    })

    type Answer = HttpServerResponse.HttpServerResponse
    type Handler = (caller: Caller, body: unknown, id: string) => Effect.Effect<Answer>

    /** A view as a 2xx answer, or a typed refusal as the spec's Error. */
    const answer = <E>(status: number, effect: Effect.Effect<AcpSessionView, E>, withOrder = false) =>
      effect.pipe(
        Effect.map((view) => json(renderSession(view, { baseUrl, cardPsp: checkout.cardPsp }, withOrder), status)),
        Effect.catch((e) => Effect.succeed(refusal(e))),
        Effect.catchDefect(() => Effect.succeed(refusal(undefined)))
      )

    const get = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = (yield* HttpRouter.params).id ?? ""
      const admitted = yield* admit(request)
      if (HttpServerResponse.isHttpServerResponse(admitted)) return admitted
      const response = yield* answer(200, checkout.get(admitted, id))
      return HttpServerResponse.setHeaders(response, echoed(request))
    })

    /**
     * A POST: admitted, its Idempotency-Key required and claimed (scoped to the key's caller and the
     * endpoint), the body read as JSON, the handler run once; its answer stored unless it says
     * "try again" (5xx, 429, 401), and replayed to every retry of the same request.
     */
    const post = Effect.fnUntraced(function* (handler: Handler) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = (yield* HttpRouter.params).id ?? ""
      const admitted = yield* admit(request)
      if (HttpServerResponse.isHttpServerResponse(admitted)) return admitted
      const key = request.headers["idempotency-key"]
      if (key === undefined || key === "")
        return json(acpError("idempotency_key_required", "Idempotency-Key header is required"), 400)
      if (!IDEMPOTENCY_KEY.test(key))
        return json(
          acpError("invalid_idempotency_key", "Idempotency-Key must be 1 to 255 visible ASCII characters"),
          400
        )
      const keyed = { "idempotency-key": key, ...echoed(request) }
      const text = yield* Effect.orElseSucceed(request.text, () => "")
      // Scoped to the authenticated identity and the endpoint, as the spec's parameter says.
      const scope = createHash("sha256")
        .update(`${scopeOf(request)} acp ${request.method} ${canonicalPath(request.url)}`)
        .digest("hex")
      const claim = yield* Effect.result(idempotency.begin(scope, key, requestHashOf(request, text)))
      if (claim._tag === "Failure") return refusal(claim.failure)
      const state = claim.success
      if (state._tag !== "Started") {
        if (state.requestHash !== requestHashOf(request, text))
          return json(
            acpError("idempotency_conflict", "Idempotency-Key has already been used with a different request body"),
            422,
            keyed
          )
        if (state._tag === "Done") return HttpServerResponse.setHeaders(replayed(state.response), keyed)
        return json(
          acpError("idempotency_in_flight", "A request with this Idempotency-Key is currently being processed"),
          409,
          { ...keyed, "retry-after": "1" }
        )
      }
      let body: unknown = {}
      let unreadable = false
      if (text !== "") {
        try {
          body = JSON.parse(text)
        } catch {
          unreadable = true
        }
      }
      const response = yield* idempotency.hold(
        scope,
        key,
        state.owner,
        unreadable
          ? Effect.succeed(badRequest({ param: "$", message: "the body is not JSON" }))
          : handler(admitted, body, id)
      )
      if (replayable(response.status) && response.body._tag === "Uint8Array") {
        const headers: Record<string, string> = { ...response.headers }
        yield* Effect.ignore(
          idempotency.complete(scope, key, state.owner, {
            status: response.status,
            headers: { ...headers, "content-type": response.body.contentType },
            body: decoder.decode(response.body.body)
          })
        )
      } else {
        yield* Effect.ignore(idempotency.release(scope, key, state.owner))
      }
      return HttpServerResponse.setHeaders(response, keyed)
    })

    const create: Handler = (caller, body) => {
      const input = readCreate(body)
      return isBadRequest(input) ? Effect.succeed(badRequest(input)) : answer(201, checkout.create(caller, input))
    }
    const update: Handler = (caller, body, id) => {
      const input = readUpdate(body)
      return isBadRequest(input) ? Effect.succeed(badRequest(input)) : answer(200, checkout.update(caller, id, input))
    }
    const complete: Handler = (caller, body, id) => {
      const input = readComplete(body)
      return isBadRequest(input)
        ? Effect.succeed(badRequest(input))
        : answer(200, checkout.complete(caller, id, input.payment, input.buyer), true)
    }
    // The body (an intent_trace) is optional and not kept: why the agent left is its own.
    const cancel: Handler = (caller, _body, id) => answer(200, checkout.cancel(caller, id))

    // The wallet handler's spec, config schema and instrument schema: public documents.
    const document = (body: unknown) => Effect.succeed(HttpServerResponse.jsonUnsafe(body))
    yield* router.add("GET", WALLET_HANDLER_PATH, document(walletHandlerSpec))
    yield* router.add("GET", `${WALLET_HANDLER_PATH}/config.schema.json`, document(walletConfigSchema))
    yield* router.add("GET", `${WALLET_HANDLER_PATH}/instrument.schema.json`, document(walletInstrumentSchema))
    yield* router.add("GET", CARD_HANDLER_PATH, document(cardHandlerSpec))
    yield* router.add("GET", `${CARD_HANDLER_PATH}/instrument.schema.json`, document(cardInstrumentSchema))
    yield* router.add("POST", `${ACP_PREFIX}/checkout_sessions`, post(create))
    yield* router.add("GET", `${ACP_PREFIX}/checkout_sessions/:id`, get)
    yield* router.add("POST", `${ACP_PREFIX}/checkout_sessions/:id`, post(update))
    yield* router.add("POST", `${ACP_PREFIX}/checkout_sessions/:id/complete`, post(complete))
    yield* router.add("POST", `${ACP_PREFIX}/checkout_sessions/:id/cancel`, post(cancel))
  })
)
