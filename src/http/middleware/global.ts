// The global HTTP middleware: every request passes the small middlewares of this folder, composed
// here and only here, in a fixed order. The order is behaviour; read it from the outside in:
//
//  1. request id        (requestId.ts)        kept from X-Request-Id or made; names the request everywhere.
//  2. response headers  (responseHeaders.ts)  X-Request-Id, nosniff, Retry-After on a 503: on every answer.
//  3. access log        (accessLog.ts)        around every answer, refusals included.
//  4. refusals, from the request line and headers alone, before anything reads the body; first wins:
//     a. 413 body over the limit (bodyLimit.ts): before a byte is read, so before every later step.
//     b. 400 NUL in the URL (inputGuard.ts).
//     c. 411 chunked write (bodyLimit.ts): its size is only known by reading it.
//     d. 403 cross-site cookie write (crossSite.ts): before 415, so a cross-site form is named CSRF.
//     e. 415 non-JSON body under /api/ (mediaType.ts).
//  5. error body        (errorBody.ts)        every error the steps below answer leaves in the one shape.
//  6. request context   currentRequestId, currentRequestNote and the log annotation, for everything below.
//  7. failure answer    (failureAnswer.ts)    404/405/400/413/500 for what fails below the handlers.
//  8. idempotency       (idempotency.ts)      a write with an Idempotency-Key only, outside the router and so
//                                            outside auth: the key is scoped by the credential it carries,
//                                            and a replay is answered before the key is authenticated or
//                                            rate limited. It provides currentIdempotencyKey /
//                                            currentIdempotencyScope to the handler.
//  9. attempt           (idempotency.ts)      for that write: whether a handler answered (stored) or a refusal
//                                            below it did (never stored), with the failure answer of step 7.
// 10. JSON guard        (inputGuard.ts)       reads the body: too deep, NUL or lone surrogate is 400.
// 11. route note        (accessLog.ts)        the route the router matched, for the log line.
// 12. the router: auth middleware, decoding, handlers.
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Context, Effect, References } from "effect"
import type { unhandled } from "effect/Types"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Idempotency } from "../../services/idempotency/Idempotency.js"
import { currentRequestId } from "../requestId.js"
import { currentRequestNote, newRequestNote, type RequestNote } from "../requestLog.js"
import { noteRoute, withAccessLog } from "./accessLog.js"
import { chunkedBody, oversizedBody } from "./bodyLimit.js"
import { crossSiteWrite } from "./crossSite.js"
import { normaliseErrorBody } from "./errorBody.js"
import { makeFailureAnswer } from "./failureAnswer.js"
import { asAttempt, idempotencyKeyOf, withIdempotencyKey } from "./idempotency.js"
import { nulInUrl, withJsonGuard } from "./inputGuard.js"
import { nonJsonBody } from "./mediaType.js"
import { firstRefusal, type Refusal } from "./refusal.js"
import { makeRequestIds } from "./requestId.js"
import { withResponseHeaders } from "./responseHeaders.js"

/**
 * Step 6: `answer` with the request's id and note and the `requestId` log annotation in its
 * context. One context update instead of three provides: each provide is a fiber step and an exit
 * hook that restores the context, on every request (docs/performance.md, "The request path").
 */
const inRequestContext = <A, E, R>(answer: Effect.Effect<A, E, R>, requestId: string, note: RequestNote) =>
  Effect.updateContext(answer, (context: Context.Context<R>) => {
    const annotations = Context.getUnsafe(context, References.CurrentLogAnnotations)
    return Context.add(
      Context.add(Context.add(context, currentRequestId, requestId), currentRequestNote, note),
      References.CurrentLogAnnotations,
      { ...annotations, requestId }
    )
  })

export const GlobalMiddlewareLive = HttpRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const idempotency = yield* Idempotency
    const requestIdOf = makeRequestIds()
    const answerFailure = makeFailureAnswer(config.maxBodyBytes)
    // Step 4, in order.
    const refusals: ReadonlyArray<Refusal> = [
      oversizedBody(config.maxBodyBytes),
      nulInUrl,
      chunkedBody,
      crossSiteWrite(config.baseUrl),
      nonJsonBody
    ]
    // Steps 5 to 11 for a request no refusal answered. Only a write carrying an Idempotency-Key is
    // run as an attempt (steps 8 and 9): every other request is answered by the router, or by the
    // failure answer when it fails below the handlers, with nothing in between.
    const answered = (
      httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled>,
      request: HttpServerRequest.HttpServerRequest,
      requestId: string,
      note: RequestNote
    ) => {
      const failure = (cause: Parameters<typeof answerFailure>[0]) => answerFailure(cause, request, requestId)
      const routed = withJsonGuard(request, requestId, noteRoute(httpEffect))
      const key = idempotencyKeyOf(request)
      const answer =
        key === undefined
          ? Effect.catchCause(routed, failure)
          : withIdempotencyKey(idempotency, request, requestId, key, asAttempt(routed, note, failure)).pipe(
              Effect.catchCause(failure)
            )
      return Effect.map(inRequestContext(answer, requestId, note), (response) =>
        normaliseErrorBody(response, requestId, request.url)
      )
    }
    // A plain function, not a generator: the request is read from the fiber synchronously, and only
    // the effects that answer the request are built.
    return (httpEffect) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const requestId = requestIdOf(request)
        const note = newRequestNote()
        const refused = firstRefusal(refusals, request, requestId)
        const answer = refused !== undefined ? Effect.succeed(refused) : answered(httpEffect, request, requestId, note)
        return Effect.map(withAccessLog(request, requestId, note, answer), (response) =>
          withResponseHeaders(response, requestId)
        )
      }) as Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled, HttpServerRequest.HttpServerRequest>
  }),
  { global: true }
)
