// Payments endpoints: the processor webhook (Stripe-signed events, raw body) and the public
// status of a knowledge purchase.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { InvalidInput, NotFound, StorageUnavailable } from "../../schema/errors.js"
import { CheckoutSessionId, InvalidSignature, PurchaseStatus, StripeEventEnvelope, WebhookAck } from "../../schema/payments.js"

export const WEBHOOK_PATH = "/api/payments/webhook"

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    // The payload is for the document only: the handler reads the raw body (handleRaw), since the
    // signature covers its exact bytes.
    HttpApiEndpoint.post("webhook", WEBHOOK_PATH, {
      headers: Schema.Struct({ "stripe-signature": Schema.optional(Schema.String) }),
      payload: StripeEventEnvelope,
      success: WebhookAck,
      error: [InvalidSignature, InvalidInput, StorageUnavailable]
    })
      .annotate(OpenApi.Summary, "Payment processor events (Stripe format, Stripe-Signature verified over the raw body)")
      .annotate(
        OpenApi.Description,
        "Point the processor's webhook here. 400 for a missing, malformed, stale (over 300 s) or wrong signature; 200 for every verified event, a replayed event id included (acknowledged and ignored)."
      )
  )
  .add(
    HttpApiEndpoint.get("purchaseStatus", "/api/payments/purchases/:sessionId", { params: Schema.Struct({ sessionId: CheckoutSessionId }), success: PurchaseStatus, error: [InvalidInput, NotFound, StorageUnavailable] })
      .annotate(OpenApi.Summary, "Status of a knowledge purchase by checkout session id (same as publicApi.purchaseStatus)")
  ) {}
