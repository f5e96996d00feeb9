// Handlers for the orders group: decode → call Orders / Publishing → return.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Publishing } from "../../services/commerce/Publishing.js"
import { Api } from "../api.js"

export const OrdersLive = HttpApiBuilder.group(Api, "orders", (handlers) =>
  handlers.handle("rotateFulfilmentSecret", ({ params }) =>
    Effect.flatMap(CurrentCaller, (caller) =>
      Effect.flatMap(Publishing, (p) => p.rotateFulfilmentSecret(caller, params.id))
    )
  )
)
