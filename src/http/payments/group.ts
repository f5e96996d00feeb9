// Payments endpoints: the processor webhook (Stripe-signed events, raw body) and the public
// status of a knowledge purchase.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import {
  CheckoutSessionId,
  InvalidSignature,
  PurchaseStatus,
  StripeEventEnvelope,
  WebhookAck
} from "../../schema/payments/payments.js"
import { AccessContentInput, KnowledgeContent } from "../../schema/knowledge/knowledge.js"

export const WEBHOOK_PATH = "/api/payments/webhook"

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    // The payload is for the document only: the handler reads the raw body (handleRaw), since the
    // signature covers its exact bytes.
    HttpApiEndpoint.post("webhook", WEBHOOK_PATH, {
      headers: Schema.Struct({ "stripe-signature": Schema.String }),
      payload: StripeEventEnvelope,
      success: WebhookAck,
      error: [InvalidSignature, InvalidInput, StorageUnavailable]
    })
      .annotate(
        OpenApi.Summary,
        "Payment processor events (Stripe format, Stripe-Signature verified over the raw body)"
      )
      .annotate(
        OpenApi.Description,
        "Point the processor's webhook here. 400 for a missing, malformed, stale (over 300 s) or wrong signature; 200 for every verified event, a replayed event id included (acknowledged and ignored)."
      )
  )
  .add(
    HttpApiEndpoint.get("purchaseStatus", "/api/payments/purchases/:sessionId", {
      params: Schema.Struct({ sessionId: CheckoutSessionId }),
      success: PurchaseStatus,
      error: [InvalidInput, NotFound, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "Status of a knowledge purchase by checkout session id (same as publicApi.purchaseStatus)"
    )
  )
  .add(
    // The session id travels in a header, not the URL: addresses end up in histories and proxy logs.
    HttpApiEndpoint.get("accessContent", "/api/payments/access/:accessId", {
      params: Schema.Struct({ accessId: AccessContentInput.fields.accessId }),
      headers: Schema.Struct({ "checkout-session-id": AccessContentInput.fields.sessionId }),
      success: KnowledgeContent,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(
        OpenApi.Summary,
        "Read a paid knowledge product: the access id (from purchaseStatus) with its checkout session id in the Checkout-Session-Id header"
      )
      .annotate(
        OpenApi.Description,
        "Only the buyer holds both ids. An unknown or unpaid access, or a session id that is not the one the access was paid in, is 404 (the same answer for each). Same as publicApi.accessContent."
      )
  ) {}
