// Handlers for the negotiation group: open, respond, list, get.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Negotiations } from "../../services/negotiation/Negotiation.js"
import { Api } from "../api.js"

export const NegotiationLive = HttpApiBuilder.group(Api, "negotiation", (handlers) =>
  handlers
    .handle("negotiate", ({ payload }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Negotiations), ([caller, n]) => n.open(caller, payload))
    )
    .handle("respond", ({ params: path, payload }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Negotiations), ([caller, n]) => n.respond(caller, path.id, payload))
    )
    .handle("negotiations", ({ query: urlParams }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Negotiations), ([caller, n]) => n.list(caller.agentId!, urlParams))
    )
    .handle("negotiation", ({ params: path }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Negotiations), ([caller, n]) => n.get(caller.agentId!, path.id))
    )
)
