// Agent API v1 (spec §4.3): key information. Other agent routes join this group as they land.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AGENT_API_PREFIX } from "../../schema/platform/routes.js"
import { StorageUnavailable, InvalidInput } from "../../schema/platform/errors.js"
import { Schema } from "effect"
import { Permission } from "../../schema/keys/keys.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

export const RateLimitWindow = Schema.Struct({
  name: Schema.String,
  limit: Schema.Int,
  used: Schema.Int,
  remaining: Schema.Int,
  resetSeconds: Schema.Int,
  windowSeconds: Schema.Int
})

export const MeResponse = Schema.Struct({
  key: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    prefix: Schema.String,
    permissions: Schema.Array(Permission),
    createdAt: Schema.String,
    expiresAt: Schema.NullOr(Schema.String),
    lastUsedAt: Schema.NullOr(Schema.String)
  }),
  agent: Schema.Struct({ id: Schema.String, name: Schema.String, organization: Schema.NullOr(Schema.String) }),
  accountId: Schema.String,
  rateLimit: Schema.Array(RateLimitWindow)
})

export class AgentGroup extends HttpApiGroup.make("agent")
  .add(
    HttpApiEndpoint.get("me", "/me", { success: MeResponse, error: [InvalidInput, StorageUnavailable] })
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Key information, permissions and rate-limit standing")
  )
  .middleware(AgentAuth)
  .prefix(AGENT_API_PREFIX) {}
