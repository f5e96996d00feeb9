// Refusals: the debits the wallet refused (a limit, an allow-list, the balance, the freeze), for the
// account owner across its agents (dashboard session) and for an agent about itself (its key).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { COMMERCE_PREFIX, DASHBOARD_PREFIX } from "../../schema/platform/routes.js"
import { AgentRefusalsUrlParams, RefusalsPage, RefusalsUrlParams } from "../../schema/refusals/refusals.js"
import { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import { AgentAuth, DashboardAuth, RequiredPermission } from "../middleware/auth.js"

/** The owner's list: every agent of the account, or one (`agentId`), newest first. */
export class RefusalsDashboardGroup extends HttpApiGroup.make("refusalsDashboard")
  .add(
    HttpApiEndpoint.get("refusals", "/refusals", {
      query: RefusalsUrlParams,
      success: RefusalsPage,
      error: [InvalidInput, NotFound, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "Purchases and other debits the wallet refused, across the account's agents or for one, newest first, each with its reason"
    )
  )
  .middleware(DashboardAuth)
  .prefix(`${DASHBOARD_PREFIX}/commerce`) {}

/** The agent's own refusals (its key's agent), newest first. */
export class RefusalsGroup extends HttpApiGroup.make("refusals")
  .add(
    HttpApiEndpoint.get("refusals", "/refusals", {
      query: AgentRefusalsUrlParams,
      success: RefusalsPage,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "This agent's refused purchases and debits, newest first, each with its reason")
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
