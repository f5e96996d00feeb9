// The x402 facilitator over HTTP, exactly as the facilitator API defines it: POST {url}/verify and
// {url}/settle with `{x402Version, paymentPayload, paymentRequirements}`, GET {url}/supported. Each
// call is bounded by X402_FACILITATOR_TIMEOUT_MS; an answer that is not the API's (another status
// with no such body, a body off the schema) is FacilitatorUnavailable, as a timeout is. A refusal
// the facilitator answers with a non-2xx status but a VerifyResponse / SettleResponse body is its
// answer (as @x402/core's HTTPFacilitatorClient reads it).
import { Effect, Layer, Schema } from "effect"
import { Facilitator, FacilitatorUnavailable } from "../../services/x402/ports.js"
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse
} from "../../schema/x402/x402.js"

type Operation = "verify" | "settle" | "supported"

/** One call of the facilitator API: its decoded answer, or why there is none. */
const call = <A>(
  url: string,
  timeoutMs: number,
  operation: Operation,
  schema: Schema.Decoder<A>,
  body?: unknown
): Effect.Effect<A, FacilitatorUnavailable> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${url}/${operation}`, {
        method: body === undefined ? "GET" : "POST",
        headers: body === undefined ? { accept: "application/json" } : { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: "error",
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
      })
      const text = await response.text()
      return { status: response.status, text }
    },
    catch: (e) =>
      new FacilitatorUnavailable({
        operation,
        reason:
          e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")
            ? `no answer within ${timeoutMs} ms`
            : `could not be reached: ${e instanceof Error ? e.message : String(e)}`
      })
  }).pipe(
    Effect.flatMap(({ status, text }) => {
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return Effect.fail(
          new FacilitatorUnavailable({ operation, reason: `answered ${status} without JSON: ${text.slice(0, 200)}` })
        )
      }
      return Schema.decodeUnknownEffect(schema)(json).pipe(
        Effect.mapError(
          () =>
            new FacilitatorUnavailable({ operation, reason: `answered ${status}, not the API's ${operation} answer` })
        )
      )
    })
  )

const request = (payload: PaymentPayload, requirements: PaymentRequirements) => ({
  x402Version: payload.x402Version,
  paymentPayload: payload,
  paymentRequirements: requirements
})

/** The facilitator at `url`. */
export const httpFacilitator = (url: string, timeoutMs: number) =>
  Layer.succeed(
    Facilitator,
    Facilitator.of({
      verify: (payload, requirements) => call(url, timeoutMs, "verify", VerifyResponse, request(payload, requirements)),
      settle: (payload, requirements) => call(url, timeoutMs, "settle", SettleResponse, request(payload, requirements)),
      supported: call(url, timeoutMs, "supported", SupportedResponse)
    })
  )
