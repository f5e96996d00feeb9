// Governance: proposals created by the top holders of the platform token, voted with the weights
// of their snapshot, settled against the clock, and vetoed by the founder (docs/governance.md).
// The holdings it ranks are the Invest service's; both read the invest domain's store.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { Conflict, Forbidden, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import {
  type CreateProposalBody,
  NotATopHolder,
  PLATFORM_TARGET,
  type Proposal,
  type ProposalRecord,
  Vote,
  type VoteChoice
} from "../../schema/invest/invest.js"
import { Ids, Transactor } from "../platform/Db.js"
import { InvestStore } from "./InvestStore.js"
import { DEFAULT_VOTING_HOURS, settle, TOP_HOLDERS, toProposal } from "./policy.js"

export interface GovernanceService {
  /** A proposal by one of the top holders of the platform token, with their snapshot as its voters. */
  readonly createProposal: (
    agentId: string,
    body: CreateProposalBody
  ) => Effect.Effect<Proposal, NotATopHolder | StorageUnavailable>
  /** The proposal, settled against the clock (and persisted when its status moved). */
  readonly getProposal: (id: string) => Effect.Effect<Proposal, NotFound | StorageUnavailable>
  /** The latest proposals, each shown settled against the clock. */
  readonly listProposals: (limit: number) => Effect.Effect<Array<Proposal>, StorageUnavailable>
  /** A snapshot voter's one final vote, weighted by its snapshot holdings. */
  readonly vote: (
    agentId: string,
    input: { readonly proposalId: string; readonly choice: VoteChoice }
  ) => Effect.Effect<{ vote: Vote; proposal: Proposal }, Conflict | NotATopHolder | NotFound | StorageUnavailable>
  /** The founder vetoes a passed proposal within its veto window. */
  readonly veto: (
    accountId: string,
    proposalId: string,
    reason: string
  ) => Effect.Effect<Proposal, Conflict | Forbidden | NotFound | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* InvestStore
  const ids = yield* Ids
  const config = yield* AppConfig
  const { atomically } = yield* Transactor

  const notFound = (id: string) => new NotFound({ message: `proposal ${id} not found`, resource: "proposal", id })

  /** Locks, settles against the clock, and persists when the status moved. */
  const lockSettled = Effect.fnUntraced(function* (id: string) {
    const r = yield* store.getProposalForUpdate(id)
    if (!r) return yield* Effect.fail(notFound(id))
    const settled = settle(r, yield* Clock.currentTimeMillis)
    if (settled !== r) yield* store.updateProposal(settled)
    return settled
  })

  const createProposal = Effect.fnUntraced(
    function* (agentId: string, body: CreateProposalBody) {
      const top = yield* store.topHolders(PLATFORM_TARGET, TOP_HOLDERS)
      if (!top.some((h) => h.agentId === agentId)) {
        return yield* Effect.fail(
          new NotATopHolder({
            message: `only the top ${TOP_HOLDERS} holders of ${config.tokenSymbol} may create proposals`
          })
        )
      }
      const now = yield* Clock.currentTimeMillis
      const snapshot = top.map((h, i) => ({ rank: i + 1, agentId: h.agentId, weight: h.tokens }))
      const totalWeight = snapshot.reduce((s, v) => s + v.weight, 0)
      const row: ProposalRecord = {
        id: yield* ids.make("prop"),
        title: body.title,
        description: body.description,
        createdByAgentId: agentId,
        status: "open",
        createdAt: new Date(now).toISOString(),
        votingEndsAt: new Date(now + (body.votingPeriodHours ?? DEFAULT_VOTING_HOURS) * 3600 * 1000).toISOString(),
        closedAt: null,
        vetoWindowEndsAt: null,
        executedAt: null,
        vetoedAt: null,
        vetoReason: null,
        vetoedBy: null,
        snapshot,
        totalWeight,
        quorumWeight: Math.ceil(totalWeight / 2),
        yesWeight: 0,
        noWeight: 0,
        abstainWeight: 0,
        votesCast: 0
      }
      yield* store.insertProposal(row)
      return toProposal(row)
    },
    atomically,
    traced("Invest.createProposal")
  )

  const getProposal = (id: string) =>
    atomically(Effect.map(lockSettled(id), toProposal)).pipe(traced("Invest.getProposal"))

  const listProposals = Effect.fnUntraced(function* (limit: number) {
    const now = yield* Clock.currentTimeMillis
    // Read-only: the status shown is settled against the clock; the row is persisted on next write.
    return (yield* store.listProposals(limit)).map((r) => toProposal(settle(r, now)))
  })

  const vote = Effect.fnUntraced(
    function* (agentId: string, input: { readonly proposalId: string; readonly choice: VoteChoice }) {
      const r = yield* lockSettled(input.proposalId)
      if (r.status !== "open") {
        return yield* Effect.fail(
          new Conflict({ message: `voting on proposal ${r.id} is closed (it is ${r.status})`, state: r.status })
        )
      }
      const voter = r.snapshot.find((v) => v.agentId === agentId)
      if (!voter) {
        return yield* Effect.fail(
          new NotATopHolder({
            message:
              `only the top ${TOP_HOLDERS} holders at the proposal's snapshot may vote; ` +
              "this agent is not among them",
            proposalId: r.id
          })
        )
      }
      if (yield* store.getVote(r.id, agentId)) {
        return yield* Effect.fail(
          new Conflict({ message: "this agent already voted on the proposal; votes are final", state: "voted" })
        )
      }
      const now = yield* Clock.currentTimeMillis
      const cast = Vote.make({
        proposalId: r.id,
        agentId,
        choice: input.choice,
        weight: voter.weight,
        castAt: new Date(now).toISOString()
      })
      yield* store.insertVote(cast)
      const tallied: ProposalRecord = {
        ...r,
        yesWeight: r.yesWeight + (input.choice === "yes" ? voter.weight : 0),
        noWeight: r.noWeight + (input.choice === "no" ? voter.weight : 0),
        abstainWeight: r.abstainWeight + (input.choice === "abstain" ? voter.weight : 0),
        votesCast: r.votesCast + 1
      }
      const settled = settle(tallied, now)
      yield* store.updateProposal(settled)
      return { vote: cast, proposal: toProposal(settled) }
    },
    atomically,
    traced("Invest.vote")
  )

  /** The founder (AppConfig.founderAccountId) vetoes a passed proposal within its veto window. */
  const veto = Effect.fnUntraced(
    function* (accountId: string, proposalId: string, reason: string) {
      const founder = config.founderAccountId
      if (Option.isNone(founder) || founder.value !== accountId) {
        return yield* Effect.fail(new Forbidden({ message: "only the founder's account may veto proposals" }))
      }
      const r = yield* lockSettled(proposalId)
      if (r.status !== "passed") {
        return yield* Effect.fail(
          new Conflict({
            message: `proposal ${r.id} is ${r.status}; only a passed proposal can be vetoed, within its veto window`,
            state: r.status
          })
        )
      }
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const vetoed: ProposalRecord = { ...r, status: "vetoed", vetoedAt: now, vetoReason: reason, vetoedBy: accountId }
      yield* store.updateProposal(vetoed)
      return toProposal(vetoed)
    },
    atomically,
    traced("Invest.veto")
  )

  return Governance.of({ createProposal, getProposal, listProposals, vote, veto })
})

export class Governance extends Context.Service<Governance, GovernanceService>()("agent-commerce/Governance") {
  static readonly layer = Layer.effect(Governance, make)
}
