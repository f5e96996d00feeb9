// Marketplace catalog projects and their evaluation (spec §1, §4.3): the list and detail views, the
// query, the stored listing, and the score an acquirer reads.
import { Schema } from "effect"
import { Cents } from "../platform/common.js"
import { Template, TemplateCategory } from "../marketplace/marketplace.js"

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

export const EvaluateBody = Schema.Struct({
  projectId: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})
