// Publishing: a seller's writes to its own services as the API takes them. A push url passes the
// webhooks' address guard (WebhookTransport.check: https, and every address its host resolves to
// public) before the catalog stores it, so the platform never posts orders into a private network.
// DNS happens here, outside the catalog's unit of work.
import { Context, Effect, Layer } from "effect"
import type { FulfilmentBody, PublishServiceBody, UpdateServiceBody } from "../../schema/commerce/services.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import type { Caller } from "../keys/Caller.js"
import { traced } from "../platform/Tracing.js"
import { WebhookTransport } from "../webhooks/WebhookTransport.js"
import { Catalog, type CatalogService } from "./Catalog.js"

export interface PublishingService {
  readonly publish: CatalogService["publish"]
  readonly update: CatalogService["update"]
  readonly rotateFulfilmentSecret: CatalogService["rotateFulfilmentSecret"]
}

const make = Effect.gen(function* () {
  const catalog = yield* Catalog
  const transport = yield* WebhookTransport

  /** The push url's address check, its refusal naming the body's field. */
  const checkPushUrl = (fulfilment: FulfilmentBody | undefined) =>
    fulfilment?.mode === "push" && fulfilment.url !== undefined
      ? transport
          .check(fulfilment.url.trim())
          .pipe(
            Effect.mapError(
              (e) => new InvalidInput({ message: `fulfilment.url: ${e.message}`, field: "fulfilment.url" })
            )
          )
      : Effect.void

  return Publishing.of({
    publish: (caller: Caller, body: PublishServiceBody) =>
      Effect.andThen(checkPushUrl(body.fulfilment), catalog.publish(caller, body)).pipe(traced("Publishing.publish")),
    update: (caller: Caller, id: string, body: UpdateServiceBody) =>
      Effect.andThen(checkPushUrl(body.fulfilment), catalog.update(caller, id, body)).pipe(traced("Publishing.update")),
    rotateFulfilmentSecret: catalog.rotateFulfilmentSecret
  })
})

export class Publishing extends Context.Service<Publishing, PublishingService>()("agent-commerce/Publishing") {
  static readonly make = make
  static readonly layer = Layer.effect(Publishing, make).pipe(Layer.provide(Catalog.layer))
}
