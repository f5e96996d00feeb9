// Marketplace catalog projects, evaluations, builder projects with their build state machine, and
// multi-step agent sessions (spec §1, §4.3).
import { Schema } from "effect"
import { Cents } from "../platform/common.js"
import { Template, TemplateCategory } from "../marketplace/marketplace.js"

// ---------------------------------------------------------------------------------------------
// Catalog

export const CatalogSort = Schema.Literals(["price", "rating", "mrr", "growth", "newest"])
export type CatalogSort = typeof CatalogSort.Type
export const SortOrder = Schema.Literals(["asc", "desc"])
export type SortOrder = typeof SortOrder.Type

export class ProjectMetrics extends Schema.Class<ProjectMetrics>("ProjectMetrics")({
  /** Monthly recurring revenue, integer cents. */
  mrrCents: Cents,
  /** Month-over-month revenue growth, percent (may be negative). */
  monthlyGrowthPct: Schema.Number,
  activeUsers: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Monthly customer churn, percent. */
  churnPct: Schema.Number.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  ageMonths: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))
}) {}

/** A project listed in the marketplace catalog (the list view). */
export class CatalogProject extends Schema.Class<CatalogProject>("CatalogProject")({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  templateId: Schema.String,
  category: TemplateCategory,
  creatorName: Schema.String,
  askingPriceCents: Cents,
  currency: Schema.Literal("usd"),
  /** The marketplace rating of the project's template (0–5, one decimal). */
  rating: Schema.Number,
  metrics: ProjectMetrics,
  createdAt: Schema.String
}) {}

export const RevenueShare = Schema.Struct({
  creator: Schema.Literal("85%"),
  platform: Schema.Literal("15%"),
  creatorPercent: Schema.Literal(85),
  platformPercent: Schema.Literal(15)
})
export const revenueShare = { creator: "85%", platform: "15%", creatorPercent: 85, platformPercent: 15 } as const

/** Everything an acquirer weighs: metrics, template, creator, price, revenue share. */
export class CatalogProjectDetail extends Schema.Class<CatalogProjectDetail>("CatalogProjectDetail")({
  ...CatalogProject.fields,
  template: Template,
  techStack: Schema.Array(Schema.String),
  creator: Schema.Struct({ name: Schema.String, revenueSharePercent: Schema.Literal(85) }),
  price: Schema.Struct({ askingPriceCents: Cents, currency: Schema.Literal("usd") }),
  revenueShare: RevenueShare,
  /** Annualised revenue (MRR × 12), integer cents. */
  annualRevenueCents: Cents,
  /** Asking price ÷ annual revenue, two decimals; null without revenue. */
  revenueMultiple: Schema.NullOr(Schema.Number)
}) {}

export const CatalogPage = Schema.Struct({
  data: Schema.Array(CatalogProject),
  nextCursor: Schema.NullOr(Schema.String)
})
export type CatalogPage = typeof CatalogPage.Type

/** Filters of GET /catalog, decoded. */
export interface CatalogQuery {
  readonly category?: TemplateCategory
  readonly minPriceCents?: number
  readonly maxPriceCents?: number
  readonly minRating?: number
  readonly q?: string
  readonly sort: CatalogSort
  readonly order: SortOrder
  readonly limit: number
  /** Keyset position: the sort value and id of the last row of the previous page. */
  readonly after?: { readonly value: number | string; readonly id: string }
}

/** The stored listing row (seeded from src/seed/projects.ts). */
export interface CatalogListing {
  readonly id: string
  readonly templateId: string
  readonly category: TemplateCategory
  readonly name: string
  readonly description: string
  readonly creatorName: string
  readonly askingPriceCents: number
  readonly rating: number
  readonly mrrCents: number
  readonly monthlyGrowthPct: number
  readonly activeUsers: number
  readonly churnPct: number
  readonly ageMonths: number
  readonly techStack: ReadonlyArray<string>
  readonly createdAt: string
}

// ---------------------------------------------------------------------------------------------
// Evaluation

export const Recommendation = Schema.Literals(["strong_buy", "buy", "hold", "avoid"])
export type Recommendation = typeof Recommendation.Type

export const EvaluationReason = Schema.Struct({
  factor: Schema.Literals(["revenue", "growth", "churn", "valuation", "traction", "maturity"]),
  points: Schema.Int,
  maxPoints: Schema.Int,
  detail: Schema.String
})
export type EvaluationReason = typeof EvaluationReason.Type

export class Evaluation extends Schema.Class<Evaluation>("Evaluation")({
  projectId: Schema.String,
  score: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100 }))),
  recommendation: Recommendation,
  reasons: Schema.Array(EvaluationReason),
  /** Which evaluator produced it (`rules-v1` is the documented deterministic rule). */
  evaluator: Schema.String,
  metrics: ProjectMetrics,
  askingPriceCents: Cents,
  evaluatedAt: Schema.String
}) {}

