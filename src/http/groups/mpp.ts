// Micropayment protocol (spec §4.4, §7, §8): discovery, health and pay-per-request over HTTP 402 (docs/mpp.md).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { InvalidInput, NotFound } from "../../schema/errors.js"
import { PolicyViolation } from "../../schema/commerce.js"
import {
  ApprovalRequired,
  ChargeBelowMinimum,
  InvokeBody,
  InvokeResult,
  InvokeUrlParams,
  MppDiscovery,
  MppHealth,
  NotPayPerRequest,
  PaymentRequired,
  SellerFailed
} from "../../schema/mpp.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

const IdParam = Schema.Struct({ id: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(100))) })

export class MppGroup extends HttpApiGroup.make("mpp")
  .add(
    HttpApiEndpoint.get("discovery", "/mpp")
      .addSuccess(MppDiscovery)
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Micropayment protocol discovery: status, methods, per-request pricing over HTTP 402, minimum charge")
  )
  .add(
    HttpApiEndpoint.get("health", "/mpp/health")
      .addSuccess(MppHealth)
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Micropayment protocol health: storage round trip, ledger sample of recent paid calls, credit method")
  )
  .add(
    HttpApiEndpoint.post("invoke", "/services/:id/invoke")
      .setPath(IdParam)
      .setUrlParams(InvokeUrlParams)
      .setHeaders(Schema.Struct({ "payment-authorization": Schema.optional(Schema.String) }))
      .setPayload(InvokeBody)
      .addSuccess(InvokeResult)
      .addError(PaymentRequired)
      .addError(ChargeBelowMinimum)
      .addError(NotPayPerRequest)
      .addError(SellerFailed)
      .addError(PolicyViolation)
      .addError(ApprovalRequired)
      .addError(NotFound)
      .addError(InvalidInput)
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Call a per_call service, paid per request: 402 with a Payment challenge, then retry with Payment-Authorization for the result and a Payment-Receipt"
      )
  )
  .middleware(AgentAuth)
  .prefix("/api/v1/agent/commerce") {}
