// Dashboard JSON endpoints: sign up/in/out, agents, their API keys and webhook health (session cookie auth).
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { DASHBOARD_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { Email, IsoTime } from "../../schema/platform/common.js"
import { UpdateWalletBody } from "../../schema/commerce/wallets.js"
import {
  Conflict,
  IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  RateLimited,
  Unauthorized,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import { Account, Agent, ApiKeyView, PermissionGrant } from "../../schema/keys/keys.js"
import { WebhookConfig } from "../../schema/webhooks/endpoint.js"
import { DashboardAuth } from "../middleware/auth.js"

const Password = Schema.String.pipe(
  Schema.check(Schema.isMinCodePoints(10, { message: "must have at least 10 characters" })),
  Schema.check(Schema.isMaxCodePoints(200))
)
const Name = Schema.String.pipe(
  Schema.check(Schema.isTrimmed()),
  Schema.check(Schema.isMinCodePoints(1)),
  Schema.check(Schema.isMaxCodePoints(120))
)

export const SignUpBody = Schema.Struct({ email: Email, password: Password, name: Name })
export const SignInBody = Schema.Struct({
  email: Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(254))),
  password: Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(200)))
})
export const SessionResponse = Schema.Struct({ account: Account, expiresAt: Schema.String })
export const CreateAgentBody = Schema.Struct({
  name: Name,
  organization: Schema.optional(Schema.NullOr(Name)),
  /** The wallet's first policy (the fields of PATCH …/wallet); absent fields keep the defaults (docs/dashboard.md). */
  wallet: Schema.optional(UpdateWalletBody)
})
export const CreateKeyBody = Schema.Struct({
  name: Name,
  permissions: Schema.Array(PermissionGrant).pipe(
    Schema.check(Schema.isMinLength(1)),
    Schema.check(Schema.isMaxLength(20))
  ),
  expiresAt: Schema.optional(Schema.NullOr(IsoTime))
})
export const CreatedKey = Schema.Struct({
  key: ApiKeyView,
  /** The plaintext key. Shown once; only its hash is stored. */
  secret: Schema.String
})

const AgentIdParam = Schema.String.pipe(
  Schema.check(Schema.isMaxCodePoints(68)),
  Schema.check(Schema.isPattern(/^agt_[A-Za-z0-9_-]{1,64}$/u, { message: "must be an agent id (agt_…)" }))
)
const KeyIdParam = Schema.String.pipe(
  Schema.check(Schema.isMaxCodePoints(68)),
  Schema.check(Schema.isPattern(/^key_[A-Za-z0-9_-]{1,64}$/u, { message: "must be a key id (key_…)" }))
)

export class DashboardPublicGroup extends HttpApiGroup.make("dashboardAuth")
  .add(
    HttpApiEndpoint.post("signUp", "/signup", {
      payload: SignUpBody,
      success: SessionResponse.pipe(HttpApiSchema.status(201)),
      error: [Conflict, InvalidInput, RateLimited, StorageUnavailable]
    }).annotate(OpenApi.Summary, "Create an account and sign in (sets the session cookie)")
  )
  .add(
    HttpApiEndpoint.post("signIn", "/signin", {
      payload: SignInBody,
      success: SessionResponse,
      error: [InvalidInput, Unauthorized, RateLimited, StorageUnavailable]
    }).annotate(OpenApi.Summary, "Sign in (sets the session cookie)")
  )
  .add(
    HttpApiEndpoint.post("signOut", "/signout", {
      success: HttpApiSchema.NoContent,
      error: [InvalidInput, StorageUnavailable]
    }).annotate(OpenApi.Summary, "Sign out (clears the session cookie)")
  )
  .prefix(DASHBOARD_PREFIX) {}

export class DashboardGroup extends HttpApiGroup.make("dashboard")
  .add(
    HttpApiEndpoint.get("session", "/session", {
      success: Schema.Struct({ account: Account }),
      error: [InvalidInput, StorageUnavailable]
    }).annotate(OpenApi.Summary, "The signed-in account")
  )
  .add(
    HttpApiEndpoint.get("listAgents", "/agents", {
      success: Schema.Array(Agent),
      error: [InvalidInput, StorageUnavailable]
    }).annotate(OpenApi.Summary, "The account's agents")
  )
  .add(
    HttpApiEndpoint.post("createAgent", "/agents", {
      payload: CreateAgentBody,
      success: Agent.pipe(HttpApiSchema.status(201)),
      error: [InvalidInput, IdempotencyKeyReused, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "Create an agent (it owns keys, a wallet, a reputation, projects), its wallet's first limits with it"
    )
  )
  .add(
    HttpApiEndpoint.get("listKeys", "/keys", {
      success: Schema.Array(ApiKeyView),
      error: [InvalidInput, StorageUnavailable]
    }).annotate(OpenApi.Summary, "The account's API keys (prefix, permissions, last use; never the secret)")
  )
  .add(
    HttpApiEndpoint.post("createKey", "/agents/:agentId/keys", {
      params: Schema.Struct({ agentId: AgentIdParam }),
      payload: CreateKeyBody,
      success: CreatedKey.pipe(HttpApiSchema.status(201)),
      error: [NotFound, InvalidInput, Conflict, IdempotencyKeyReused, StorageUnavailable]
    }).annotate(OpenApi.Summary, "Create an API key for an agent; the secret is shown once")
  )
  .add(
    HttpApiEndpoint.get("agentWebhook", "/agents/:agentId/webhook", {
      params: Schema.Struct({ agentId: AgentIdParam }),
      success: Schema.NullOr(WebhookConfig),
      error: [NotFound, InvalidInput, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "The agent's webhook as GET /webhook shows it (state, backlog, last error, next attempt); null when none"
    )
  )
  .add(
    HttpApiEndpoint.post("revokeKey", "/keys/:keyId/revoke", {
      params: Schema.Struct({ keyId: KeyIdParam }),
      success: ApiKeyView,
      error: [InvalidInput, NotFound, StorageUnavailable]
    }).annotate(OpenApi.Summary, "Revoke a key (takes effect on the next request)")
  )
  .middleware(DashboardAuth)
  .prefix(DASHBOARD_PREFIX) {}
