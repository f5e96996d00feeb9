// Security middleware tags: bearer keys for the agent API and commerce, a session cookie for the
// dashboard, and the per-endpoint permission annotation the bearer middleware enforces.
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { Context } from "effect"
import { Forbidden, RateLimited, StorageUnavailable, Unauthorized } from "../../schema/platform/errors.js"
import type { Permission } from "../../schema/keys/keys.js"
import { CurrentCaller } from "../../services/keys/Caller.js"

/**
 * The permission an endpoint needs (`null`: any valid key). Annotate every endpoint behind
 * AgentAuth: `.annotate(RequiredPermission, "commerce:buy")`. The table in docs/permissions.md is
 * generated from these annotations and a test walks it route by route.
 */
export class RequiredPermission extends Context.Service<RequiredPermission, Permission | null>()(
  "agent-commerce/RequiredPermission"
) {}

/**
 * An endpoint an x402 payment may call without an API key (docs/x402.md): with x402 configured and
 * no key presented, AgentAuth lets it through with a keyless caller (`via: "x402"`), the payment
 * naming the payer.
 */
export class X402Payable extends Context.Service<X402Payable, true>()("agent-commerce/X402Payable") {}

export const SESSION_COOKIE = "ac_session"

/** Bearer API key: 401 (missing/unknown/revoked/expired), 403 (permission), 429 (rate limit). */
export class AgentAuth extends HttpApiMiddleware.Service<AgentAuth, { provides: CurrentCaller; requires: never }>()(
  "agent-commerce/AgentAuth",
  {
    error: [Unauthorized, Forbidden, RateLimited, StorageUnavailable],
    security: { bearer: HttpApiSecurity.bearer }
  }
) {}

/** Dashboard session cookie (HttpOnly, SameSite=Strict). */
export class DashboardAuth extends HttpApiMiddleware.Service<
  DashboardAuth,
  { provides: CurrentCaller; requires: never }
>()("agent-commerce/DashboardAuth", {
  error: [Unauthorized, StorageUnavailable],
  security: { session: HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }) }
}) {}
