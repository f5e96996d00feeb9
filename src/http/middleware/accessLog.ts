// The access log: one line per request, whatever answered it (a refusal, a handler, a failure
// below the handlers), with the route template the router matched and the caller the auth
// middleware noted (src/http/requestLog.ts writes the line).
import { HttpRouter, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Clock, Context, Effect } from "effect"
import { logRequest, type RequestNote } from "../requestLog.js"

/**
 * `httpEffect` noting the route it matched. The router puts the matched route in the fiber's
 * context only while the handler runs (and the wrappers outside restore the context on the way
 * out), so it is read right at the end of the routed effect, success or failure.
 */
export const noteRoute = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  note: RequestNote
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.onExit(httpEffect, () =>
    Effect.withFiber((fiber) => {
      note.route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.route.path
      return Effect.void
    })
  )

/** Runs `answer` and writes its access-log line: method, route, status, duration, request id, caller. */
export const withAccessLog = Effect.fnUntraced(function* <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  note: RequestNote,
  answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) {
  const startedNanos = yield* Clock.currentTimeNanos
  const response = yield* answer
  const durationMs = Math.round(Number((yield* Clock.currentTimeNanos) - startedNanos) / 1e5) / 10
  yield* logRequest({
    method: request.method,
    route: note.route,
    status: response.status,
    durationMs,
    requestId,
    agentId: note.agentId,
    accountId: note.accountId
  })
  return response
})
