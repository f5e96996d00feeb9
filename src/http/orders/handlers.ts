// Handlers for the orders group: decode → call Orders / Publishing → the order as its parties see it.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { type Order, toOrderView } from "../../schema/orders/orders.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Publishing } from "../../services/commerce/Publishing.js"
import { Orders } from "../../services/purchases/Orders.js"
import { Api } from "../api.js"

/** Every route of the group is behind AgentAuth, so the caller always has an agent. */
const agent = Effect.map(CurrentCaller, (caller) => caller.agentId!)

/** A page of a seller's orders as the wire shows them to it. */
export const toOrdersPage =
  (viewer: string) => (page: { readonly orders: ReadonlyArray<Order>; readonly nextCursor: string | null }) => ({
    orders: page.orders.map(toOrderView(viewer)),
    nextCursor: page.nextCursor
  })

export const OrdersLive = HttpApiBuilder.group(Api, "orders", (handlers) =>
  handlers
    .handle("listOrders", ({ query }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Orders, (o) =>
          Effect.map(
            o.list(caller.agentId!, { ...query, waiter: caller.keyId ?? caller.agentId! }),
            toOrdersPage(caller.agentId!)
          )
        )
      )
    )
    .handle("getOrder", ({ params }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Orders, (o) => Effect.map(o.get(id, params.id), toOrderView(id))))
    )
    .handle("deliverOrder", ({ params, payload }) =>
      Effect.flatMap(agent, (id) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.deliver(id, params.id, payload), toOrderView(id)))
      )
    )
    .handle("failOrder", ({ params, payload }) =>
      Effect.flatMap(agent, (id) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.fail(id, params.id, payload), toOrderView(id)))
      )
    )
    .handle("rotateFulfilmentSecret", ({ params }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Publishing, (p) => p.rotateFulfilmentSecret(caller, params.id))
      )
    )
)
