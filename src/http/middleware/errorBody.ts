// One error body on the wire: a JSON error response from the HttpApi (an encoded tagged error) is
// rewritten into the one error body (type, field, requestId); a payment refusal (402, or the
// method-unsupported 400) into RFC 9457 problem details.
import { HttpServerResponse } from "effect/http"
import { toErrorBody } from "../errors.js"
import { isPaymentProblemSource, toPaymentProblem } from "../paymentProblem.js"

const decoder = new TextDecoder()

/** `response` with its error body in the one shape; any other response as it is. `url`: the request-target. */
export const normaliseErrorBody = (
  response: HttpServerResponse.HttpServerResponse,
  requestId: string,
  url: string
): HttpServerResponse.HttpServerResponse => {
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
    const problem = toPaymentProblem(record, requestId, url.split("?")[0])
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
