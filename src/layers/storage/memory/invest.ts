// In-memory store for offerings, investments, holdings, governance proposals and votes.
import { Effect, Layer } from "effect"
import type { HoldingRecord, InvestmentRecord, OfferingRecord, ProposalRecord, Vote } from "../../../schema/invest.js"
import { InvestStore } from "../../../services/Invest.js"
import { MemoryDb } from "./MemoryDb.js"

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const MemoryInvestStore = Layer.effect(
  InvestStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const offerings = db.table<string, OfferingRecord>("invest_offerings")
    const investments = db.table<string, InvestmentRecord>("investments")
    const holdings = db.table<string, HoldingRecord>("holdings")
    const proposals = db.table<string, ProposalRecord>("proposals")
    const votes = db.table<string, Vote>("proposal_votes")
    const holdingKey = (agentId: string, target: string) => `${agentId}\u0000${target}`
    const voteKey = (proposalId: string, agentId: string) => `${proposalId}\u0000${agentId}`
    return {
      // The memory engine's write lock serialises units of work: reading is locking.
      lockOffering: (defaults) =>
        Effect.gen(function* () {
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
      addToHolding: (agentId, target, tokens, cents, at) =>
        Effect.gen(function* () {
          const key = holdingKey(agentId, target)
          const h = holdings.get(key)
          const next: HoldingRecord = h
            ? { ...h, tokens: h.tokens + tokens, investedCents: h.investedCents + cents, lastInvestedAt: at }
            : { agentId, target, tokens, investedCents: cents, firstInvestedAt: at, lastInvestedAt: at }
          yield* holdings.set(key, next)
          return next
        }),
      holdingsFor: (agentIds) =>
        Effect.sync(() => {
          const set = new Set(agentIds)
          return [...holdings.values()]
            .filter((h) => set.has(h.agentId))
            .sort((a, b) => cmpStr(a.agentId, b.agentId) || cmpStr(a.target, b.target))
        }),
      topHolders: (target, n) =>
        Effect.sync(() =>
          [...holdings.values()]
            .filter((h) => h.target === target && h.tokens > 0)
            .sort(
              (a, b) =>
                b.tokens - a.tokens || Date.parse(a.firstInvestedAt) - Date.parse(b.firstInvestedAt) || cmpStr(a.agentId, b.agentId)
            )
            .slice(0, n)
        ),
      insertProposal: (row) => proposals.set(row.id, row),
      getProposal: (id) => Effect.sync(() => proposals.get(id)),
      getProposalForUpdate: (id) => Effect.sync(() => proposals.get(id)),
      updateProposal: (row) => proposals.set(row.id, row),
      listProposals: (limit) =>
        Effect.sync(() =>
          [...proposals.values()]
            .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || cmpStr(b.id, a.id))
            .slice(0, limit)
        ),
      insertVote: (vote) => votes.set(voteKey(vote.proposalId, vote.agentId), vote),
      getVote: (proposalId, agentId) => Effect.sync(() => votes.get(voteKey(proposalId, agentId)))
    }
  })
)
