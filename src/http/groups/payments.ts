// Payments endpoints: the processor webhook (Stripe-signed events, raw body) and the public
// status of a knowledge purchase.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { InvalidInput, NotFound } from "../../schema/errors.js"
import { CheckoutSessionId, InvalidSignature, PurchaseStatus, StripeEventEnvelope, WebhookAck } from "../../schema/payments.js"

export const WEBHOOK_PATH = "/api/payments/webhook"

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.post("webhook", WEBHOOK_PATH)
      .setHeaders(Schema.Struct({ "stripe-signature": Schema.optional(Schema.String) }))
      // Documentation only: the handler reads the raw body, since the signature covers its exact bytes.
      .setPayload(StripeEventEnvelope)
      .addSuccess(WebhookAck)
      .addError(InvalidSignature)
      .addError(InvalidInput)
      .annotate(OpenApi.Summary, "Payment processor events (Stripe format, Stripe-Signature verified over the raw body)")
      .annotate(
        OpenApi.Description,
        "Point the processor's webhook here. 400 for a missing, malformed, stale (over 300 s) or wrong signature; 200 for every verified event, a replayed event id included (acknowledged and ignored)."
      )
  )
  .add(
    HttpApiEndpoint.get("purchaseStatus", "/api/payments/purchases/:sessionId")
      .setPath(Schema.Struct({ sessionId: CheckoutSessionId }))
      .addSuccess(PurchaseStatus)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Status of a knowledge purchase by checkout session id (same as publicApi.purchaseStatus)")
  ) {}
