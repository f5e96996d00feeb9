// x402's headers on the paid call (docs/x402.md), encoded with @x402/core's own helpers:
// PAYMENT-REQUIRED on a 402 (base64 PaymentRequired), PAYMENT-RESPONSE on every answer to a
// PAYMENT-SIGNATURE (base64 SettleResponse, also when it failed).
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import type { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http"
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  type PaymentRequired,
  type SettleResponse
} from "../../schema/x402/x402.js"

const addHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeaders(res, headers)))

type CorePaymentRequired = Parameters<typeof encodePaymentRequiredHeader>[0]
type CoreSettleResponse = Parameters<typeof encodePaymentResponseHeader>[0]

// @x402/core is loaded with the first x402 header written, not at startup (a server without x402 never does).
let core: Promise<typeof import("@x402/core/http")> | undefined
const x402Core = Effect.promise(() => (core ??= import("@x402/core/http")))

/** The 402's PAYMENT-REQUIRED (never cached). */
export const paymentRequiredHeaders = (required: PaymentRequired) =>
  Effect.flatMap(x402Core, ({ encodePaymentRequiredHeader }) =>
    addHeaders({
      [PAYMENT_REQUIRED_HEADER.toLowerCase()]: encodePaymentRequiredHeader(required as unknown as CorePaymentRequired),
      "cache-control": "no-store"
    })
  )

/** PAYMENT-RESPONSE: what became of the payment (private to this client). */
export const paymentResponseHeaders = (settle: SettleResponse) =>
  Effect.flatMap(x402Core, ({ encodePaymentResponseHeader }) =>
    addHeaders({
      [PAYMENT_RESPONSE_HEADER.toLowerCase()]: encodePaymentResponseHeader(settle as unknown as CoreSettleResponse),
      "cache-control": "private"
    })
  )

/**
 * An x402 header (PAYMENT-REQUIRED, PAYMENT-RESPONSE) of a route's answer, as the in-process
 * adapters (MCP, A2A) read it: base64 JSON, decoded; undefined when absent or not a JSON object.
 */
export const decodedX402Header = (headers: Headers, name: string): Record<string, unknown> | undefined => {
  const header = headers.get(name)
  if (!header) return undefined
  try {
    const value = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as unknown
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}
