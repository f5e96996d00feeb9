// Every HttpApi group's handlers, merged. Add one line per group.
import { Layer } from "effect"
import { AgentAuthLive, DashboardAuthLive } from "../middleware/authLive.js"
import { AgentLive } from "./agent.js"
import { DashboardLive, DashboardPublicLive } from "./dashboard.js"
import { SystemLive } from "./system.js"
import { GovernanceLive, InvestInfoLive, InvestLive } from "./invest.js"
import { ProjectsLive } from "./projects.js"
import { WebhooksLive } from "./webhooks.js"
import { PaymentsLive } from "./payments.js"
import { NegotiationLive } from "./negotiation.js"
import { SagaLive } from "./saga.js"
import { MppLive } from "./mpp.js"
import { CommerceDashboardLive, CommerceLive } from "./commerce.js"

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
  CommerceDashboardLive
).pipe(Layer.provide(SecurityLive))
