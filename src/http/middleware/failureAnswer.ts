// The answer for a request that failed below the handlers: an unknown route (404), a method the
// path does not serve (405 with Allow), a body or parameter that does not decode (400), a body
// over the limit (413), and anything else (500, logged). Decode failures arrive as defects in
// Effect 4 (an HttpApiSchemaError, a RequestParseError), so they are matched before the catch-all.
import { HttpServerError, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { Cause, Effect, Option, Result } from "effect"
import { InvalidInput, MethodNotAllowed, NotFound, PayloadTooLarge } from "../../schema/platform/errors.js"
import { Api } from "../api.js"
import { errorResponse, firstSchemaIssue, internalErrorBody } from "../errors.js"
import { routedPath } from "../routePath.js"
import { routeTable } from "../routeTable.js"

/** Where a schema decode failed, as the one error body names it: the first issue's path and message. */
const decodeFailure = (error: HttpApiError.HttpApiSchemaError): InvalidInput => {
  const { path, message: detail } = firstSchemaIssue(error.cause)
  const isBody = error.kind === "Payload" || error.kind === "Body"
  const field = path ? path : isBody ? undefined : error.kind.toLowerCase()
  if (isBody && !path && /JSON/i.test(detail)) {
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

/** Answers a failure below the handlers; only an interruption stays a failure. */
export type FailureAnswer = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>

/** The failure answer of a server whose body limit is `maxBodyBytes`. */
export const makeFailureAnswer = (maxBodyBytes: number): FailureAnswer => {
  const allowedMethods = pathMethods()
  const tooLarge = (requestId: string) =>
    errorResponse(
      new PayloadTooLarge({
        message: `request body is over the limit of ${maxBodyBytes} bytes`,
        limitBytes: maxBodyBytes
      }),
      requestId,
      { connection: "close" }
    )
  const noRoute = (request: HttpServerRequest.HttpServerRequest, requestId: string) => {
    const pathname = request.url.split("?")[0]
    // The path the router failed to match, read as it reads it (`/API//x/` is `/api/x`).
    const allow = allowedMethods(routedPath(request.url))
    if (allow && !allow.includes(request.method)) {
      const message = `${pathname} answers ${allow.join(", ")}, not ${request.method}`
      return errorResponse(new MethodNotAllowed({ message, allow: [...allow] }), requestId, { allow: allow.join(", ") })
    }
    const message = `no route for ${request.method} ${pathname}`
    return errorResponse(new NotFound({ message, resource: "route" }), requestId)
  }
  return (cause, request, requestId) => {
    const failure = Cause.findErrorOption(cause)
    const defect = Cause.findDefect(cause)
    const found = Option.isSome(failure) ? failure.value : Result.isSuccess(defect) ? defect.success : undefined
    if (HttpServerError.isHttpServerError(found)) {
      if (found.reason._tag === "RouteNotFound") return Effect.succeed(noRoute(request, requestId))
      if (found.reason._tag === "RequestParseError") {
        return Effect.succeed(
          found.reason.reason === "BodyTooLarge"
            ? tooLarge(requestId)
            : errorResponse(new InvalidInput({ message: "request body is not valid JSON" }), requestId)
        )
      }
    }
    if (HttpApiError.HttpApiSchemaError.is(found)) return Effect.succeed(errorResponse(decodeFailure(found), requestId))
    if (found instanceof HttpApiError.HttpApiPayloadTooLarge) return Effect.succeed(tooLarge(requestId))
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    return Effect.logError("unhandled request failure", cause).pipe(
      Effect.as(HttpServerResponse.jsonUnsafe(internalErrorBody(requestId), { status: 500 }))
    )
  }
}
