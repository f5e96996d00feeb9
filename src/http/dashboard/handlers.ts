// Handlers for the dashboard JSON endpoints: each decodes, calls Keys, and sets the session cookie.
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { Transactor } from "../../services/platform/Db.js"
import { Wallet } from "../../services/wallet/Wallet.js"
import { Webhooks } from "../../services/webhooks/Webhooks.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { signInChecks } from "../../services/keys/rateLimitPolicy.js"
import { Api } from "../api.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { WriteReceipts } from "../../services/idempotency/WriteReceipts.js"
import { Conflict } from "../../schema/platform/errors.js"

const SECRET_SHOWN_ONCE =
  "the first request with this Idempotency-Key created the key; its secret is shown once and was not kept. " +
  "List your keys (GET /api/dashboard/keys) and revoke it if the secret was lost"
import { SESSION_COOKIE } from "../middleware/auth.js"
import { securityEvent } from "../securityLog.js"
import { limitAnonymousWrite } from "../anonymousLimit.js"

const setSessionCookie = (token: string, maxAgeSeconds: number) =>
  Effect.flatMap(AppConfig, (config) =>
    HttpEffect.appendPreResponseHandler((_req, res) =>
      HttpServerResponse.setCookie(res, SESSION_COOKIE, token, {
        httpOnly: true,
        // Strict: the cookie never rides on a request another site starts (CSRF), not even a link.
        sameSite: "strict",
        secure: config.production || config.baseUrl.startsWith("https://"),
        path: "/",
        maxAge: `${maxAgeSeconds} seconds`
      }).pipe(Effect.orElseSucceed(() => res))
    )
  )

export const DashboardPublicLive = HttpApiBuilder.group(Api, "dashboardAuth", (handlers) =>
  handlers
    .handle(
      "signUp",
      Effect.fnUntraced(function* ({ payload }) {
        yield* limitAnonymousWrite
        const keys = yield* Keys
        const account = yield* keys.signUp(payload)
        const session = yield* keys.startSession(account.id)
        yield* setSessionCookie(session.token, 7 * 24 * 3600)
        return { account, expiresAt: session.expiresAt }
      })
    )
    .handle(
      "signIn",
      Effect.fnUntraced(function* ({ payload }) {
        const keys = yield* Keys
        const limiter = yield* RateLimiter
        const request = yield* HttpServerRequest.HttpServerRequest
        const address = Option.getOrElse(request.remoteAddress, () => "unknown")
        const emailHash = createHash("sha256").update(payload.email.trim().toLowerCase()).digest("hex").slice(0, 32)
        const checks = signInChecks(emailHash, address)
        // The attempt takes a failure slot before the password is checked (given back if it succeeds):
        // guesses sent at once are held to the limit as well as guesses sent one by one.
        const result = yield* limiter
          .throttleFailures(
            checks,
            keys.signIn(payload).pipe(
              // The e-mail is not logged (it would say which addresses are tried); its hash prefix ties attempts together.
              Effect.tapError((e) =>
                e._tag === "Unauthorized"
                  ? securityEvent("signin.failed", { reason: `email#${emailHash.slice(0, 12)}` })
                  : Effect.void
              )
            ),
            (e) => e._tag === "Unauthorized"
          )
          .pipe(
            Effect.tapError((e) =>
              e._tag === "RateLimited"
                ? Effect.andThen(
                    securityEvent("signin.throttled", { reason: e.message }),
                    HttpEffect.appendPreResponseHandler((_req, res) =>
                      Effect.succeed(HttpServerResponse.setHeader(res, "retry-after", String(e.retryAfterSeconds)))
                    )
                  )
                : Effect.void
            )
          )
        yield* setSessionCookie(result.token, 7 * 24 * 3600)
        return { account: result.account, expiresAt: result.expiresAt }
      })
    )
    .handle(
      "signOut",
      Effect.fnUntraced(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const token = request.cookies[SESSION_COOKIE]
        if (token) yield* Effect.flatMap(Keys, (k) => k.signOut(token)).pipe(Effect.orDie)
        yield* setSessionCookie("", 0)
      })
    )
)

