// The seller's side of the commerce protocol: the orders waiting for the calling agent (pull
// fulfilment: list them, optionally waiting for the next one, and answer each with deliver or
// fail), one order as its seller or buyer sees it, and a push service's signing secret rotation.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { FulfilmentSecret } from "../../schema/commerce/services.js"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { Conflict, Forbidden, InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import { IdParam } from "../commerce/params.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

export class OrdersGroup extends HttpApiGroup.make("orders")
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
