// The owner's overview: every agent of the account at a glance (money, limits, what waits, the last
// refusal), in one answer.
import { Schema } from "effect"
import { AutonomyLevel } from "../commerce/common.js"
import { Cents, Timestamp } from "../platform/common.js"
import { RefusalView } from "../refusals/refusals.js"

export const OverviewLimits = Schema.Struct({
  /** null: no limit. */
  perPurchaseCents: Schema.NullOr(Cents),
  dailyCents: Schema.NullOr(Cents),
  monthlyCents: Schema.NullOr(Cents)
})

export const OverviewAgent = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  balanceCents: Cents,
  spentTodayCents: Cents,
  spentThisMonthCents: Cents,
  /** Committed but not yet spent (running sagas' escrow); counts against the limits with the spend. */
  heldCents: Cents,
  /** What may still be spent today under the daily limit (null: no daily limit). */
  remainingTodayCents: Schema.NullOr(Cents),
  limits: OverviewLimits,
  autonomyLevel: AutonomyLevel,
  approvalThresholdCents: Cents,
  frozen: Schema.Boolean,
  pendingApprovals: Schema.Int,
  lastRefusal: Schema.NullOr(RefusalView)
})
export type OverviewAgent = typeof OverviewAgent.Type

export const Overview = Schema.Struct({
  /** The account's agents, oldest first (the order of the agents list). */
  agents: Schema.Array(OverviewAgent),
  /** Pending approvals across the agents (the inbox's count). */
  pendingApprovals: Schema.Int,
  generatedAt: Timestamp
})
export type Overview = typeof Overview.Type
