// Idempotency-Key on POST/PUT/PATCH/DELETE: the first response is stored (status, headers, body)
// and replayed to every retry with the same key and request; the same key with a different
// request is 422; a retry while the first is still running waits for it (WAIT_STEPS × WAIT_STEP_MS,
// then 409); an attempt that stopped renewing its lease (its process died or lost the database) is
// taken over within IDEMPOTENCY_LEASE_MS, inside that wait (docs/idempotency.md). Keys are scoped
// to the caller's credential, so two callers cannot see each other's responses.
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { type Cause, type Context, Effect, Option } from "effect"
import { Conflict, IdempotencyKeyReused, InvalidInput } from "../../schema/platform/errors.js"
import { type Idempotency } from "../../services/idempotency/Idempotency.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../requestIdempotency.js"
import { A2A_ENDPOINT_PATH } from "../descriptors/a2a.js"
import { MCP_ENDPOINT_PATH } from "../descriptors/mcp.js"
import { errorResponse } from "../errors.js"
import type { RequestNote } from "../requestLog.js"
import { guardPath } from "../routePath.js"
import { missingPermission, replayable, replayed, requestHashOf, scopeOf, toStored } from "./idempotencyRecord.js"
import { MUTATING } from "./refusal.js"

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
/**
 * JSON-RPC envelopes whose calls carry their own keys (an MCP tool call's `_meta.idempotencyKey`,
 * an A2A message's `metadata.idempotencyKey`): a header key there would name every message of a
 * connection, so it is not applied, and the calls made in process never inherit it.
 */
const ENVELOPE_PATHS: ReadonlySet<string> = new Set([MCP_ENDPOINT_PATH, A2A_ENDPOINT_PATH])
/**
 * The ACP endpoints answer their Idempotency-Key themselves (src/http/acp/routes.ts): the spec wants
 * its own error bodies, a 409 at once while the first attempt runs, and keys scoped per endpoint.
 */
const ACP_PATHS = "/acp/"
const WAIT_STEP_MS = 50
const WAIT_STEPS = 200

/**
 * A request's answer, and whether a handler gave it: the route matched, the caller was
 * authenticated and allowed, and the input decoded. Only such answers are stored under an
 * Idempotency-Key; a refusal before the handler changed nothing, and storing it would turn the
 * corrected request with the same key into a 422.
 */
export interface Attempt {
  readonly response: HttpServerResponse.HttpServerResponse
  readonly reached: boolean
}

/**
 * `answer` as an Attempt: reached when the router noted a route and the answer is not a missing
 * permission's 403. Failures below the handlers (no route, input that does not decode) are
 * answered by `answerFailure` and never reached.
 */
export const asAttempt = <E, R, E2, R2>(
  answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  note: RequestNote,
  answerFailure: (cause: Cause.Cause<E>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E2, R2>
): Effect.Effect<Attempt, E2, R | R2> =>
  answer.pipe(
    Effect.map((response): Attempt => ({
      response,
      reached: note.route !== undefined && !missingPermission(response)
    })),
    Effect.catchCause((cause) =>
      Effect.map(answerFailure(cause), (response): Attempt => ({ response, reached: false }))
    )
  )

/**
 * The Idempotency-Key a request is run under: a write's header, outside the JSON-RPC envelopes.
 * Undefined for every other request, which runs as it is.
 */
export const idempotencyKeyOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const key = request.headers["idempotency-key"]
  if (key === undefined || !MUTATING.has(request.method)) return undefined
  const path = guardPath(request.url)
  return ENVELOPE_PATHS.has(path) || path.startsWith(ACP_PATHS) ? undefined : key
}

/**
 * Runs `inner` under `key` (from idempotencyKeyOf). A malformed key is 400 before anything runs.
 */
export const withIdempotencyKey = <E, R>(
  idempotency: Context.Service.Shape<typeof Idempotency>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  key: string,
  inner: Effect.Effect<Attempt, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  if (!IDEMPOTENCY_KEY.test(key)) {
    const message = "Idempotency-Key must be 1 to 255 visible ASCII characters"
    return Effect.succeed(errorResponse(new InvalidInput({ message, field: "Idempotency-Key" }), requestId))
  }
  return idempotent(idempotency, request, requestId, inner, key) as Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    E,
    R
  >
}

/** The body of withIdempotencyKey, its generator function made once (not per request). */
const idempotent = Effect.fnUntraced(function* (
  idempotency: Context.Service.Shape<typeof Idempotency>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  inner: Effect.Effect<Attempt, unknown, unknown>,
  key: string
) {
  const body = yield* request.text.pipe(Effect.option)
  if (Option.isNone(body)) return (yield* inner).response
  const scope = scopeOf(request)
  const requestHash = requestHashOf(request, body.value)
  for (let step = 0; step < WAIT_STEPS; step++) {
    const claim = yield* Effect.result(idempotency.begin(scope, key, requestHash))
    if (claim._tag === "Failure") return errorResponse(claim.failure, requestId)
    const state = claim.success
    if (state._tag === "Started") {
      const owner = state.owner
      // The lease is renewed while the handler runs; if this process dies, or loses the database
      // (and so cannot release the key), it lapses and a retry runs.
      const { response, reached } = yield* idempotency.hold(
        scope,
        key,
        owner,
        inner.pipe(
          Effect.provideService(currentIdempotencyKey, key),
          Effect.provideService(currentIdempotencyScope, scope),
          Effect.onExit((exit) =>
            exit._tag === "Failure" ? Effect.ignore(idempotency.release(scope, key, owner)) : Effect.void
          )
        )
      )
      if (reached && replayable(response.status) && response.body._tag === "Uint8Array") {
        yield* Effect.ignore(idempotency.complete(scope, key, owner, toStored(response, response.body, requestId)))
      } else {
        yield* Effect.ignore(idempotency.release(scope, key, owner))
      }
      return response
    }
    if (state.requestHash !== requestHash) {
      const message = "this Idempotency-Key was already used with a different request (method, path or body)"
      return errorResponse(new IdempotencyKeyReused({ message }), requestId)
    }
    if (state._tag === "Done") return replayed(state.response)
    yield* Effect.sleep(WAIT_STEP_MS)
  }
  const message = "a request with this Idempotency-Key is still in progress; retry later"
  return errorResponse(new Conflict({ message }), requestId)
})
