// Implementations of the security middleware: resolve the caller, enforce the route's permission
// and the key's rate limit, and put WWW-Authenticate / RateLimit headers on the response.
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { Forbidden, Unauthorized } from "../../schema/platform/errors.js"
import type { Permission } from "../../schema/keys/keys.js"
import { type Caller, CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { rateLimitHeaders, type WindowStanding } from "../../services/keys/rateLimitPolicy.js"
import { AgentAuth, DashboardAuth, RequiredPermission, X402Payable } from "./auth.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { securityEvent } from "../securityLog.js"
import { noteCaller } from "../requestLog.js"

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i

const addHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeaders(res, headers)))

/**
 * The 401's challenges: Bearer (the usual place of the key), and the X-API-Key alternative for a
 * caller whose Authorization carries a Payment credential (docs/mpp.md).
 */
const challenge = (description: string) =>
  addHeaders({
    "www-authenticate":
      `Bearer realm="agent-api", error="invalid_token", error_description="${description.replace(/"/g, "'")}", ` +
      `ApiKey realm="agent-api", header="X-API-Key", description="send the key in X-API-Key when Authorization carries a Payment credential"`
  })

/**
 * The API key a request presents: `Authorization: Bearer <key>`, or `X-API-Key: <key>` when
 * Authorization is absent or carries another scheme (a Payment credential).
 */
export const presentedKey = (authorization: string | undefined, apiKey: string | undefined): string | undefined => {
  const match = BEARER.exec(authorization ?? "")
  if (match) return match[1]
  const key = apiKey?.trim()
  return key !== undefined && key !== "" && !/\s/.test(key) ? key : undefined
}

/**
 * Authenticates a bearer key, spends one request of its rate limit and checks `permission`
 * (undefined: no permission check). Shared by the REST middleware and the procedure adapter; the
 * services are passed in (no per-request context copy on the hot path).
 * `apiKey`: the X-API-Key header, where the route accepts it (the agent REST API).
 */
export const authenticateBearerWith = Effect.fnUntraced(function* (
  keys: Context.Service.Shape<typeof Keys>,
  limiter: Context.Service.Shape<typeof RateLimiter>,
  authorization: string | undefined,
  permission: Permission | null | undefined,
  apiKey?: string
) {
  const key = presentedKey(authorization, apiKey)
  if (key === undefined) {
    yield* challenge("missing bearer token")
    return yield* Effect.fail(
      new Unauthorized({
        message:
          "missing API key: send Authorization: Bearer <key> (or X-API-Key: <key> when Authorization carries a Payment credential)"
      })
    )
  }
  const auth = yield* keys
    .authenticate(key)
    .pipe(Effect.tapError((e) => (e._tag === "Unauthorized" ? challenge(e.message) : Effect.void)))
  // Known from here on, even when the rate limit or the permission refuses the call: the access log names the agent.
  yield* noteCaller(auth.caller)
  const standing = yield* limiter.take(`key:${auth.key.id}`).pipe(
    Effect.tapError((e) =>
      e._tag === "RateLimited"
        ? addHeaders({
            "retry-after": String(e.retryAfterSeconds),
            ...rateLimitHeaders((e as unknown as { standing: ReadonlyArray<WindowStanding> }).standing ?? [])
          })
        : Effect.void
    )
  )
  yield* addHeaders(rateLimitHeaders(standing))
  if (permission && !auth.caller.permissions.has(permission)) {
    yield* securityEvent("access.denied", {
      accountId: auth.caller.accountId,
      agentId: auth.caller.agentId,
      keyId: auth.caller.keyId,
      permission
    })
    return yield* Effect.fail(new Forbidden({ message: `this key lacks the ${permission} permission`, permission }))
  }
  const caller: Caller = { ...auth.caller, rateLimit: standing }
  return caller
})

/** An endpoint's permission annotation (or its group's), read once per endpoint rather than per request. */
const permissions = new WeakMap<object, Permission | null>()
const permissionOf = (
  endpoint: { readonly annotations: Context.Context<never> },
  group: { readonly annotations: Context.Context<never> }
): Permission | null => {
  let permission = permissions.get(endpoint)
  if (permission === undefined) {
    permission = Option.getOrElse(
      Option.orElse(Context.getOption(endpoint.annotations, RequiredPermission), () =>
        Context.getOption(group.annotations, RequiredPermission)
      ),
      () => null
    )
    permissions.set(endpoint, permission)
  }
  return permission
}

export const AgentAuthLive = Layer.effect(
  AgentAuth,
  Effect.gen(function* () {
    const keys = yield* Keys
    const limiter = yield* RateLimiter
    const x402 = Option.isSome((yield* AppConfig).x402)
    return AgentAuth.of({
      // The raw header is re-read and checked (the security hands over an empty credential for a
      // missing or malformed header); the permission is the endpoint's own annotation.
      bearer: Effect.fnUntraced(function* (httpEffect, { endpoint, group }) {
        const request = yield* HttpServerRequest.HttpServerRequest
        const permission = permissionOf(endpoint, group)
        if (
          x402 &&
          presentedKey(request.headers.authorization, request.headers["x-api-key"]) === undefined &&
          Option.isSome(Context.getOption(endpoint.annotations, X402Payable))
        ) {
          // No key: the x402 payment names the payer (the handler answers 402 PAYMENT-REQUIRED without one).
          // Rate-limited per address as a key is per key.
          const address = Option.getOrElse(request.remoteAddress, () => "unknown")
          const standing = yield* limiter
            .take(`x402:${address}`)
            .pipe(
              Effect.tapError((e) =>
                e._tag === "RateLimited" ? addHeaders({ "retry-after": String(e.retryAfterSeconds) }) : Effect.void
              )
            )
          yield* addHeaders(rateLimitHeaders(standing))
          const keyless: Caller = {
            accountId: "",
            agentId: undefined,
            keyId: undefined,
            permissions: new Set(),
            via: "x402",
            rateLimit: standing
          }
          return yield* Effect.provideService(httpEffect, CurrentCaller, keyless)
        }
        const caller = yield* authenticateBearerWith(
          keys,
          limiter,
          request.headers.authorization,
          permission,
          request.headers["x-api-key"]
        )
        return yield* Effect.provideService(httpEffect, CurrentCaller, caller)
      })
    })
  })
)

export const sessionCaller = Effect.fnUntraced(function* (token: string) {
  const keys = yield* Keys
  const account = yield* keys.sessionAccount(token)
  return {
    accountId: account.id,
    agentId: undefined,
    keyId: undefined,
    permissions: new Set(),
    via: "session"
  } satisfies Caller
})

export const DashboardAuthLive = Layer.effect(
  DashboardAuth,
  Effect.gen(function* () {
    const keys = yield* Keys
    return DashboardAuth.of({
      session: (httpEffect, { credential }) =>
        Effect.flatMap(
          sessionCaller(Redacted.value(credential)).pipe(Effect.provideService(Keys, keys), Effect.tap(noteCaller)),
          (caller) => Effect.provideService(httpEffect, CurrentCaller, caller)
        )
    })
  })
)
