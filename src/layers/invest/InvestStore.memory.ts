// In-memory store for offerings, investments, holdings, governance proposals and votes: each read
// walks an ordered list kept by the writes (an agent's targets, a target's ranking, the proposals
// newest last), as the SQL store walks its indexes — no scan or sort of every row per request.
import { Effect, Layer } from "effect"
import type {
  HoldingRecord,
  InvestmentRecord,
  OfferingRecord,
  ProposalRecord,
  Vote
} from "../../schema/invest/invest.js"
import { InvestStore } from "../../services/invest/InvestStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** A target's ranking: most tokens first, then the earliest investor, then by agent id (Postgres: holdings_rank_idx). */
const byRank = (a: HoldingRecord, b: HoldingRecord) =>
  b.tokens - a.tokens || Date.parse(a.firstInvestedAt) - Date.parse(b.firstInvestedAt) || cmpStr(a.agentId, b.agentId)
/** Oldest first: created_at, then id. */
const byCreated = (a: ProposalRecord, b: ProposalRecord) =>
  Date.parse(a.createdAt) - Date.parse(b.createdAt) || cmpStr(a.id, b.id)

export const MemoryInvestStore = Layer.effect(
  InvestStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const offerings = db.table<string, OfferingRecord>("invest_offerings")
    const investments = db.table<string, InvestmentRecord>("investments")
    const holdings = db.table<string, HoldingRecord>("holdings")
    const proposals = db.table<string, ProposalRecord>("proposals")
    const votes = db.table<string, Vote>("proposal_votes")
    /** Agent → the targets it holds, in id order. */
    const targetsByAgent = db.table<string, Array<string>>("holdings_by_agent")
    /** Target → its holdings with tokens, in ranking order. */
    const ranking = db.table<string, Array<HoldingRecord>>("holdings_rank")
    /** Proposal ids, oldest first by (createdAt, id). */
    const proposalOrder = db.table<string, Array<string>>("proposals_order")
    const holdingKey = (agentId: string, target: string) => `${agentId}\u0000${target}`
    const voteKey = (proposalId: string, agentId: string) => `${proposalId}\u0000${agentId}`
    return {
      // The memory engine's write lock serialises units of work: reading is locking.
      lockOffering: Effect.fnUntraced(function* (defaults) {
        const existing = offerings.get(defaults.target)
        if (existing) return existing
        yield* offerings.set(defaults.target, defaults)
        return defaults
      }),
      getOffering: (target) => Effect.sync(() => offerings.get(target)),
      setSold: (target, soldTokens) =>
        Effect.suspend(() => {
          const o = offerings.get(target)
          return o ? offerings.set(target, { ...o, soldTokens }) : Effect.void
        }),
      insertInvestment: (row) => investments.set(row.id, row),
      getInvestment: (id) => Effect.sync(() => investments.get(id)),
      getHolding: (agentId, target) => Effect.sync(() => holdings.get(holdingKey(agentId, target))),
      addToHolding: Effect.fnUntraced(function* (agentId, target, tokens, cents, at) {
        const key = holdingKey(agentId, target)
        const h = holdings.get(key)
        const next: HoldingRecord = h
          ? { ...h, tokens: h.tokens + tokens, investedCents: h.investedCents + cents, lastInvestedAt: at }
          : { agentId, target, tokens, investedCents: cents, firstInvestedAt: at, lastInvestedAt: at }
        yield* holdings.set(key, next)
        if (!h) yield* targetsByAgent.insertOrdered(agentId, target, cmpStr)
        if (h && h.tokens > 0) yield* ranking.removeOrdered(target, h, byRank)
        if (next.tokens > 0) yield* ranking.insertOrdered(target, next, byRank)
        return next
      }),
      holdingsFor: (agentIds) =>
        Effect.sync(() =>
          [...new Set(agentIds)]
            .sort(cmpStr)
            .flatMap((agentId) =>
              (targetsByAgent.get(agentId) ?? []).map((target) => holdings.get(holdingKey(agentId, target))!)
            )
        ),
      topHolders: (target, n) => Effect.sync(() => (ranking.get(target) ?? []).slice(0, n)),
      insertProposal: (row) =>
        Effect.andThen(
          proposals.set(row.id, row),
          proposalOrder.insertSorted(
            "all",
            row.id,
            (a, b) => byCreated(a === row.id ? row : proposals.get(a)!, b === row.id ? row : proposals.get(b)!) < 0
          )
        ),
      getProposal: (id) => Effect.sync(() => proposals.get(id)),
      getProposalForUpdate: (id) => Effect.sync(() => proposals.get(id)),
      updateProposal: (row) => proposals.set(row.id, row),
      // createdAt never changes after the insert, so the order list stays true through updates.
      listProposals: (limit) =>
        Effect.sync(() => {
          const ids = proposalOrder.get("all") ?? []
          const out: Array<ProposalRecord> = []
          for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) out.push(proposals.get(ids[i])!)
          return out
        }),
      insertVote: (vote) => votes.set(voteKey(vote.proposalId, vote.agentId), vote),
      getVote: (proposalId, agentId) => Effect.sync(() => votes.get(voteKey(proposalId, agentId)))
    }
  })
)
