// Access rules for procedures: public ones pass; authenticated ones take the same bearer keys
// (same permission and rate-limit rules as REST) or the dashboard session cookie.
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { Forbidden } from "../../schema/platform/errors.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { SESSION_COOKIE } from "../middleware/auth.js"
import { authenticateBearerWith, sessionCaller } from "../middleware/authLive.js"
import { ProcedureAuth } from "./adapter.js"

export const ProcedureAuthLive = Layer.effect(
  ProcedureAuth,
  Effect.gen(function* () {
    const keys = yield* Keys
    const limiter = yield* RateLimiter
    return {
      authorize: (access, request) => {
        if (access._tag === "public") return Effect.succeed(undefined)
        const cookie = request.cookies[SESSION_COOKIE]
        const useSession = request.headers.authorization === undefined && cookie !== undefined
        const resolve = useSession
          ? Effect.flatMap(sessionCaller(cookie).pipe(Effect.provideService(Keys, keys)), (caller) =>
              // A dashboard session acts for its account with every permission of its own agents.
              access.permission && !["invest", "acquire", "catalog:read"].includes(access.permission)
                ? Effect.fail(
                    new Forbidden({
                      message: `a dashboard session cannot use ${access.permission}; use an API key`,
                      permission: access.permission
                    })
                  )
                : Effect.succeed(caller)
            )
          : authenticateBearerWith(keys, limiter, request.headers.authorization, access.permission ?? null)
        return Effect.provideService(resolve, HttpServerRequest.HttpServerRequest, request)
      }
    }
  })
)
