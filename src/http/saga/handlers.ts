// Handlers for the saga group: start (driven until it ends or waits) and get.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Sagas } from "../../services/saga/Saga.js"
import { Api } from "../api.js"

export const SagaLive = HttpApiBuilder.group(Api, "saga", (handlers) =>
  handlers
    .handle("saga", ({ payload }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Sagas), ([caller, s]) => s.start(caller, payload))
    )
    .handle("getSaga", ({ params: path }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Sagas), ([caller, s]) => s.get(caller.agentId!, path.id))
    )
)
