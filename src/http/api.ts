// The REST surface: one HttpApi, from which the OpenAPI document and the typed client derive.
import { HttpApi, OpenApi } from "effect/http-api"
import { AgentGroup } from "./keys/group.js"
import { DashboardGroup, DashboardPublicGroup } from "./dashboard/group.js"
import { SystemGroup } from "./system/group.js"
import { GovernanceGroup, InvestGroup, InvestInfoGroup } from "./invest/group.js"
import { ProjectsGroup } from "./projects/group.js"
import { WebhooksGroup } from "./webhooks/group.js"
import { PaymentsGroup } from "./payments/group.js"
import { NegotiationGroup } from "./negotiation/group.js"
import { SagaGroup } from "./saga/group.js"
import { MppGroup } from "./mpp/group.js"
import { CommerceGroup } from "./commerce/group.js"
import { CommerceDashboardGroup } from "./commerce/dashboardGroup.js"
import { OrdersGroup } from "./orders/group.js"
import { ConsoleGroup } from "./audit/group.js"
import { RefusalsDashboardGroup, RefusalsGroup } from "./refusals/group.js"

export class Api extends HttpApi.make("agent-commerce")
  .add(SystemGroup)
  .add(AgentGroup)
  .add(DashboardPublicGroup)
  .add(DashboardGroup)
  .add(ProjectsGroup)
  .add(WebhooksGroup)
  .add(InvestGroup)
  .add(InvestInfoGroup)
  .add(GovernanceGroup)
  .add(PaymentsGroup)
  .add(NegotiationGroup)
  .add(SagaGroup)
  .add(MppGroup)
  .add(CommerceGroup)
  .add(CommerceDashboardGroup)
  .add(OrdersGroup)
  .add(ConsoleGroup)
  .add(RefusalsGroup)
  .add(RefusalsDashboardGroup)
  // A body field the schema does not know is refused (400 naming it), as the document's
  // `additionalProperties: false` says: an agent's typo must not be silently dropped.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
  .annotateMerge(
    OpenApi.annotations({
      title: "Agent Commerce API",
      version: "1.0.0",
      description: "Agent API v1, the AI2AIC commerce protocol 1.0.0, and the platform's public surface."
    })
  ) {}
