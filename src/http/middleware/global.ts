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
//  8. idempotency       (idempotency.ts)      outside the router and so outside auth: the key is scoped by
//                                            the credential it carries, and a replay is answered before
//                                            the key is authenticated or rate limited. It provides
//                                            currentIdempotencyKey / currentIdempotencyScope to the handler.
//  9. attempt           (idempotency.ts)      whether a handler answered (stored) or a refusal below it
//                                            did (never stored), with the failure answer of step 7.
// 10. JSON guard        (inputGuard.ts)       reads the body: too deep, NUL or lone surrogate is 400.
// 11. route note        (accessLog.ts)        the route the router matched, for the log line.
// 12. the router: auth middleware, decoding, handlers.
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import type { unhandled } from "effect/Types"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Idempotency } from "../../services/idempotency/Idempotency.js"
import { currentRequestId } from "../requestId.js"
import { currentRequestNote, newRequestNote } from "../requestLog.js"
import { noteRoute, withAccessLog } from "./accessLog.js"
import { chunkedBody, oversizedBody } from "./bodyLimit.js"
import { crossSiteWrite } from "./crossSite.js"
import { normaliseErrorBody } from "./errorBody.js"
import { makeFailureAnswer } from "./failureAnswer.js"
import { asAttempt, withIdempotency } from "./idempotency.js"
import { nulInUrl, withJsonGuard } from "./inputGuard.js"
import { nonJsonBody } from "./mediaType.js"
import { firstRefusal, type Refusal } from "./refusal.js"
import { makeRequestIds } from "./requestId.js"
import { withResponseHeaders } from "./responseHeaders.js"

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
    // The generator function is made once here, not per request: one made per call leaves old-space
    // objects (its hidden class) pointing at young ones and promotes garbage (docs/performance.md).
    const handle = Effect.fnUntraced(function* (
      httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled>
    ) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = requestIdOf(request)
      const note = newRequestNote()
      const refused = firstRefusal(refusals, request, requestId)
      const answer =
        refused !== undefined
          ? Effect.succeed(refused)
          : withIdempotency(
              idempotency,
              request,
              requestId,
              asAttempt(withJsonGuard(request, requestId, noteRoute(httpEffect, note)), note, (cause) =>
                answerFailure(cause, request, requestId)
              )
            ).pipe(
              Effect.catchCause((cause) => answerFailure(cause, request, requestId)),
              Effect.provideService(currentRequestId, requestId),
              Effect.provideService(currentRequestNote, note),
              Effect.annotateLogs("requestId", requestId),
              Effect.map((response) => normaliseErrorBody(response, requestId, request.url.split("?")[0]))
            )
      const response = yield* withAccessLog(request, requestId, note, answer)
      return withResponseHeaders(response, requestId)
    })
    // Every failure is answered above; the type keeps `unhandled` as the router's contract asks.
    return (httpEffect) =>
      handle(httpEffect) as Effect.Effect<
        HttpServerResponse.HttpServerResponse,
        unhandled,
        HttpServerRequest.HttpServerRequest
      >
  }),
  { global: true }
)
