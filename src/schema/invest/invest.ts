// Investment in the platform utility token (or a project's stake), holdings, and governance
// proposals with top-10 weighted voting and the founder veto (spec §1, §4.2, §4.3).
import { Schema } from "effect"
import { Cents } from "../platform/common.js"

/** What an investment buys into: the platform, or one catalog project. */
export const InvestTarget = Schema.Struct({
  type: Schema.Literals(["platform", "project"]),
  /** "platform", or the project id. */
  id: Schema.String
})
export type InvestTarget = typeof InvestTarget.Type
export const PLATFORM_TARGET = "platform"
export const targetOf = (key: string): InvestTarget =>
  key === PLATFORM_TARGET ? { type: "platform", id: key } : { type: "project", id: key }

export const TokenInfo = Schema.Struct({
  name: Schema.String,
  symbol: Schema.String,
  type: Schema.Literal("utility"),
  classification: Schema.String
})

export class Offering extends Schema.Class<Offering>("Offering")({
  target: InvestTarget,
  /** The unit sold: the platform token symbol, or `<symbol>:<projectId>` for a project stake. */
  unit: Schema.String,
  totalSupply: Schema.Int,
  /** 49 % of the supply. */
  offeredTokens: Schema.Int,
  soldTokens: Schema.Int,
  remainingTokens: Schema.Int,
  stakePercent: Schema.Literal(49),
  priceCentsPerToken: Cents,
  /** totalSupply × price. */
  valuationCents: Schema.Int,
  /** remainingTokens × price. */
  remainingCents: Schema.Int
}) {}

export class Investment extends Schema.Class<Investment>("Investment")({
  id: Schema.String,
  agentId: Schema.String,
  target: InvestTarget,
  unit: Schema.String,
  tokens: Schema.Int,
  priceCentsPerToken: Cents,
  amountCents: Cents,
  /** The ledger entry that moved the credits. */
  journalEntryId: Schema.String,
  createdAt: Schema.String
}) {}

export class Holding extends Schema.Class<Holding>("Holding")({
  agentId: Schema.String,
  target: InvestTarget,
  unit: Schema.String,
  tokens: Schema.Int,
  investedCents: Cents,
  /** tokens ÷ total supply × 100, rounded to 6 decimals (display only). */
  ownershipPercent: Schema.Number,
  firstInvestedAt: Schema.String,
  lastInvestedAt: Schema.String
}) {}

export const InvestBody = Schema.Struct({
  /** The catalog project to invest in; absent (or "platform") invests in the platform. */
  projectId: Schema.optional(
    Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
  ),
  /** How many tokens to buy … */
  tokens: Schema.optional(
    Schema.Int.pipe(
      Schema.check(Schema.isGreaterThanOrEqualTo(1)),
      Schema.check(Schema.isLessThanOrEqualTo(100_000_000))
    )
  ),
  /** … or how many cents to spend (whole tokens only; the remainder is not charged). */
  amountCents: Schema.optional(
    Schema.Int.pipe(
      Schema.check(Schema.isGreaterThanOrEqualTo(1)),
      Schema.check(Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER))
    )
  )
}).check(
  Schema.makeFilter(
    (body) =>
      (body.tokens === undefined) !== (body.amountCents === undefined) || {
        path: ["tokens"],
        issue: "give exactly one of tokens or amountCents"
      },
    {
      description: "Exactly one of tokens or amountCents.",
      toJsonSchema: () => ({
        oneOf: [
          { required: ["tokens"], properties: { tokens: { type: "integer" } } },
          { required: ["amountCents"], properties: { amountCents: { type: "integer" } } }
        ]
      })
    }
  )
)
export type InvestBody = typeof InvestBody.Type

export const InvestmentResponse = Schema.Struct({
  investment: Investment,
  holding: Holding,
  offering: Offering,
  token: TokenInfo,
  disclaimer: Schema.String
})

export const HoldingsResponse = Schema.Struct({
  agentIds: Schema.Array(Schema.String),
  holdings: Schema.Array(Holding),
  token: TokenInfo,
  disclaimer: Schema.String
})

/** Stored rows. */
export interface OfferingRecord {
  readonly target: string
  readonly totalSupply: number
  readonly offeredTokens: number
  readonly soldTokens: number
  readonly priceCents: number
  readonly createdAt: string
}
export interface InvestmentRecord {
  readonly id: string
  readonly agentId: string
  readonly target: string
  readonly tokens: number
  readonly priceCents: number
  readonly amountCents: number
  readonly journalEntryId: string
  readonly createdAt: string
}
export interface HoldingRecord {
  readonly agentId: string
  readonly target: string
  readonly tokens: number
  readonly investedCents: number
  readonly firstInvestedAt: string
  readonly lastInvestedAt: string
}

