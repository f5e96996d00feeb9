// Micropayment protocol (spec §4.4, §7, §8): discovery, health and pay-per-request over HTTP 402 (docs/mpp.md).
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import { PolicyViolation } from "../../schema/commerce/wallets.js"
import {
  ApprovalRequired,
  ChargeBelowMinimum,
  NotPayPerRequest,
  PaymentRequired,
  SellerFailed
} from "../../schema/mpp/problems.js"
import { InvokeBody, InvokeResult, InvokeUrlParams, PendingInvokeResult } from "../../schema/mpp/challenge.js"
import { MppDiscovery, MppHealth } from "../../schema/mpp/protocol.js"
import { AgentAuth, RequiredPermission, X402Payable } from "../middleware/auth.js"
import { PaymentConflict, PaymentView, SettlementPendingResult, X402PaymentRequired } from "../../schema/x402/x402.js"

const IdParam = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})

export class MppGroup extends HttpApiGroup.make("mpp")
  .add(
    HttpApiEndpoint.get("discovery", "/mpp", { success: MppDiscovery, error: [InvalidInput, StorageUnavailable] })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Micropayment protocol discovery: status, methods, per-request pricing over HTTP 402, minimum charge"
      )
  )
  .add(
    HttpApiEndpoint.get("health", "/mpp/health", { success: MppHealth, error: [InvalidInput, StorageUnavailable] })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Micropayment protocol health: storage round trip, ledger sample of recent paid calls, credit method"
      )
  )
  .add(
    HttpApiEndpoint.post("invoke", "/services/:id/invoke", {
      params: IdParam,
      query: InvokeUrlParams,
      headers: Schema.Struct({
        "payment-authorization": Schema.optional(Schema.String),
        "payment-signature": Schema.optional(Schema.String)
      }),
      payload: InvokeBody,
      // Pending first: the answer takes 202 exactly when the seller has not answered yet.
      success: [
        PendingInvokeResult.pipe(HttpApiSchema.status(202)),
        SettlementPendingResult.pipe(HttpApiSchema.status(202)),
        InvokeResult
      ],
      error: [
        PaymentRequired,
        X402PaymentRequired,
        PaymentConflict,
        ChargeBelowMinimum,
        NotPayPerRequest,
        SellerFailed,
        PolicyViolation,
        ApprovalRequired,
        NotFound,
        InvalidInput,
        StorageUnavailable
      ]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(X402Payable, true)
      .annotate(
        OpenApi.Summary,
        "Call a per_call service, paid per request: 402 with a Payment challenge (and, with x402 configured, PAYMENT-REQUIRED), then retry with Payment-Authorization (credits) or PAYMENT-SIGNATURE (x402, no API key needed): 200 with the result and a Payment-Receipt / PAYMENT-RESPONSE, or 202 while the seller has not answered (price held in escrow; follow the transaction) or while an x402 settlement is unconfirmed"
      )
  )
  .add(
    HttpApiEndpoint.get("x402Payment", "/x402/payments/:id", {
      params: IdParam,
      headers: Schema.Struct({ "x-payment-token": Schema.optional(Schema.String) }),
      success: PaymentView,
      error: [NotFound, InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(X402Payable, true)
      .annotate(
        OpenApi.Summary,
        "An x402 payment as its payer reads it (status, the purchase, the settle and refund transactions on the chain): with the X-Payment-Token of its PAYMENT-RESPONSE (no API key needed), or the key of the agent it paid for"
      )
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
