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
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

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
      headers: Schema.Struct({ "payment-authorization": Schema.optional(Schema.String) }),
      payload: InvokeBody,
      // Pending first: the answer takes 202 exactly when the seller has not answered yet.
      success: [PendingInvokeResult.pipe(HttpApiSchema.status(202)), InvokeResult],
      error: [
        PaymentRequired,
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
      .annotate(
        OpenApi.Summary,
        "Call a per_call service, paid per request: 402 with a Payment challenge, then retry with Payment-Authorization: 200 with the result and a Payment-Receipt, or 202 while the seller has not answered (price held in escrow; follow the transaction)"
      )
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