/** 409 — the request is larger than what remains of the 49 % stake; states what remains. */
export class StakeExhausted extends Schema.TaggedError<StakeExhausted>()(
  "StakeExhausted",
  {
    message: Schema.String,
    target: InvestTarget,
    requestedTokens: Schema.Int,
    remainingTokens: Schema.Int,
    remainingCents: Schema.Int
  },
  { httpApiStatus: 409, description: "Beyond the remaining 49 % stake; the remaining amount is stated." }
) {}

// ---------------------------------------------------------------------------------------------
// Governance

export const ProposalStatus = Schema.Literals(["open", "passed", "rejected", "vetoed", "executed"])
export type ProposalStatus = typeof ProposalStatus.Type
export const VoteChoice = Schema.Literals(["yes", "no", "abstain"])
export type VoteChoice = typeof VoteChoice.Type

export const SnapshotVoter = Schema.Struct({ rank: Schema.Int, agentId: Schema.String, weight: Schema.Int })
export type SnapshotVoter = typeof SnapshotVoter.Type

export class Proposal extends Schema.Class<Proposal>("Proposal")({
  id: Schema.String,
  title: Schema.String,
  description: Schema.String,
  createdByAgentId: Schema.String,
  status: ProposalStatus,
  createdAt: Schema.String,
  votingEndsAt: Schema.String,
  closedAt: Schema.NullOr(Schema.String),
  /** A passed proposal may be vetoed by the founder until then; after it, it is executed. */
  vetoWindowEndsAt: Schema.NullOr(Schema.String),
  executedAt: Schema.NullOr(Schema.String),
  veto: Schema.NullOr(Schema.Struct({ at: Schema.String, reason: Schema.String, byAccountId: Schema.String })),
  /** The top 10 platform-token holders when the proposal opened: the only voters, weighted by these holdings. */
  snapshot: Schema.Struct({ takenAt: Schema.String, voters: Schema.Array(SnapshotVoter), totalWeight: Schema.Int }),
  /** Weight that must vote (any choice) for the result to stand: half the snapshot weight, rounded up. */
  quorumWeight: Schema.Int,
  tally: Schema.Struct({ yes: Schema.Int, no: Schema.Int, abstain: Schema.Int, votesCast: Schema.Int })
}) {}

export interface ProposalRecord {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly createdByAgentId: string
  readonly status: ProposalStatus
  readonly createdAt: string
  readonly votingEndsAt: string
  readonly closedAt: string | null
  readonly vetoWindowEndsAt: string | null
  readonly executedAt: string | null
  readonly vetoedAt: string | null
  readonly vetoReason: string | null
  readonly vetoedBy: string | null
  readonly snapshot: ReadonlyArray<SnapshotVoter>
  readonly totalWeight: number
  readonly quorumWeight: number
  readonly yesWeight: number
  readonly noWeight: number
  readonly abstainWeight: number
  readonly votesCast: number
}

export class Vote extends Schema.Class<Vote>("Vote")({
  proposalId: Schema.String,
  agentId: Schema.String,
  choice: VoteChoice,
  weight: Schema.Int,
  castAt: Schema.String
}) {}

export const CreateProposalBody = Schema.Struct({
  title: Schema.String.pipe(
    Schema.check(Schema.isTrimmed()),
    Schema.check(Schema.isMinCodePoints(3)),
    Schema.check(Schema.isMaxCodePoints(140))
  ),
  description: Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(5000))),
  /** Length of the voting window in hours (1 to 336; default 72). */
  votingPeriodHours: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 336 }))))
})
export type CreateProposalBody = typeof CreateProposalBody.Type

export const VoteBody = Schema.Struct({
  proposalId: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100))),
  choice: VoteChoice
})

export const VetoBody = Schema.Struct({
  reason: Schema.String.pipe(
    Schema.check(Schema.isTrimmed()),
    Schema.check(Schema.isMinCodePoints(3)),
    Schema.check(Schema.isMaxCodePoints(1000))
  )
})

export const VoteResponse = Schema.Struct({ vote: Vote, proposal: Proposal })

/** 403 — only the top 10 holders may vote (by the proposal snapshot) or create proposals (by current holdings). */
export class NotATopHolder extends Schema.TaggedError<NotATopHolder>()(
  "NotATopHolder",
  { message: Schema.String, proposalId: Schema.optional(Schema.String) },
  { httpApiStatus: 403 }
) {}
