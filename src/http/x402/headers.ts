// x402's headers on the paid call (docs/x402.md), encoded with @x402/core's own helpers:
// PAYMENT-REQUIRED on a 402 (base64 PaymentRequired), PAYMENT-RESPONSE on every answer to a
// PAYMENT-SIGNATURE (base64 SettleResponse, also when it failed).
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http"
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

/** The 402's PAYMENT-REQUIRED (never cached). */
export const paymentRequiredHeaders = (required: PaymentRequired) =>
  addHeaders({
    [PAYMENT_REQUIRED_HEADER.toLowerCase()]: encodePaymentRequiredHeader(required as unknown as CorePaymentRequired),
    "cache-control": "no-store"
  })

/** PAYMENT-RESPONSE: what became of the payment (private to this client). */
export const paymentResponseHeaders = (settle: SettleResponse) =>
  addHeaders({
    [PAYMENT_RESPONSE_HEADER.toLowerCase()]: encodePaymentResponseHeader(settle as unknown as CoreSettleResponse),
    "cache-control": "private"
  })
