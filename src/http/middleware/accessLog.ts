// The access log: one line per request, whatever answered it (a refusal, a handler, a failure
// below the handlers), with the route template the router matched and the caller the auth
// middleware noted (src/http/requestLog.ts writes the line).
import { HttpRouter, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Clock, Context, Effect } from "effect"
import { currentRequestNote, logRequest, type RequestNote } from "../requestLog.js"

/** Reads the matched route into the request's note (made once: it finds the note in the context). */
const noteMatchedRoute = () =>
  Effect.withFiber((fiber) => {
    const note = fiber.getRef(currentRequestNote)
    if (note !== undefined) note.route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.route.path
    return Effect.void
  })

/**
 * `httpEffect` noting the route it matched on the request's note. The router puts the matched
 * route in the fiber's context only while the handler runs (and the wrappers outside restore the
 * context on the way out), so it is read right at the end of the routed effect, success or failure.
 */
export const noteRoute = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => Effect.onExit(httpEffect, noteMatchedRoute)

/** Runs `answer` and writes its access-log line: method, route, status, duration, request id, caller. */
export const withAccessLog = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  note: RequestNote,
  answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.withFiber((fiber) => {
    // The fiber's clock (a test's TestClock included), read directly: two reads per request.
    const clock = fiber.getRef(Clock.Clock)
    const startedNanos = clock.currentTimeNanosUnsafe()
    return Effect.tap(answer, (response) =>
      logRequest({
        method: request.method,
        route: note.route,
        status: response.status,
        durationMs: Math.round(Number(clock.currentTimeNanosUnsafe() - startedNanos) / 1e5) / 10,
        requestId,
        agentId: note.agentId,
        accountId: note.accountId
      })
    )
  })
