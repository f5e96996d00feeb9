// Agent API v1 (spec §4.3): catalog, evaluation, acquisition, project creation, build status, sessions.
import { PolicyViolation } from "../../schema/commerce/wallets.js"
import { ProcessorUnavailable } from "../../schema/payments/payments.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi, HttpApiSchema } from "effect/http-api"
import { AGENT_API_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { Cursor, PageLimit, QueryInt, QueryNumber } from "../../schema/platform/common.js"
import {
  Conflict,
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import { InsufficientFunds } from "../../schema/ledger/ledger.js"
import { TemplateCategory } from "../../schema/marketplace/marketplace.js"
import {
  AcquisitionStarted,
  AgentSession,
  SessionExpired,
  SessionStepRequest,
  SessionStepResponse
} from "../../schema/sessions/sessions.js"
import {
  CatalogPage,
  CatalogProjectDetail,
  CatalogSort,
  EvaluateBody,
  Evaluation,
  SortOrder
} from "../../schema/projects/catalog.js"
import { CreateProjectBody, Project, ProjectQuotaExceeded } from "../../schema/projects/builder.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

const NonNegativeIntString = QueryInt(0, Number.MAX_SAFE_INTEGER)

export const CatalogUrlParams = Schema.Struct({
  category: Schema.optional(TemplateCategory),
  minPriceCents: Schema.optional(NonNegativeIntString),
  maxPriceCents: Schema.optional(NonNegativeIntString),
  minRating: Schema.optional(QueryNumber({ minimum: 0, maximum: 5 })),
  q: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  sort: Schema.optional(CatalogSort),
  order: Schema.optional(SortOrder),
  limit: Schema.optional(PageLimit),
  cursor: Schema.optional(Cursor)
})

const IdParam = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})

export const AcquireBody = Schema.Struct({
  projectId: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})

export class ProjectsGroup extends HttpApiGroup.make("projects")
  .add(
    HttpApiEndpoint.get("catalog", "/catalog", {
      query: CatalogUrlParams,
      success: CatalogPage,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "catalog:read")
      .annotate(
        OpenApi.Summary,
        "List marketplace projects: filter by category, price, rating, text; sort; cursor pages"
      )
  )
  .add(
    HttpApiEndpoint.get("catalogProject", "/catalog/:id", {
      params: IdParam,
      success: CatalogProjectDetail,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "catalog:read")
      .annotate(OpenApi.Summary, "Full project detail: metrics, template, creator, price, revenue share")
  )
  .add(
    HttpApiEndpoint.post("evaluate", "/evaluate", {
      payload: EvaluateBody,
      success: Evaluation,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "evaluate")
      .annotate(OpenApi.Summary, "Evaluate a project: score 0–100, recommendation and reasons (docs/evaluation.md)")
  )
  .add(
    HttpApiEndpoint.post("acquire", "/acquire", {
      payload: AcquireBody,
      success: AcquisitionStarted.pipe(HttpApiSchema.status(201)),
      error: [NotFound, ProcessorUnavailable, Conflict, InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "acquire")
      .annotate(OpenApi.Summary, "Acquire a project: starts a payment-processor checkout for its asking price")
  )
  .add(
    HttpApiEndpoint.post("create", "/create", {
      payload: CreateProjectBody,
      success: Project.pipe(HttpApiSchema.status(202)),
      error: [
        InvalidInput,
        ProjectQuotaExceeded,
        InsufficientFunds,
        PolicyViolation,
        IdempotencyKeyReused,
        StorageUnavailable
      ]
    })
      .annotate(RequiredPermission, "create")
      .annotate(
        OpenApi.Summary,
        "Create a project from a template or a description plus inputs; the build runs in the background"
      )
  )
  .add(
    HttpApiEndpoint.get("status", "/status/:id", {
      params: IdParam,
      success: Project,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "create")
      .annotate(OpenApi.Summary, "Build and deploy status of one of your projects: state, progress, step log")
  )
  .add(
    HttpApiEndpoint.post("session", "/session", {
      payload: SessionStepRequest,
      success: SessionStepResponse,
      error: [
        NotFound,
        Conflict,
        SessionExpired,
        Forbidden,
        InvalidInput,
        ProjectQuotaExceeded,
        InsufficientFunds,
        PolicyViolation,
        ProcessorUnavailable,
        StorageUnavailable
      ]
    })
      .annotate(RequiredPermission, null)
      .annotate(
        OpenApi.Summary,
        "Multi-step session: start, browse, evaluate, then acquire or create (docs/sessions.md)"
      )
  )
  .add(
    HttpApiEndpoint.get("getSession", "/session/:id", {
      params: IdParam,
      success: AgentSession,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "One of your sessions: state, accepted next actions, context, step log, expiry")
  )
  .middleware(AgentAuth)
  .prefix(AGENT_API_PREFIX) {}
