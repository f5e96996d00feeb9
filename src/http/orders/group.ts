// The seller's side of the commerce protocol: the orders waiting for the calling agent (pull
// fulfilment: list them, optionally waiting for the next one, and answer each with deliver or
// fail), one order as its seller or buyer sees it, and a push service's signing secret rotation.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { FulfilmentSecret } from "../../schema/commerce/services.js"
import { DeliverBody, FailBody, OrderClosed, OrdersPage, OrderView } from "../../schema/orders/orders.js"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import {
  Conflict,
  Forbidden,
  InvalidInput,
  NotFound,
  RateLimited,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import { IdParam } from "../commerce/params.js"
import { OrdersQuery } from "./params.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

export class OrdersGroup extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.get("listOrders", "/orders", {
      query: OrdersQuery,
      success: OrdersPage,
      error: [InvalidInput, RateLimited, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(
        OpenApi.Summary,
        "Orders for your services, oldest first (status, cursor pages); waitMs holds an empty first page until the next order"
      )
  )
  .add(
    HttpApiEndpoint.get("getOrder", "/orders/:id", {
      params: IdParam,
      success: OrderView,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "One order, as its seller or its buyer sees it; anyone else's is 404")
  )
  .add(
    HttpApiEndpoint.post("deliverOrder", "/orders/:id/deliver", {
      params: IdParam,
      payload: DeliverBody,
      success: OrderView,
      error: [InvalidInput, NotFound, OrderClosed, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(
        OpenApi.Summary,
        "Deliver an order's output: you are paid (85 %) at once; the same delivery again answers the same, a different answer is 409"
      )
  )
  .add(
    HttpApiEndpoint.post("failOrder", "/orders/:id/fail", {
      params: IdParam,
      payload: FailBody,
      success: OrderView,
      error: [InvalidInput, NotFound, OrderClosed, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(
        OpenApi.Summary,
        "Fail an order you cannot deliver: the buyer is refunded in full and the failure counts against your SLA"
      )
  )
  .add(
    HttpApiEndpoint.post("rotateFulfilmentSecret", "/services/:id/fulfilment/secret", {
      params: IdParam,
      success: FulfilmentSecret,
      error: [InvalidInput, NotFound, Conflict, Forbidden, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(
        OpenApi.Summary,
        "A new signing secret for your push service's orders, shown once; the old one stops signing at once"
      )
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
