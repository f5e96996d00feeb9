// Commerce saga (spec §3, §4.4): the five-step purchase and its step log (docs/saga.md).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { InvalidInput, NotFound } from "../../schema/errors.js"
import { Saga, SagaBody } from "../../schema/saga.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

const IdParam = Schema.Struct({ id: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(100))) })

export class SagaGroup extends HttpApiGroup.make("saga")
  .add(
    HttpApiEndpoint.post("saga", "/saga")
      .setPayload(SagaBody)
      .addSuccess(Saga, { status: 201 })
      .addError(NotFound)
      .addError(InvalidInput)
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(OpenApi.Summary, "Buy through the five-step saga quote → escrow → deliver → settle → confirm; ends completed or compensated")
  )
  .add(
    HttpApiEndpoint.get("getSaga", "/saga/:id")
      .setPath(IdParam)
      .addSuccess(Saga)
      .addError(NotFound)
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "One of your sagas: status, each step's state and timestamps, failure, settlement")
  )
  .middleware(AgentAuth)
  .prefix("/api/v1/agent/commerce") {}
