// Handlers for the negotiation group: open, respond, list, get.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Negotiations } from "../../services/negotiation/Negotiation.js"
import { Api } from "../api.js"
import { requestIdempotency } from "../requestIdempotency.js"

export const NegotiationLive = HttpApiBuilder.group(Api, "negotiation", (handlers) =>
  handlers
    .handle("negotiate", ({ payload }) =>
      Effect.flatMap(Effect.all([CurrentCaller, Negotiations, requestIdempotency]), ([caller, n, keyed]) =>
        n.open(caller, payload, keyed)
      )
    )
    .handle("respond", ({ params: path, payload }) =>
      Effect.flatMap(Effect.all([CurrentCaller, Negotiations, requestIdempotency]), ([caller, n, keyed]) =>
        n.respond(caller, path.id, payload, keyed)
      )
    )
    .handle("negotiations", ({ query: urlParams }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Negotiations), ([caller, n]) => n.list(caller.agentId!, urlParams))
    )
    .handle("negotiation", ({ params: path }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Negotiations), ([caller, n]) => n.get(caller.agentId!, path.id))
    )
)