export const EvaluateBody = Schema.Struct({ projectId: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100))) })

// ---------------------------------------------------------------------------------------------
// Builder

export const InputKind = Schema.Literals(["voice", "text", "pdf", "image", "csv"])
export type InputKind = typeof InputKind.Type

export const ProjectInput = Schema.Struct({
  kind: InputKind,
  /** e.g. text/plain, text/csv, application/pdf, image/png, audio/wav. */
  mediaType: Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100))),
  /** How `content` is encoded; default `text` for text and csv, `base64` for the binary kinds. */
  encoding: Schema.optional(Schema.Literals(["text", "base64"])),
  content: Schema.String,
  name: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(200))))
})
export type ProjectInput = typeof ProjectInput.Type

export const BuildStatus = Schema.Literals(["queued", "analyzing", "generating", "building", "deploying", "live", "failed"])
export type BuildStatus = typeof BuildStatus.Type
/** The happy path, in order; `failed` can follow any non-terminal step. */
export const buildSteps = ["queued", "analyzing", "generating", "building", "deploying", "live"] as const
/** The steps a test (or a demo) can make fail. */
export const FailableStep = Schema.Literals(["analyzing", "generating", "building", "deploying"])
export type FailableStep = typeof FailableStep.Type

/** The shortest description a project can be built from, without a template. */
export const MIN_DESCRIPTION = 10

export const CreateProjectBody = Schema.Struct({
  name: Schema.String.pipe(Schema.check(Schema.isTrimmed()), Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(80))),
  templateId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  description: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(4000)))),
  inputs: Schema.optional(Schema.Array(ProjectInput)),
  /** Simulation control: make the build fail during this step (same as `[fail:<step>]` in the description). */
  simulateFailure: Schema.optional(FailableStep)
}).check(
  Schema.makeFilter(
    (body) =>
      body.templateId !== undefined ||
      [...(body.description ?? "").trim()].length >= MIN_DESCRIPTION ||
      { path: ["description"], issue: `give a templateId, or a description of at least ${MIN_DESCRIPTION} characters` },
    {
      description: `A templateId, or a description of at least ${MIN_DESCRIPTION} characters (not counting surrounding spaces).`,
      toJsonSchema: () => ({
        anyOf: [
          { required: ["templateId"], properties: { templateId: { type: "string" } } },
          // Trimmed, at least MIN_DESCRIPTION code points: a non-space, MIN_DESCRIPTION - 2 of anything, a non-space.
          { required: ["description"], properties: { description: { type: "string", pattern: `\\S[\\s\\S]{${MIN_DESCRIPTION - 2},}\\S` } } }
        ]
      })
    }
  )
)
export type CreateProjectBody = typeof CreateProjectBody.Type

export const InputSummary = Schema.Struct({
  index: Schema.Int,
  kind: InputKind,
  mediaType: Schema.String,
  name: Schema.NullOr(Schema.String),
  bytes: Schema.Int,
  sha256: Schema.String,
  /** What the check found: e.g. "PNG image", "CSV, 3 columns × 12 rows", "WAV audio". */
  detected: Schema.String
})
export type InputSummary = typeof InputSummary.Type

export const BuildStep = Schema.Struct({
  status: BuildStatus,
  at: Schema.String,
  message: Schema.String
})
export type BuildStep = typeof BuildStep.Type

export class Build extends Schema.Class<Build>("Build")({
  status: BuildStatus,
  progressPercent: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100 }))),
  steps: Schema.Array(BuildStep),
  failureReason: Schema.NullOr(Schema.String),
  startedAt: Schema.String,
  updatedAt: Schema.String,
  finishedAt: Schema.NullOr(Schema.String),
  /** Always true: the builder simulates generation and deployment (see README). */
  simulated: Schema.Literal(true)
}) {}

export class Project extends Schema.Class<Project>("Project")({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  templateId: Schema.NullOr(Schema.String),
  ownerAgentId: Schema.String,
  inputs: Schema.Array(InputSummary),
  costCents: Cents,
  build: Build,
  createdAt: Schema.String
}) {}

/** The stored project row, build state included. */
export interface ProjectRecord {
  readonly id: string
  readonly accountId: string
  readonly agentId: string
  readonly name: string
  readonly description: string | null
  readonly templateId: string | null
  readonly inputs: ReadonlyArray<InputSummary>
  readonly costCents: number
  readonly status: BuildStatus
  readonly progressPercent: number
  readonly steps: ReadonlyArray<BuildStep>
  readonly failAt: FailableStep | null
  readonly failureReason: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly finishedAt: string | null
  /** When the worker should advance it next (null once terminal). */
  readonly nextRunAt: string | null
}

/** 403 — the account's plan allows no more projects. */
export class ProjectQuotaExceeded extends Schema.TaggedError<ProjectQuotaExceeded>()(
  "ProjectQuotaExceeded",
  {
    message: Schema.String,
    planId: Schema.NullOr(Schema.String),
    limit: Schema.Int,
    used: Schema.Int
  },
  { httpApiStatus: 403, description: "The plan's project quota is used up; upgrade the plan." }
) {}

