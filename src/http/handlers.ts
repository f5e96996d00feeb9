// Every HttpApi group's handlers, merged. Add one line per group.
import { Layer } from "effect"
import { AgentAuthLive, DashboardAuthLive } from "./middleware/authLive.js"
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

export const HandlersLive = Layer.mergeAll(
  SystemLive,
  AgentLive,
  DashboardPublicLive,
  DashboardLive,
  ProjectsLive,
  WebhooksLive,
  InvestLive,
  InvestInfoLive,
  GovernanceLive,
  PaymentsLive,
  NegotiationLive,
  SagaLive,
  MppLive,
  CommerceLive,
  CommerceDashboardLive,
  OrdersLive,
  ConsoleLive,
  RefusalsLive,
  RefusalsDashboardLive
).pipe(Layer.provide(SecurityLive))
