// Handlers for the orders group: decode → call Orders / Publishing → the order as its parties see it.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { toOrderView } from "../../schema/orders/orders.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Publishing } from "../../services/commerce/Publishing.js"
import { Orders } from "../../services/purchases/Orders.js"
import { Api } from "../api.js"

/** Every route of the group is behind AgentAuth, so the caller always has an agent. */
const agent = Effect.map(CurrentCaller, (caller) => caller.agentId!)

/** A page of orders as the wire shows it. */
export const toOrdersPage = (page: {
  readonly orders: ReadonlyArray<Parameters<typeof toOrderView>[0]>
  readonly nextCursor: string | null
}) => ({ orders: page.orders.map(toOrderView), nextCursor: page.nextCursor })

export const OrdersLive = HttpApiBuilder.group(Api, "orders", (handlers) =>
  handlers
    .handle("listOrders", ({ query }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Orders, (o) => Effect.map(o.list(id, query), toOrdersPage)))
    )
    .handle("getOrder", ({ params }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Orders, (o) => Effect.map(o.get(id, params.id), toOrderView)))
    )
    .handle("deliverOrder", ({ params, payload }) =>
      Effect.flatMap(agent, (id) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.deliver(id, params.id, payload), toOrderView))
      )
    )
    .handle("failOrder", ({ params, payload }) =>
      Effect.flatMap(agent, (id) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.fail(id, params.id, payload), toOrderView))
      )
    )
    .handle("rotateFulfilmentSecret", ({ params }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Publishing, (p) => p.rotateFulfilmentSecret(caller, params.id))
      )
    )
)