// ---------------------------------------------------------------------------------------------
// Sessions

export const SessionState = Schema.Literals(["started", "browsing", "evaluated", "completed", "closed"])
export type SessionState = typeof SessionState.Type
export const SessionGoal = Schema.Literals(["acquire", "create", "explore"])
export type SessionGoal = typeof SessionGoal.Type
export const SessionAction = Schema.Literals(["start", "browse", "evaluate", "acquire", "create", "close"])
export type SessionAction = typeof SessionAction.Type

export const CatalogFilters = Schema.Struct({
  category: Schema.optional(TemplateCategory),
  minPriceCents: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))),
  maxPriceCents: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))),
  minRating: Schema.optional(Schema.Finite.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 5 })))),
  q: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  sort: Schema.optional(CatalogSort),
  order: Schema.optional(SortOrder),
  limit: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 100 })))),
  cursor: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(512))))
})
export type CatalogFilters = typeof CatalogFilters.Type

const SessionId = Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))

/** On the wire the step is named by `action` (not `_tag`). */
export const SessionStepRequest = Schema.Union([Schema.Struct({ action: Schema.Literal("start"), goal: Schema.optional(SessionGoal) }), Schema.Struct({ action: Schema.Literal("browse"), sessionId: SessionId, filters: Schema.optional(CatalogFilters) }), Schema.Struct({ action: Schema.Literal("evaluate"), sessionId: SessionId, projectId: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100))) }), Schema.Struct({ action: Schema.Literal("acquire"), sessionId: SessionId, projectId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))) }), Schema.Struct({ action: Schema.Literal("create"), sessionId: SessionId, project: CreateProjectBody }), Schema.Struct({ action: Schema.Literal("close"), sessionId: SessionId })])
export type SessionStepRequest = typeof SessionStepRequest.Type

export const SessionStepLog = Schema.Struct({
  index: Schema.Int,
  action: SessionAction,
  at: Schema.String,
  summary: Schema.String
})
export type SessionStepLog = typeof SessionStepLog.Type

export const AcquisitionStarted = Schema.Struct({
  projectId: Schema.String,
  priceCents: Cents,
  checkoutUrl: Schema.String,
  sessionId: Schema.String
})
export type AcquisitionStarted = typeof AcquisitionStarted.Type

/** What the session remembers between calls. */
export const SessionContext = Schema.Struct({
  /** Ids seen in the last browse step. */
  browsedProjectIds: Schema.Array(Schema.String),
  /** Every project evaluated in this session, with its score and recommendation. */
  evaluations: Schema.Array(Schema.Struct({ projectId: Schema.String, score: Schema.Int, recommendation: Recommendation })),
  /** The outcome once completed. */
  outcome: Schema.NullOr(
    Schema.Union([Schema.Struct({ type: Schema.Literal("acquisition"), projectId: Schema.String, checkoutUrl: Schema.String, checkoutSessionId: Schema.String }), Schema.Struct({ type: Schema.Literal("project"), projectId: Schema.String, buildStatus: BuildStatus })])
  )
})
export type SessionContext = typeof SessionContext.Type

export class AgentSession extends Schema.Class<AgentSession>("AgentSession")({
  id: Schema.String,
  agentId: Schema.String,
  goal: SessionGoal,
  state: SessionState,
  /** The actions accepted next from this state (empty once completed, closed or expired). */
  nextActions: Schema.Array(SessionAction),
  context: SessionContext,
  steps: Schema.Array(SessionStepLog),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  expiresAt: Schema.String,
  expired: Schema.Boolean
}) {}

export interface SessionRecord {
  readonly id: string
  readonly agentId: string
  readonly goal: SessionGoal
  readonly state: SessionState
  readonly context: SessionContext
  readonly steps: ReadonlyArray<SessionStepLog>
  readonly createdAt: string
  readonly updatedAt: string
  readonly expiresAt: string
}

export const SessionStepResult = Schema.Union([Schema.Struct({ action: Schema.Literals(["start", "close"]) }), Schema.Struct({ action: Schema.Literal("browse"), catalog: CatalogPage }), Schema.Struct({ action: Schema.Literal("evaluate"), evaluation: Evaluation }), Schema.Struct({ action: Schema.Literal("acquire"), acquisition: AcquisitionStarted }), Schema.Struct({ action: Schema.Literal("create"), project: Project })])
export type SessionStepResult = typeof SessionStepResult.Type

export const SessionStepResponse = Schema.Struct({ session: AgentSession, result: SessionStepResult })

/** 410 — the session expired; start a new one. */
export class SessionExpired extends Schema.TaggedError<SessionExpired>()(
  "SessionExpired",
  { message: Schema.String, sessionId: Schema.String, expiredAt: Schema.String },
  { httpApiStatus: 410 }
) {}
