// Commerce statistics and usage: what an agent bought and sold, and the platform's totals.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"

export const ServiceCount = Schema.Struct({
  serviceId: Schema.String,
  serviceName: Schema.String,
  count: Schema.Int,
  volumeCents: Schema.Int
})
export const Stats = Schema.Struct({
  agent: Schema.Struct({
    purchases: Schema.Int,
    spentCents: Schema.Int,
    sales: Schema.Int,
    earnedCents: Schema.Int,
    feesGeneratedCents: Schema.Int,
    refundsReceivedCents: Schema.Int,
    topServicesBought: Schema.Array(ServiceCount),
    topServicesSold: Schema.Array(ServiceCount)
  }),
  platform: Schema.Struct({
    transactions: Schema.Int,
    volumeCents: Schema.Int,
    feesCents: Schema.Int,
    activeServices: Schema.Int,
    buyers: Schema.Int,
    sellers: Schema.Int,
    topServices: Schema.Array(ServiceCount)
  }),
  generatedAt: Timestamp
})

/** One aggregate row: completed purchases grouped by a key (service id or UTC day). */
export interface UsageRow {
  readonly key: string
  readonly label: string
  readonly calls: number
  readonly spentCents: number
}

export const Usage = Schema.Struct({
  agentId: Schema.String,
  from: Timestamp,
  to: Timestamp,
  byService: Schema.Array(
    Schema.Struct({ serviceId: Schema.String, serviceName: Schema.String, calls: Schema.Int, spentCents: Schema.Int })
  ),
  byDay: Schema.Array(Schema.Struct({ day: Schema.String, calls: Schema.Int, spentCents: Schema.Int })),
  totals: Schema.Struct({ calls: Schema.Int, spentCents: Schema.Int }),
  limits: Schema.Struct({
    perTransactionLimitCents: Schema.NullOr(Cents),
    dailyLimitCents: Schema.NullOr(Cents),
    remainingTodayCents: Schema.NullOr(Cents),
    monthlyLimitCents: Schema.NullOr(Cents),
    remainingThisMonthCents: Schema.NullOr(Cents)
  })
})
