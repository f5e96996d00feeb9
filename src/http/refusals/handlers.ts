// Handlers of the refusals routes: the owner's list is the account's (an agent of another account
// is 404); an agent key reads only its own agent's refusals.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { Refusals } from "../../services/refusals/Refusals.js"
import { Api } from "../api.js"

export const RefusalsDashboardLive = HttpApiBuilder.group(Api, "refusalsDashboard", (handlers) =>
  handlers.handle(
    "refusals",
    Effect.fnUntraced(function* ({ query }) {
      const caller = yield* CurrentCaller
      if (query.agentId !== undefined)
        yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, query.agentId!))
      return yield* Effect.flatMap(Refusals, (r) => r.list(caller.accountId, query))
    })
  )
)

export const RefusalsLive = HttpApiBuilder.group(Api, "refusals", (handlers) =>
  handlers.handle("refusals", ({ query }) =>
    Effect.flatMap(CurrentCaller, (caller) =>
      Effect.flatMap(Refusals, (r) => r.list(caller.accountId, { ...query, agentId: caller.agentId! }))
    )
  )
)
