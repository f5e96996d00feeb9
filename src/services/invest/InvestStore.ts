// The invest domain's storage port: offerings, investments, holdings, proposals and votes.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type {
  HoldingRecord,
  InvestmentRecord,
  OfferingRecord,
  ProposalRecord,
  Vote
} from "../../schema/invest/invest.js"

export interface InvestStoreService {
  /** The offering row (created from `defaults` when missing), locked for this unit of work. */
  readonly lockOffering: (defaults: OfferingRecord) => Effect.Effect<OfferingRecord, StorageUnavailable>
  readonly getOffering: (target: string) => Effect.Effect<OfferingRecord | undefined, StorageUnavailable>
  readonly setSold: (target: string, soldTokens: number) => Effect.Effect<void, StorageUnavailable>
  readonly insertInvestment: (row: InvestmentRecord) => Effect.Effect<void, StorageUnavailable>
  readonly getInvestment: (id: string) => Effect.Effect<InvestmentRecord | undefined, StorageUnavailable>
  /** The agent's holding in one target, if any. */
  readonly getHolding: (agentId: string, target: string) => Effect.Effect<HoldingRecord | undefined, StorageUnavailable>
  /** Adds to (or opens) the agent's holding in the target; returns the holding after. */
  readonly addToHolding: (
    agentId: string,
    target: string,
    tokens: number,
    cents: number,
    at: string
  ) => Effect.Effect<HoldingRecord, StorageUnavailable>
  readonly holdingsFor: (
    agentIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<HoldingRecord>, StorageUnavailable>
  /** The n largest holders of a target: tokens desc, then earliest first investment, then agent id. */
  readonly topHolders: (target: string, n: number) => Effect.Effect<ReadonlyArray<HoldingRecord>, StorageUnavailable>
  readonly insertProposal: (row: ProposalRecord) => Effect.Effect<void, StorageUnavailable>
  readonly getProposal: (id: string) => Effect.Effect<ProposalRecord | undefined, StorageUnavailable>
  readonly getProposalForUpdate: (id: string) => Effect.Effect<ProposalRecord | undefined, StorageUnavailable>
  readonly updateProposal: (row: ProposalRecord) => Effect.Effect<void, StorageUnavailable>
  /** Newest first. */
  readonly listProposals: (limit: number) => Effect.Effect<ReadonlyArray<ProposalRecord>, StorageUnavailable>
  readonly insertVote: (vote: Vote) => Effect.Effect<void, StorageUnavailable>
  readonly getVote: (proposalId: string, agentId: string) => Effect.Effect<Vote | undefined, StorageUnavailable>
}

export class InvestStore extends Context.Service<InvestStore, InvestStoreService>()("agent-commerce/InvestStore") {}
