// System endpoints: liveness and readiness.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { StorageUnavailable, InvalidInput } from "../../schema/platform/errors.js"
import { Schema } from "effect"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  storage: Schema.Literals(["embedded", "memory", "postgres"]),
  payments: Schema.Literals(["fake", "stripe"]),
  version: Schema.String
})

export class SystemGroup extends HttpApiGroup.make("system").add(
  HttpApiEndpoint.get("health", "/health", { success: Health, error: [InvalidInput, StorageUnavailable] }).annotate(
    OpenApi.Summary,
    "Liveness and readiness"
  )
) {}
