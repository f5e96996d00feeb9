// The commerce routes of the account owner's dashboard (session cookie): approvals across agents and
// the full wallet policy of each agent.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { DASHBOARD_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { ApprovalDecision } from "../../schema/commerce/approvals.js"
import { InsufficientCredits, PolicyViolation, UpdateWalletBody, WalletView } from "../../schema/commerce/wallets.js"
import {
  Conflict,
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import { NegotiationUnusable } from "../../schema/negotiation/negotiation.js"
import { DashboardAuth } from "../middleware/auth.js"
import { ApprovalParams, Id, IdParam } from "./params.js"
import { InboxPage } from "../../schema/audit/inbox.js"

const AgentParam = Schema.Struct({ agentId: Id })

/** The account owner's side (dashboard session): approvals and the full wallet policy of its agents. */
export class CommerceDashboardGroup extends HttpApiGroup.make("commerceDashboard")
  .add(
    HttpApiEndpoint.get("approvals", "/approvals", {
      query: ApprovalParams,
      success: InboxPage,
      error: [InvalidInput, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "The approvals inbox across the account's agents, newest first (status=pending for what waits), with agent, service and seller names, why it waits, and who decided when"
    )
  )
  .add(
    HttpApiEndpoint.post("approve", "/approvals/:id/approve", {
      params: IdParam,
      success: ApprovalDecision,
      error: [
        NotFound,
        Conflict,
        InvalidInput,
        Forbidden,
        PolicyViolation,
        InsufficientCredits,
        NegotiationUnusable,
        IdempotencyKeyReused,
        StorageUnavailable
      ]
    }).annotate(OpenApi.Summary, "Approve a pending purchase: it executes now (price and policy re-checked)")
  )
  .add(
    HttpApiEndpoint.post("decline", "/approvals/:id/decline", {
      params: IdParam,
      success: ApprovalDecision,
      error: [
        NotFound,
        Conflict,
        InvalidInput,
        Forbidden,
        PolicyViolation,
        InsufficientCredits,
        NegotiationUnusable,
        IdempotencyKeyReused,
        StorageUnavailable
      ]
    }).annotate(OpenApi.Summary, "Decline a pending purchase")
  )
  .add(
    HttpApiEndpoint.get("wallet", "/wallets/:agentId", {
      params: AgentParam,
      success: WalletView,
      error: [InvalidInput, NotFound, StorageUnavailable]
    }).annotate(OpenApi.Summary, "An agent's wallet: balance, policy, autonomy, spend")
  )
  .add(
    HttpApiEndpoint.patch("updateWallet", "/wallets/:agentId", {
      params: AgentParam,
      payload: UpdateWalletBody,
      success: WalletView,
      error: [NotFound, InvalidInput, Forbidden, IdempotencyKeyReused, StorageUnavailable]
    }).annotate(OpenApi.Summary, "Set an agent's wallet policy, including loosening limits and raising autonomy")
  )
  .middleware(DashboardAuth)
  .prefix(`${DASHBOARD_PREFIX}/commerce`) {}
