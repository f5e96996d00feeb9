// The invest rules that need no storage: the offerings' sizes and prices, the ledger account an
// investment goes to, the disclaimer, and governance (who votes, how a proposal closes, the veto window).
import { Proposal, type ProposalRecord } from "../../schema/invest/invest.js"

/** The platform offering: 100,000,000 tokens, 49 % offered, 10 cents each. */
export const PLATFORM_TOTAL_SUPPLY = 100_000_000
export const PLATFORM_TOKEN_PRICE_CENTS = 10
/** Each project: 10,000 stake units, 49 % offered, priced at asking price ÷ 10,000 (rounded up, ≥ 1 cent). */
export const PROJECT_TOTAL_UNITS = 10_000
export const STAKE_PERCENT = 49
export const offeredOf = (totalSupply: number) => Math.floor((totalSupply * STAKE_PERCENT) / 100)
export const projectUnitPrice = (askingPriceCents: number) =>
  Math.max(1, Math.ceil(askingPriceCents / PROJECT_TOTAL_UNITS))

/** The ledger account that receives the credits invested in a target. */
export const investmentAccount = (target: string) => `platform:investments:${target}`

/** The token every answer describes. */
export interface TokenInfo {
  readonly name: string
  readonly symbol: string
  readonly type: "utility"
  readonly classification: string
}

export const disclaimerText = (tokenName: string, symbol: string) =>
  `${tokenName} (${symbol}) is a utility token, not a security. Jurisdictions: Brazil and Paraguay. ` +
  "Projections and valuations are estimates, not investment advice."

/** Governance rules (docs/governance.md). */
export const TOP_HOLDERS = 10
export const DEFAULT_VOTING_HOURS = 72
export const VETO_WINDOW_MS = 72 * 3600 * 1000

/**
 * Applies the clock to a proposal: an open one closes when its window ends or every snapshot voter
 * has voted (passed: quorum reached and more yes than no weight; otherwise rejected); a passed one
 * becomes executed when its veto window ends without a veto.
 */
export const settle = (r: ProposalRecord, now: number): ProposalRecord => {
  let p = r
  if (p.status === "open") {
    const ends = Date.parse(p.votingEndsAt)
    const allVoted = p.votesCast >= p.snapshot.length
    if (now >= ends || allVoted) {
      const closedAt = now >= ends ? ends : now
      const cast = p.yesWeight + p.noWeight + p.abstainWeight
      const passed = cast >= p.quorumWeight && p.yesWeight > p.noWeight
      p = {
        ...p,
        status: passed ? "passed" : "rejected",
        closedAt: new Date(closedAt).toISOString(),
        vetoWindowEndsAt: passed ? new Date(closedAt + VETO_WINDOW_MS).toISOString() : null
      }
    }
  }
  if (p.status === "passed" && p.vetoWindowEndsAt !== null && now >= Date.parse(p.vetoWindowEndsAt)) {
    p = { ...p, status: "executed", executedAt: p.vetoWindowEndsAt }
  }
  return p
}

export const toProposal = (r: ProposalRecord): Proposal =>
  Proposal.make({
    id: r.id,
    title: r.title,
    description: r.description,
    createdByAgentId: r.createdByAgentId,
    status: r.status,
    createdAt: r.createdAt,
    votingEndsAt: r.votingEndsAt,
    closedAt: r.closedAt,
    vetoWindowEndsAt: r.vetoWindowEndsAt,
    executedAt: r.executedAt,
    veto: r.vetoedAt !== null ? { at: r.vetoedAt, reason: r.vetoReason ?? "", byAccountId: r.vetoedBy ?? "" } : null,
    snapshot: { takenAt: r.createdAt, voters: [...r.snapshot], totalWeight: r.totalWeight },
    quorumWeight: r.quorumWeight,
    tally: { yes: r.yesWeight, no: r.noWeight, abstain: r.abstainWeight, votesCast: r.votesCast }
  })
