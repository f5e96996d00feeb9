// Handlers for the saga group: start (driven until it ends or waits) and get.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Sagas } from "../../services/saga/Saga.js"
import { Api } from "../api.js"
import { requestIdempotency } from "../requestIdempotency.js"

export const SagaLive = HttpApiBuilder.group(Api, "saga", (handlers) =>
  handlers
    .handle("saga", ({ payload }) =>
      Effect.flatMap(Effect.all([CurrentCaller, Sagas, requestIdempotency]), ([caller, s, keyed]) =>
        s.start(caller, payload, keyed)
      )
    )
    .handle("getSaga", ({ params: path }) =>
      Effect.flatMap(Effect.zip(CurrentCaller, Sagas), ([caller, s]) => s.get(caller.agentId!, path.id))
    )
)
