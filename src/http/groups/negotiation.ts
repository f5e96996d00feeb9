// Commerce negotiation (spec §4.4): propose, respond by turn, poll (docs/negotiation.md).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Cursor, PageLimit } from "../../schema/common.js"
import { Forbidden, InvalidInput, NotFound } from "../../schema/errors.js"
import { InvalidOffer, Negotiation, NegotiateBody, NegotiationClosed, NegotiationPage, RespondBody } from "../../schema/negotiation.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

const IdParam = Schema.Struct({ id: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(100))) })

export class NegotiationGroup extends HttpApiGroup.make("negotiation")
  .add(
    HttpApiEndpoint.post("negotiate", "/negotiate")
      .setPayload(NegotiateBody)
      .addSuccess(Negotiation, { status: 201 })
      .addError(NotFound)
      .addError(InvalidInput)
      .addError(InvalidOffer)
      .annotate(RequiredPermission, "commerce:negotiate")
      .annotate(OpenApi.Summary, "Propose a price for a service tier; the seller answers automatically within 30 s (docs/negotiation.md)")
  )
  .add(
    HttpApiEndpoint.post("respond", "/negotiate/:id/respond")
      .setPath(IdParam)
      .setPayload(RespondBody)
      .addSuccess(Negotiation)
      .addError(NotFound)
      .addError(NegotiationClosed)
      .addError(InvalidOffer)
      .addError(Forbidden)
      .annotate(RequiredPermission, "commerce:negotiate")
      .annotate(OpenApi.Summary, "Accept, reject or counter, when it is your turn (409 otherwise; a counter needs counterPriceCents)")
  )
  .add(
    HttpApiEndpoint.get("negotiations", "/negotiations")
      .setUrlParams(Schema.Struct({ limit: Schema.optional(PageLimit), cursor: Schema.optional(Cursor) }))
      .addSuccess(NegotiationPage)
      .addError(InvalidInput)
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Your negotiations as buyer or seller, newest first, cursor pages")
  )
  .add(
    HttpApiEndpoint.get("negotiation", "/negotiations/:id")
      .setPath(IdParam)
      .addSuccess(Negotiation)
      .addError(NotFound)
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "One negotiation: status, whose turn, offers history, the seller's answer due time, the agreed price and its expiry")
  )
  .middleware(AgentAuth)
  .prefix("/api/v1/agent/commerce") {}
