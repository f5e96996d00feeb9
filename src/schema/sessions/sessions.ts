// Multi-step agent sessions (spec §4.3): the steps an agent sends, what the session remembers, the
// stored row and the expiry.
import { Schema } from "effect"
import { Cents } from "../platform/common.js"
import { TemplateCategory } from "../marketplace/marketplace.js"
import { BuildStatus, CreateProjectBody, Project } from "../projects/builder.js"
import { CatalogPage, CatalogSort, Evaluation, Recommendation, SortOrder } from "../projects/catalog.js"

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
export const SessionStepRequest = Schema.Union([
  Schema.Struct({ action: Schema.Literal("start"), goal: Schema.optional(SessionGoal) }),
  Schema.Struct({ action: Schema.Literal("browse"), sessionId: SessionId, filters: Schema.optional(CatalogFilters) }),
  Schema.Struct({
    action: Schema.Literal("evaluate"),
    sessionId: SessionId,
    projectId: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
  }),
  Schema.Struct({
    action: Schema.Literal("acquire"),
    sessionId: SessionId,
    projectId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100))))
  }),
  Schema.Struct({ action: Schema.Literal("create"), sessionId: SessionId, project: CreateProjectBody }),
  Schema.Struct({ action: Schema.Literal("close"), sessionId: SessionId })
])
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
  evaluations: Schema.Array(
    Schema.Struct({ projectId: Schema.String, score: Schema.Int, recommendation: Recommendation })
  ),
  /** The outcome once completed. */
  outcome: Schema.NullOr(
    Schema.Union([
      Schema.Struct({
        type: Schema.Literal("acquisition"),
        projectId: Schema.String,
        checkoutUrl: Schema.String,
        checkoutSessionId: Schema.String
      }),
      Schema.Struct({ type: Schema.Literal("project"), projectId: Schema.String, buildStatus: BuildStatus })
    ])
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

export const SessionStepResult = Schema.Union([
  Schema.Struct({ action: Schema.Literals(["start", "close"]) }),
  Schema.Struct({ action: Schema.Literal("browse"), catalog: CatalogPage }),
  Schema.Struct({ action: Schema.Literal("evaluate"), evaluation: Evaluation }),
  Schema.Struct({ action: Schema.Literal("acquire"), acquisition: AcquisitionStarted }),
  Schema.Struct({ action: Schema.Literal("create"), project: Project })
])
export type SessionStepResult = typeof SessionStepResult.Type

export const SessionStepResponse = Schema.Struct({ session: AgentSession, result: SessionStepResult })

/** 410 — the session expired; start a new one. */
export class SessionExpired extends Schema.TaggedError<SessionExpired>()(
  "SessionExpired",
  { message: Schema.String, sessionId: Schema.String, expiredAt: Schema.String },
  { httpApiStatus: 410 }
) {}
