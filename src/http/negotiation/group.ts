// Commerce negotiation (spec §4.4): propose, respond by turn, poll (docs/negotiation.md).
import { HttpApiEndpoint, HttpApiGroup, OpenApi, HttpApiSchema } from "effect/http-api"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import {
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import {
  InvalidOffer,
  Negotiation,
  NegotiateBody,
  NegotiationClosed,
  NegotiationPage,
  RespondBody
} from "../../schema/negotiation/negotiation.js"
import { NegotiationsQuery } from "../../schema/negotiation/query.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

const IdParam = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})

export class NegotiationGroup extends HttpApiGroup.make("negotiation")
  .add(
    HttpApiEndpoint.post("negotiate", "/negotiate", {
      payload: NegotiateBody,
      success: Negotiation.pipe(HttpApiSchema.status(201)),
      error: [NotFound, InvalidInput, InvalidOffer, IdempotencyKeyReused, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:negotiate")
      .annotate(
        OpenApi.Summary,
        "Propose a price for a service tier; the seller answers within 30 s, itself or automatically (docs/negotiation.md)"
      )
  )
  .add(
    HttpApiEndpoint.post("respond", "/negotiate/:id/respond", {
      params: IdParam,
      payload: RespondBody,
      success: Negotiation,
      error: [
        InvalidInput,
        NotFound,
        NegotiationClosed,
        InvalidOffer,
        Forbidden,
        IdempotencyKeyReused,
        StorageUnavailable
      ]
    })
      .annotate(RequiredPermission, "commerce:negotiate")
      .annotate(
        OpenApi.Summary,
        "Accept, reject or counter, as the buyer or (with commerce:sell) the seller, when it is your turn (409 otherwise; a counter needs counterPriceCents)"
      )
  )
  .add(
    HttpApiEndpoint.get("negotiations", "/negotiations", {
      query: NegotiationsQuery,
      success: NegotiationPage,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Your negotiations as buyer or seller, newest first, cursor pages; role and status narrow them (a seller's inbox: role=seller&status=awaiting_seller)"
      )
  )
  .add(
    HttpApiEndpoint.get("negotiation", "/negotiations/:id", {
      params: IdParam,
      success: Negotiation,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "One negotiation: status, whose turn, offers history, the seller's answer due time, the agreed price and its expiry"
      )
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
