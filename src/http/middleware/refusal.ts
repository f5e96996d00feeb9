// A refusal: an answer decided from the request line and headers alone, before anything reads the
// body or reaches a route. The global middleware runs its refusals in order; the first that applies
// answers the request.
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { guardPath } from "../routePath.js"

/** The refusal's answer for this request, or undefined when the request passes. */
export type Refusal = (
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
) => HttpServerResponse.HttpServerResponse | undefined

/** The methods that carry a body and change state. */
export const MUTATING: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** A write to a path under /api/, as the router will match it (`//API/…` routes there too). */
export const isApiWrite = (request: HttpServerRequest.HttpServerRequest): boolean =>
  MUTATING.has(request.method) && guardPath(request.url).startsWith("/api/")

/** The first refusal's answer, or undefined when every refusal lets the request pass. */
export const firstRefusal = (
  refusals: ReadonlyArray<Refusal>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
): HttpServerResponse.HttpServerResponse | undefined => {
  for (const refuse of refusals) {
    const answer = refuse(request, requestId)
    if (answer !== undefined) return answer
  }
  return undefined
}
