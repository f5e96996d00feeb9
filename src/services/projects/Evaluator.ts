// Evaluator: scores a catalog project 0–100 with a recommendation and reasons. The default layer is
// the documented deterministic rule (docs/evaluation.md); a model-backed evaluator is another
// layer for the same tag, so handlers and the Projects service never change.
import { Clock, Context, Effect, Layer } from "effect"
import {
  type CatalogListing,
  Evaluation,
  type EvaluationReason,
  ProjectMetrics,
  type Recommendation
} from "../../schema/projects/catalog.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface EvaluatorService {
  /** Which evaluator this is (reported on every evaluation). */
  readonly name: string
  readonly evaluate: (listing: CatalogListing) => Effect.Effect<Evaluation, StorageUnavailable>
}

export class Evaluator extends Context.Service<Evaluator, EvaluatorService>()("agent-commerce/Evaluator") {}

const usd = (cents: number) =>
  `$${(cents / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`

/** First band whose test passes gives the points. */
const band = (bands: ReadonlyArray<readonly [boolean, number]>): number => bands.find(([ok]) => ok)?.[1] ?? 0

/** Score cut-offs of the recommendations (inclusive lower bounds). */
export const recommendationCutoffs = { strong_buy: 75, buy: 55, hold: 35 } as const

export const recommend = (score: number): Recommendation =>
  score >= recommendationCutoffs.strong_buy
    ? "strong_buy"
    : score >= recommendationCutoffs.buy
      ? "buy"
      : score >= recommendationCutoffs.hold
        ? "hold"
        : "avoid"

/** The rules-v1 scoring (docs/evaluation.md): pure, integer thresholds, no floats in comparisons of money. */
export const scoreListing = (
  l: CatalogListing
): { readonly score: number; readonly reasons: ReadonlyArray<EvaluationReason> } => {
  const mrr = l.mrrCents
  const hasRevenue = mrr > 0
  const annual = mrr * 12
  const reasons: Array<EvaluationReason> = []

  const revenue = band([
    [mrr >= 1_000_000, 30],
    [mrr >= 500_000, 25],
    [mrr >= 200_000, 20],
    [mrr >= 50_000, 12],
    [mrr > 0, 6]
  ])
  reasons.push({
    factor: "revenue",
    points: revenue,
    maxPoints: 30,
    detail: hasRevenue ? `MRR ${usd(mrr)}` : "no recurring revenue yet"
  })

  const g = l.monthlyGrowthPct
  const growth = hasRevenue
    ? band([
        [g >= 20, 25],
        [g >= 10, 20],
        [g >= 5, 14],
        [g > 0, 8],
        [g === 0, 4]
      ])
    : 0
  reasons.push({
    factor: "growth",
    points: growth,
    maxPoints: 25,
    detail: hasRevenue ? `${g >= 0 ? "+" : ""}${g}% month over month` : "no revenue to grow"
  })

  const c = l.churnPct
  const churn = hasRevenue
    ? band([
        [c <= 3, 20],
        [c <= 5, 15],
        [c <= 8, 8],
        [c <= 12, 3]
      ])
    : 0
  reasons.push({
    factor: "churn",
    points: churn,
    maxPoints: 20,
    detail: hasRevenue ? `${c}% monthly churn` : "no paying customers to churn"
  })

  const p = l.askingPriceCents
  const valuation = hasRevenue
    ? band([
        [p <= 2 * annual, 15],
        [p <= 3 * annual, 12],
        [p <= 4 * annual, 8],
        [p <= 6 * annual, 4]
      ])
    : 0
  reasons.push({
    factor: "valuation",
    points: valuation,
    maxPoints: 15,
    detail: hasRevenue
      ? `asking ${usd(p)} is ${(Math.round((p / annual) * 100) / 100).toFixed(2)}× annual revenue`
      : `asking ${usd(p)} with no revenue`
  })

  const u = l.activeUsers
  const traction = band([
    [u >= 1000, 5],
    [u >= 250, 3],
    [u >= 50, 1]
  ])
  reasons.push({ factor: "traction", points: traction, maxPoints: 5, detail: `${u} active users` })

  const a = l.ageMonths
  const maturity = band([
    [a >= 12, 5],
    [a >= 6, 3],
    [true, 1]
  ])
  reasons.push({ factor: "maturity", points: maturity, maxPoints: 5, detail: `${a} months in operation` })

  return { score: revenue + growth + churn + valuation + traction + maturity, reasons }
}

export const RULES_EVALUATOR = "rules-v1"

/** The deterministic evaluator (the default). */
export const RuleEvaluatorLive = Layer.succeed(Evaluator, {
  name: RULES_EVALUATOR,
  evaluate: (l) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const { score, reasons } = scoreListing(l)
      return Evaluation.make({
        projectId: l.id,
        score,
        recommendation: recommend(score),
        reasons: [...reasons],
        evaluator: RULES_EVALUATOR,
        metrics: ProjectMetrics.make({
          mrrCents: l.mrrCents as ProjectMetrics["mrrCents"],
          monthlyGrowthPct: l.monthlyGrowthPct,
          activeUsers: l.activeUsers,
          churnPct: l.churnPct,
          ageMonths: l.ageMonths
        }),
        askingPriceCents: l.askingPriceCents as Evaluation["askingPriceCents"],
        evaluatedAt: new Date(now).toISOString()
      })
    })
})
