// Handlers for the agent group: /me, written by meResponse (the bytes MeResponse's encoding writes).
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { Api } from "../api.js"
import { meResponse } from "./meResponse.js"

export const AgentLive = HttpApiBuilder.group(Api, "agent", (handlers) =>
  handlers.handle(
    "me",
    Effect.fnUntraced(function* () {
      const caller = yield* CurrentCaller
      const keys = yield* Keys
      // The key and agent authentication just resolved, and the standing it just counted: no reads.
      const { key, agent } = yield* keys.describeKey(caller.keyId!).pipe(Effect.orDie)
      const rateLimit = caller.rateLimit ?? (yield* Effect.flatMap(RateLimiter, (l) => l.peek(`key:${key.id}`)))
      return meResponse({ key, agent, accountId: caller.accountId, rateLimit })
    })
  )
)
