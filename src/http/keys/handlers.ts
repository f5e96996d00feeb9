// Handlers for the agent group: /me.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { Api } from "../api.js"

export const AgentLive = HttpApiBuilder.group(Api, "agent", (handlers) =>
  handlers.handle(
    "me",
    Effect.fnUntraced(function* () {
      const caller = yield* CurrentCaller
      const keys = yield* Keys
      // The key and agent authentication just resolved, and the standing it just counted: no reads.
      const { key, agent } = yield* keys.describeKey(caller.keyId!).pipe(Effect.orDie)
      const rateLimit = caller.rateLimit ?? (yield* Effect.flatMap(RateLimiter, (l) => l.peek(`key:${key.id}`)))
      return {
        key: {
          id: key.id,
          name: key.name,
          prefix: key.prefix,
          permissions: key.permissions,
          createdAt: key.createdAt,
          expiresAt: key.expiresAt,
          lastUsedAt: key.lastUsedAt
        },
        agent: { id: agent.id, name: agent.name, organization: agent.organization },
        accountId: caller.accountId,
        rateLimit
      }
    })
  )
)
