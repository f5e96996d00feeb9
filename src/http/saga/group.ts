// Commerce saga (spec §3, §4.4): the five-step purchase and its step log (docs/saga.md).
import { HttpApiEndpoint, HttpApiGroup, OpenApi, HttpApiSchema } from "effect/http-api"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { IdempotencyKeyReused, InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import { Saga, SagaBody } from "../../schema/saga/saga.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

const IdParam = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})

export class SagaGroup extends HttpApiGroup.make("saga")
  .add(
    HttpApiEndpoint.post("saga", "/saga", {
      payload: SagaBody,
      success: Saga.pipe(HttpApiSchema.status(201)),
      error: [NotFound, InvalidInput, IdempotencyKeyReused, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Buy through the five-step saga quote → escrow → deliver → settle → confirm; ends completed or compensated"
      )
  )
  .add(
    HttpApiEndpoint.get("getSaga", "/saga/:id", {
      params: IdParam,
      success: Saga,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "One of your sagas: status, each step's state and timestamps, failure, settlement")
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
