// Invest: the platform utility token and project stakes (49 % offered, never oversold), holdings,
// and governance: proposals voted by the top 10 holders weighted by their snapshot holdings, with
// the founder's veto. Numbers and rules: docs/investment.md and docs/governance.md.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Option, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { Conflict, Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import {
  type CreateProposalBody,
  Holding,
  type HoldingRecord,
  type InvestBody,
  Investment,
  type InvestmentRecord,
  NotATopHolder,
  Offering,
  type OfferingRecord,
  PLATFORM_TARGET,
  Proposal,
  type ProposalRecord,
  StakeExhausted,
  targetOf,
  Vote,
  type VoteChoice
} from "../../schema/invest/invest.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { atomically, Ids } from "../platform/Db.js"
import { Wallet } from "../wallet/Wallet.js"
import { Ledger } from "../ledger/Ledger.js"
import { Projects } from "../projects/Projects.js"

/** Storage port for offerings, investments, holdings, proposals and votes. */
export class InvestStore extends Context.Service<
  InvestStore,
  {
    /** The offering row (created from `defaults` when missing), locked for this unit of work. */
    readonly lockOffering: (defaults: OfferingRecord) => Effect.Effect<OfferingRecord, StorageUnavailable>
    readonly getOffering: (target: string) => Effect.Effect<OfferingRecord | undefined, StorageUnavailable>
    readonly setSold: (target: string, soldTokens: number) => Effect.Effect<void, StorageUnavailable>
    readonly insertInvestment: (row: InvestmentRecord) => Effect.Effect<void, StorageUnavailable>
    /** Adds to (or opens) the agent's holding in the target; returns the holding after. */
    readonly addToHolding: (
      agentId: string,
      target: string,
      tokens: number,
      cents: number,
      at: string
    ) => Effect.Effect<HoldingRecord, StorageUnavailable>
    readonly holdingsFor: (agentIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<HoldingRecord>, StorageUnavailable>
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
>()("InvestStore") {}

/** The platform offering: 100,000,000 tokens, 49 % offered, 10 cents each. */
export const PLATFORM_TOTAL_SUPPLY = 100_000_000
export const PLATFORM_TOKEN_PRICE_CENTS = 10
/** Each project: 10,000 stake units, 49 % offered, priced at asking price ÷ 10,000 (rounded up, ≥ 1 cent). */
export const PROJECT_TOTAL_UNITS = 10_000
export const STAKE_PERCENT = 49
export const offeredOf = (totalSupply: number) => Math.floor((totalSupply * STAKE_PERCENT) / 100)
export const projectUnitPrice = (askingPriceCents: number) => Math.max(1, Math.ceil(askingPriceCents / PROJECT_TOTAL_UNITS))

/** The ledger account that receives the credits invested in a target. */
export const investmentAccount = (target: string) => `platform:investments:${target}`

/** Governance rules (docs/governance.md). */
export const TOP_HOLDERS = 10
export const DEFAULT_VOTING_HOURS = 72
export const VETO_WINDOW_MS = 72 * 3600 * 1000

export const disclaimerText = (tokenName: string, symbol: string) =>
  `${tokenName} (${symbol}) is a utility token, not a security. Jurisdictions: Brazil and Paraguay. ` +
  "Projections and valuations are estimates, not investment advice."

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

export class Invest extends Context.Service<Invest>()("Invest", {
  make: Effect.gen(function* () {
    const store = yield* InvestStore
    const ledger = yield* Ledger
    const wallet = yield* Wallet
    const projects = yield* Projects
    const ids = yield* Ids
    const config = yield* AppConfig
    const token = { name: config.tokenName, symbol: config.tokenSymbol, type: "utility" as const, classification: "utility token, not a security" }
    const disclaimer = disclaimerText(config.tokenName, config.tokenSymbol)
    const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    const unitOf = (target: string) => (target === PLATFORM_TARGET ? config.tokenSymbol : `${config.tokenSymbol}:${target}`)

    const normaliseTarget = (projectId: string | undefined) => (projectId === undefined || projectId === PLATFORM_TARGET ? PLATFORM_TARGET : projectId)

    /** The terms of a target's offering before anyone invested (NotFound for an unknown project). */
    const defaultsFor = Effect.fnUntraced(function* (target: string) {
      const createdAt = yield* nowIso
      if (target === PLATFORM_TARGET) {
        return {
          target,
          totalSupply: PLATFORM_TOTAL_SUPPLY,
          offeredTokens: offeredOf(PLATFORM_TOTAL_SUPPLY),
          soldTokens: 0,
          priceCents: PLATFORM_TOKEN_PRICE_CENTS,
          createdAt
        } satisfies OfferingRecord
      }
      const listing = yield* projects.getListing(target)
      return {
        target,
        totalSupply: PROJECT_TOTAL_UNITS,
        offeredTokens: offeredOf(PROJECT_TOTAL_UNITS),
        soldTokens: 0,
        priceCents: projectUnitPrice(listing.askingPriceCents),
        createdAt
      } satisfies OfferingRecord
    })

    const toOffering = (o: OfferingRecord) => {
      const remaining = o.offeredTokens - o.soldTokens
      return Offering.make({
        target: targetOf(o.target),
        unit: unitOf(o.target),
        totalSupply: o.totalSupply,
        offeredTokens: o.offeredTokens,
        soldTokens: o.soldTokens,
        remainingTokens: remaining,
        stakePercent: 49,
        priceCentsPerToken: o.priceCents as Offering["priceCentsPerToken"],
        valuationCents: o.totalSupply * o.priceCents,
        remainingCents: remaining * o.priceCents
      })
    }

    const toHolding = (h: HoldingRecord, totalSupply: number) =>
      Holding.make({
        agentId: h.agentId,
        target: targetOf(h.target),
        unit: unitOf(h.target),
        tokens: h.tokens,
        investedCents: h.investedCents as Holding["investedCents"],
        ownershipPercent: Math.round((h.tokens / totalSupply) * 100 * 1e6) / 1e6,
        firstInvestedAt: h.firstInvestedAt,
        lastInvestedAt: h.lastInvestedAt
      })

    const offering = Effect.fnUntraced(function* (projectId?: string) {
      const target = normaliseTarget(projectId)
      const stored = yield* store.getOffering(target)
      return toOffering(stored ?? (yield* defaultsFor(target)))
    })

    const invest = Effect.fnUntraced(function* (agentId: string, body: InvestBody) {
      if ((body.tokens === undefined) === (body.amountCents === undefined)) {
        return yield* Effect.fail(new InvalidInput({ message: "give exactly one of tokens or amountCents", field: "tokens" }))
      }
      const target = normaliseTarget(body.projectId)
      const result = yield* atomically(
        Effect.gen(function* () {
          // The offering row is the lock: concurrent investments in one target are serialised here.
          const o = yield* store.lockOffering(yield* defaultsFor(target))
          const tokens = body.tokens ?? Math.floor(body.amountCents! / o.priceCents)
          if (tokens < 1) {
            return yield* Effect.fail(
              new InvalidInput({ message: `amountCents buys less than one token at ${o.priceCents} cents per token`, field: "amountCents" })
            )
          }
          const remaining = o.offeredTokens - o.soldTokens
          if (tokens > remaining) {
            return yield* Effect.fail(
              new StakeExhausted({
                message: `only ${remaining} of the ${o.offeredTokens} tokens of the 49% stake remain (${remaining * o.priceCents} cents); ${tokens} requested`,
                target: targetOf(target),
                requestedTokens: tokens,
                remainingTokens: remaining,
                remainingCents: remaining * o.priceCents
              })
            )
          }
          const amount = tokens * o.priceCents
          // An investment spends the wallet: the owner's amount limits apply and it counts as spend.
          yield* wallet.debitOutsidePurchase(agentId, amount)
          const id = yield* ids.make("inv")
          const at = yield* nowIso
          const entry = yield* ledger.transfer({
            kind: "investment",
            reference: id,
            memo: `${tokens} ${unitOf(target)}`,
            from: walletAccount(agentId),
            to: investmentAccount(target),
            amount
          })
          const after: OfferingRecord = { ...o, soldTokens: o.soldTokens + tokens }
          yield* store.setSold(target, after.soldTokens)
          const row: InvestmentRecord = { id, agentId, target, tokens, priceCents: o.priceCents, amountCents: amount, journalEntryId: entry.id, createdAt: at }
          yield* store.insertInvestment(row)
          const holding = yield* store.addToHolding(agentId, target, tokens, amount, at)
          return { row, holding, after }
        })
      )
      return {
        investment: Investment.make({
          id: result.row.id,
          agentId,
          target: targetOf(target),
          unit: unitOf(target),
          tokens: result.row.tokens,
          priceCentsPerToken: result.row.priceCents as Investment["priceCentsPerToken"],
          amountCents: result.row.amountCents as Investment["amountCents"],
          journalEntryId: result.row.journalEntryId,
          createdAt: result.row.createdAt
        }),
        holding: toHolding(result.holding, result.after.totalSupply),
        offering: toOffering(result.after),
        token,
        disclaimer
      }
    }, traced("Invest.invest"))

    /** Holdings of the given agents (one agent, or every agent of an account). */
    const holdings = Effect.fnUntraced(function* (agentIds: ReadonlyArray<string>) {
      const rows = yield* store.holdingsFor(agentIds)
      const supply = new Map<string, number>()
      for (const t of new Set(rows.map((r) => r.target))) {
        const o = yield* store.getOffering(t)
        supply.set(t, o?.totalSupply ?? (t === PLATFORM_TARGET ? PLATFORM_TOTAL_SUPPLY : PROJECT_TOTAL_UNITS))
      }
      return {
        agentIds: [...agentIds],
        holdings: rows.map((h) => toHolding(h, supply.get(h.target)!)),
        token,
        disclaimer
      }
    }, traced("Invest.holdings"))

    // -------------------------------------------------------------------------------------------
    // Governance

    const notFound = (id: string) => new NotFound({ message: `proposal ${id} not found`, resource: "proposal", id })

    /** Locks, settles against the clock, and persists when the status moved. */
    const lockSettled = Effect.fnUntraced(function* (id: string) {
      const r = yield* store.getProposalForUpdate(id)
      if (!r) return yield* Effect.fail(notFound(id))
      const settled = settle(r, yield* Clock.currentTimeMillis)
      if (settled !== r) yield* store.updateProposal(settled)
      return settled
    })

    const createProposal = Effect.fnUntraced(function* (agentId: string, body: CreateProposalBody) {
        const top = yield* store.topHolders(PLATFORM_TARGET, TOP_HOLDERS)
        if (!top.some((h) => h.agentId === agentId)) {
          return yield* Effect.fail(
            new NotATopHolder({ message: `only the top ${TOP_HOLDERS} holders of ${config.tokenSymbol} may create proposals` })
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
      }, atomically, traced("Invest.createProposal"))

    const getProposal = (id: string) => atomically(Effect.map(lockSettled(id), toProposal)).pipe(traced("Invest.getProposal"))

    const listProposals = Effect.fnUntraced(function* (limit: number) {
      const now = yield* Clock.currentTimeMillis
      // Read-only: the status shown is settled against the clock; the row is persisted on next write.
      return (yield* store.listProposals(limit)).map((r) => toProposal(settle(r, now)))
    })

    const vote = Effect.fnUntraced(function* (agentId: string, input: { readonly proposalId: string; readonly choice: VoteChoice }) {
        const r = yield* lockSettled(input.proposalId)
        if (r.status !== "open") {
          return yield* Effect.fail(new Conflict({ message: `voting on proposal ${r.id} is closed (it is ${r.status})`, state: r.status }))
        }
        const voter = r.snapshot.find((v) => v.agentId === agentId)
        if (!voter) {
          return yield* Effect.fail(
            new NotATopHolder({
              message: `only the top ${TOP_HOLDERS} holders at the proposal's snapshot may vote; this agent is not among them`,
              proposalId: r.id
            })
          )
        }
        if (yield* store.getVote(r.id, agentId)) {
          return yield* Effect.fail(new Conflict({ message: "this agent already voted on the proposal; votes are final", state: "voted" }))
        }
        const now = yield* Clock.currentTimeMillis
        const cast = Vote.make({ proposalId: r.id, agentId, choice: input.choice, weight: voter.weight, castAt: new Date(now).toISOString() })
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
      }, atomically, traced("Invest.vote"))

    /** The founder (AppConfig.founderAccountId) vetoes a passed proposal within its veto window. */
    const veto = Effect.fnUntraced(function* (accountId: string, proposalId: string, reason: string) {
        const founder = config.founderAccountId
        if (Option.isNone(founder) || founder.value !== accountId) {
          return yield* Effect.fail(new Forbidden({ message: "only the founder's account may veto proposals" }))
        }
        const r = yield* lockSettled(proposalId)
        if (r.status !== "passed") {
          return yield* Effect.fail(
            new Conflict({ message: `proposal ${r.id} is ${r.status}; only a passed proposal can be vetoed, within its veto window`, state: r.status })
          )
        }
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const vetoed: ProposalRecord = { ...r, status: "vetoed", vetoedAt: now, vetoReason: reason, vetoedBy: accountId }
        yield* store.updateProposal(vetoed)
        return toProposal(vetoed)
      }, atomically, traced("Invest.veto"))

    return { invest, offering, holdings, createProposal, getProposal, listProposals, vote, veto, token, disclaimer } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Invest, Invest.make).pipe(Layer.provide([Ledger.layer, Projects.layer, Wallet.layer]))
}
