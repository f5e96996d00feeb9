// The per-address limit on anonymous writes (docs/keys.md): sign-up, knowledge checkouts and
// checkouts started from a dashboard session spend one of the client address's budget; past it,
// 429 with Retry-After, before any work is done.
import { Effect, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { RateLimiter } from "../services/keys/RateLimiter.js"
import { securityEvent } from "./securityLog.js"

export const limitAnonymousWrite = Effect.gen(function* () {
  const request = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
  const address = Option.match(request, {
    onNone: () => "unknown",
    onSome: (r) => Option.getOrElse(r.remoteAddress, () => "unknown")
  })
  const limiter = yield* RateLimiter
  yield* limiter.takeAnonymous(address).pipe(
    Effect.tapError((e) =>
      e._tag === "RateLimited"
        ? Effect.andThen(
            securityEvent("anonymous.throttled", { reason: e.message }),
            Option.match(request, {
              onNone: () => Effect.void,
              onSome: (r) =>
                HttpEffect.appendPreResponseHandler((_req, res) =>
                  Effect.succeed(HttpServerResponse.setHeader(res, "retry-after", String(e.retryAfterSeconds)))
                ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, r))
            })
          )
        : Effect.void
    )
  )
})