export const DashboardLive = HttpApiBuilder.group(Api, "dashboard", (handlers) =>
  handlers
    .handle(
      "session",
      Effect.fnUntraced(function* () {
        const caller = yield* CurrentCaller
        return { account: yield* Effect.flatMap(Keys, (k) => k.getAccount(caller.accountId)).pipe(Effect.orDie) }
      })
    )
    .handle(
      "listAgents",
      Effect.fnUntraced(function* () {
        const caller = yield* CurrentCaller
        return yield* Effect.flatMap(Keys, (k) => k.listAgents(caller.accountId))
      })
    )
    .handle(
      "createAgent",
      Effect.fnUntraced(function* ({ payload }) {
        const caller = yield* CurrentCaller
        const { wallet: limits, ...agent } = payload
        const keys = yield* Keys
        const wallet = yield* Wallet
        const { atomically } = yield* Transactor
        // The agent and its first limits in one unit of work: never an agent without the limits asked for.
        const write = atomically(
          Effect.gen(function* () {
            const created = yield* keys.createAgent(caller.accountId, agent)
            if (limits !== undefined) {
              yield* wallet
                .updatePolicy(created.id, limits, { byOwner: true, actorId: caller.accountId })
                .pipe(Effect.catchTag("Forbidden", Effect.die))
            }
            return created
          })
        )
        // With its write receipt: a retry whose answer was lost gets the same agent, not a second one.
        const ownAgent = (id: string) => keys.ownedAgent(caller.accountId, id).pipe(Effect.orDie)
        const request = { kind: "dashboard.createAgent", request: { account: caller.accountId, payload } }
        const keyed = yield* requestIdempotency
        return yield* (yield* WriteReceipts).once({ keyed, ...request, write, idOf: (a) => a.id, replay: ownAgent })
      })
    )
    .handle(
      "listKeys",
      Effect.fnUntraced(function* () {
        const caller = yield* CurrentCaller
        return yield* Effect.flatMap(Keys, (k) => k.listKeys(caller.accountId))
      })
    )
    .handle(
      "createKey",
      Effect.fnUntraced(function* ({ params: path, payload }) {
        const caller = yield* CurrentCaller
        // With its write receipt: the secret is shown once, so a retry whose answer was lost learns the key was made (409).
        const created = yield* (yield* WriteReceipts).once({
          keyed: yield* requestIdempotency,
          kind: "dashboard.createKey",
          request: { account: caller.accountId, agentId: path.agentId, payload },
          write: Effect.flatMap(Keys, (k) => k.createKey(caller.accountId, path.agentId, payload)),
          idOf: (c: { readonly key: { readonly id: string } }) => c.key.id,
          replay: (id) => Effect.fail(new Conflict({ message: `${SECRET_SHOWN_ONCE} (key ${id})`, state: "created" }))
        })
        yield* securityEvent("key.created", {
          accountId: caller.accountId,
          agentId: path.agentId,
          keyId: created.key.id,
          permission: created.key.permissions.join(",")
        })
        return created
      })
    )
    .handle(
      "agentWebhook",
      Effect.fnUntraced(function* ({ params: path }) {
        const caller = yield* CurrentCaller
        yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, path.agentId))
        // No endpoint is a normal state here (null), not an error.
        return yield* Effect.flatMap(Webhooks, (w) => w.getConfig(path.agentId)).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(null))
        )
      })
    )
    .handle(
      "revokeKey",
      Effect.fnUntraced(function* ({ params: path }) {
        const caller = yield* CurrentCaller
        const revoked = yield* Effect.flatMap(Keys, (k) => k.revokeKey(caller.accountId, path.keyId))
        yield* securityEvent("key.revoked", {
          accountId: caller.accountId,
          agentId: revoked.agentId,
          keyId: revoked.id
        })
        return revoked
      })
    )
)
