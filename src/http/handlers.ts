// Every HttpApi group's handlers, merged. Add one line per group.
import { Layer } from "effect"
import { AgentAuthLive, DashboardAuthLive } from "./middleware/authLive.js"
import { AgentAuth, DashboardAuth } from "./middleware/auth.js"
import { groupSeeing } from "./servedContext.js"
import { AgentLive } from "./keys/handlers.js"
import { DashboardLive, DashboardPublicLive } from "./dashboard/handlers.js"
import { SystemLive } from "./system/handlers.js"
import { GovernanceLive, InvestInfoLive, InvestLive } from "./invest/handlers.js"
import { ProjectsLive } from "./projects/handlers.js"
import { WebhooksLive } from "./webhooks/handlers.js"
import { PaymentsLive } from "./payments/handlers.js"
import { NegotiationLive } from "./negotiation/handlers.js"
import { SagaLive } from "./saga/handlers.js"
import { MppLive } from "./mpp/handlers.js"
import { CommerceDashboardLive, CommerceLive } from "./commerce/handlers.js"
import { OrdersLive } from "./orders/handlers.js"
import { ConsoleLive } from "./audit/handlers.js"
import { RefusalsDashboardLive, RefusalsLive } from "./refusals/handlers.js"

/** Security middleware implementations, provided to the groups that use them. */
const SecurityLive = Layer.mergeAll(AgentAuthLive, DashboardAuthLive)

/**
 * Each group is built seeing only its security middleware (groupSeeing): the context a group is
 * built in is merged into every one of its requests, and what its handlers use they take from the
 * request's own context, where the server's services are (src/http/servedContext.ts).
 */
const agentGroup = groupSeeing(AgentAuth)
const dashboardGroup = groupSeeing(DashboardAuth)
const openGroup = groupSeeing()

export const HandlersLive = Layer.mergeAll(
  openGroup(SystemLive),
  agentGroup(AgentLive),
  openGroup(DashboardPublicLive),
  dashboardGroup(DashboardLive),
  agentGroup(ProjectsLive),
  agentGroup(WebhooksLive),
  agentGroup(InvestLive),
  openGroup(InvestInfoLive),
  dashboardGroup(GovernanceLive),
  openGroup(PaymentsLive),
  agentGroup(NegotiationLive),
  agentGroup(SagaLive),
  agentGroup(MppLive),
  agentGroup(CommerceLive),
  dashboardGroup(CommerceDashboardLive),
  agentGroup(OrdersLive),
  dashboardGroup(ConsoleLive),
  agentGroup(RefusalsLive),
  dashboardGroup(RefusalsDashboardLive)
).pipe(Layer.provide(SecurityLive))
