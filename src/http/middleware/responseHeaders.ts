// Headers on every response, whichever route, page, refusal or failure answered it.
import { HttpServerResponse } from "effect/http"
import { withRetryAfter } from "../errors.js"

/** X-Request-Id, `nosniff`, and Retry-After on every 503 and 429 (each one says when to try again). */
export const withResponseHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  requestId: string
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(withRetryAfter(response), {
    "x-request-id": requestId,
    "x-content-type-options": "nosniff"
  })
