// Reputation (0–1000 from reviews, disputes, volume and tenure) and the leaderboard.
import { Schema } from "effect"
import { Timestamp } from "../platform/common.js"

export const ReputationBand = Schema.Literals(["Bronze", "Silver", "Gold", "Platinum", "Diamond"])
export type ReputationBand = typeof ReputationBand.Type

/** Aggregates the reputation formula reads for one agent. */
export interface ReputationInputs {
  readonly agentId: string
  readonly reviewsReceived: number
  readonly ratingSum: number
  readonly completedDeals: number
  readonly volumeCents: number
  readonly disputesLost: number
}

export const ReputationFactors = Schema.Struct({
  reviews: Schema.Struct({
    points: Schema.Int,
    max: Schema.Int,
    count: Schema.Int,
    averageRating: Schema.NullOr(Schema.Number)
  }),
  disputes: Schema.Struct({ points: Schema.Int, max: Schema.Int, lost: Schema.Int, completedDeals: Schema.Int }),
  volume: Schema.Struct({ points: Schema.Int, max: Schema.Int, volumeCents: Schema.Int }),
  tenure: Schema.Struct({ points: Schema.Int, max: Schema.Int, days: Schema.Int })
})

export const Reputation = Schema.Struct({
  agentId: Schema.String,
  score: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))),
  band: ReputationBand,
  nextBand: Schema.NullOr(Schema.Struct({ band: ReputationBand, atScore: Schema.Int })),
  factors: ReputationFactors,
  formula: Schema.String
})
export type Reputation = typeof Reputation.Type

export const LeaderboardEntry = Schema.Struct({
  rank: Schema.Int,
  agentId: Schema.String,
  name: Schema.String,
  organization: Schema.NullOr(Schema.String),
  score: Schema.Int,
  band: ReputationBand,
  completedDeals: Schema.Int,
  reviewsReceived: Schema.Int
})
export const Leaderboard = Schema.Struct({ data: Schema.Array(LeaderboardEntry), generatedAt: Timestamp })
