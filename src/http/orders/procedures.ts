// The seller's order procedures on the tRPC wire: commerce.orders, commerce.order,
// commerce.deliverOrder, commerce.failOrder. A key acts as its agent; a dashboard session names one
// of its account's agents (agentId).
import { Effect, Schema } from "effect"
import { AgentId } from "../../schema/keys/keys.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import { DeliverBody, FailBody, OrdersPage, OrderView, toOrderView } from "../../schema/orders/orders.js"
import { type Caller, CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { Orders } from "../../services/purchases/Orders.js"
import type { Transactor } from "../../services/platform/Db.js"
import { authenticated, mutation, query, type Procedure } from "../trpc/procedure.js"
import { Id } from "../commerce/params.js"
import { toOrdersPage } from "./handlers.js"
import { OrdersQuery } from "./params.js"

const AsAgent = Schema.Struct({ agentId: Schema.optional(AgentId) })
const OrderId = Schema.Struct({ id: Id })

/** The agent a call acts for: the key's agent, or (for a session) the named agent of the account. */
const actingAgent = Effect.fnUntraced(function* (caller: Caller, agentId: string | undefined) {
  if (caller.agentId !== undefined) {
    if (agentId !== undefined && agentId !== caller.agentId) {
      return yield* new InvalidInput({ message: "agentId: a key acts only as its own agent", field: "agentId" })
    }
    return caller.agentId
  }
  if (agentId === undefined) {
    return yield* new InvalidInput({
      message: "agentId: a dashboard session must name one of its agents",
      field: "agentId"
    })
  }
  return (yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))).id
})
const acting = (agentId: string | undefined) => Effect.flatMap(CurrentCaller, (caller) => actingAgent(caller, agentId))

export const orderProcedures = {
  "commerce.orders": query({
    description: "Orders for your services, oldest first; waitMs holds an empty first page until the next order",
    access: authenticated("commerce:sell"),
    output: OrdersPage,
    input: Schema.Struct({ ...OrdersQuery.fields, ...AsAgent.fields }),
    handler: ({ agentId, ...params }) =>
      Effect.flatMap(acting(agentId), (id) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.list(id, params), toOrdersPage(id)))
      )
  }),
  "commerce.order": query({
    description: "One order, as its seller or its buyer sees it",
    access: authenticated("commerce:read"),
    output: OrderView,
    input: Schema.Struct({ ...OrderId.fields, ...AsAgent.fields }),
    handler: ({ agentId, id }) =>
      Effect.flatMap(acting(agentId), (me) => Effect.flatMap(Orders, (o) => Effect.map(o.get(me, id), toOrderView(me))))
  }),
  "commerce.deliverOrder": mutation({
    description: "Deliver an order's output (paid at once); the same delivery again answers the same",
    access: authenticated("commerce:sell"),
    output: OrderView,
    input: Schema.Struct({ ...OrderId.fields, ...DeliverBody.fields, ...AsAgent.fields }),
    handler: ({ agentId, id, ...body }) =>
      Effect.flatMap(acting(agentId), (me) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.deliver(me, id, body), toOrderView(me)))
      )
  }),
  "commerce.failOrder": mutation({
    description: "Fail an order you cannot deliver: the buyer is refunded in full",
    access: authenticated("commerce:sell"),
    output: OrderView,
    input: Schema.Struct({ ...OrderId.fields, ...FailBody.fields, ...AsAgent.fields }),
    handler: ({ agentId, id, ...body }) =>
      Effect.flatMap(acting(agentId), (me) =>
        Effect.flatMap(Orders, (o) => Effect.map(o.fail(me, id, body), toOrderView(me)))
      )
  })
} satisfies Record<string, Procedure<Orders | Keys | CurrentCaller | Transactor>>
