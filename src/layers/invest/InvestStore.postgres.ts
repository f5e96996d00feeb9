// Postgres store for offerings (row-locked per investment so the 49 % cap holds under concurrency),
// investments, holdings, governance proposals and votes.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { type HoldingRecord, type OfferingRecord, type ProposalRecord, type ProposalStatus, type SnapshotVoter, Vote, type VoteChoice } from "../../schema/invest/invest.js"
import { InvestStore } from "../../services/invest/Invest.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"

interface OfferingRow { target: string; totalSupply: number; offeredTokens: number; soldTokens: number; priceCents: number; createdAt: Date }
const toOffering = (r: OfferingRow): OfferingRecord => ({ ...r, createdAt: iso(r.createdAt) })

interface HoldingRow { agentId: string; target: string; tokens: number; investedCents: number; firstInvestedAt: Date; lastInvestedAt: Date }
const toHolding = (r: HoldingRow): HoldingRecord => ({
  agentId: r.agentId,
  target: r.target,
  tokens: r.tokens,
  investedCents: r.investedCents,
  firstInvestedAt: iso(r.firstInvestedAt),
  lastInvestedAt: iso(r.lastInvestedAt)
})

interface ProposalRow {
  id: string
  title: string
  description: string
  createdByAgentId: string
  status: ProposalStatus
  createdAt: Date
  votingEndsAt: Date
  closedAt: Date | null
  vetoWindowEndsAt: Date | null
  executedAt: Date | null
  vetoedAt: Date | null
  vetoReason: string | null
  vetoedBy: string | null
  snapshot: ReadonlyArray<SnapshotVoter>
  totalWeight: number
  quorumWeight: number
  yesWeight: number
  noWeight: number
  abstainWeight: number
  votesCast: number
}
const toProposal = (r: ProposalRow): ProposalRecord => ({
  ...r,
  createdAt: iso(r.createdAt),
  votingEndsAt: iso(r.votingEndsAt),
  closedAt: isoOrNull(r.closedAt),
  vetoWindowEndsAt: isoOrNull(r.vetoWindowEndsAt),
  executedAt: isoOrNull(r.executedAt),
  vetoedAt: isoOrNull(r.vetoedAt)
})

interface VoteRow { proposalId: string; agentId: string; choice: VoteChoice; weight: number; castAt: Date }

export const PgInvestStore = Layer.effect(
  InvestStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      lockOffering: Effect.fnUntraced(function* (d) {
          yield* sql`
            INSERT INTO invest_offerings (target, total_supply, offered_tokens, sold_tokens, price_cents, created_at)
            VALUES (${d.target}, ${d.totalSupply}, ${d.offeredTokens}, ${d.soldTokens}, ${d.priceCents}, ${d.createdAt})
            ON CONFLICT (target) DO NOTHING`
          const rows = yield* sql<OfferingRow>`SELECT * FROM invest_offerings WHERE target = ${d.target} FOR UPDATE`
          return toOffering(rows[0])
        }, orUnavailable),
      getOffering: (target) =>
        orUnavailable(sql<OfferingRow>`SELECT * FROM invest_offerings WHERE target = ${target}`).pipe(
          Effect.map((rows) => (rows[0] ? toOffering(rows[0]) : undefined))
        ),
      setSold: (target, soldTokens) =>
        orUnavailable(sql`UPDATE invest_offerings SET sold_tokens = ${soldTokens} WHERE target = ${target}`).pipe(Effect.asVoid),
      insertInvestment: (r) =>
        orUnavailable(sql`
          INSERT INTO investments (id, agent_id, target, tokens, price_cents, amount_cents, journal_entry_id, created_at)
          VALUES (${r.id}, ${r.agentId}, ${r.target}, ${r.tokens}, ${r.priceCents}, ${r.amountCents}, ${r.journalEntryId}, ${r.createdAt})`).pipe(
          Effect.asVoid
        ),
      addToHolding: (agentId, target, tokens, cents, at) =>
        orUnavailable(sql<HoldingRow>`
          INSERT INTO holdings (agent_id, target, tokens, invested_cents, first_invested_at, last_invested_at)
          VALUES (${agentId}, ${target}, ${tokens}, ${cents}, ${at}, ${at})
          ON CONFLICT (agent_id, target) DO UPDATE SET tokens = holdings.tokens + EXCLUDED.tokens,
            invested_cents = holdings.invested_cents + EXCLUDED.invested_cents, last_invested_at = EXCLUDED.last_invested_at
          RETURNING *`).pipe(Effect.map((rows) => toHolding(rows[0]))),
      holdingsFor: (agentIds) =>
        agentIds.length === 0
          ? Effect.succeed([])
          : orUnavailable(sql<HoldingRow>`
              SELECT * FROM holdings WHERE agent_id IN ${sql.in([...agentIds])}
              ORDER BY agent_id COLLATE "C", target COLLATE "C"`).pipe(Effect.map((rows) => rows.map(toHolding))),
      topHolders: (target, n) =>
        orUnavailable(sql<HoldingRow>`
          SELECT * FROM holdings WHERE target = ${target} AND tokens > 0
          ORDER BY tokens DESC, first_invested_at ASC, agent_id COLLATE "C" ASC LIMIT ${n}`).pipe(Effect.map((rows) => rows.map(toHolding))),
      insertProposal: (p) =>
        orUnavailable(sql`
          INSERT INTO proposals (id, title, description, created_by_agent_id, status, created_at, voting_ends_at, closed_at,
            veto_window_ends_at, executed_at, vetoed_at, veto_reason, vetoed_by, snapshot, total_weight, quorum_weight,
            yes_weight, no_weight, abstain_weight, votes_cast)
          VALUES (${p.id}, ${p.title}, ${p.description}, ${p.createdByAgentId}, ${p.status}, ${p.createdAt}, ${p.votingEndsAt},
            ${p.closedAt}, ${p.vetoWindowEndsAt}, ${p.executedAt}, ${p.vetoedAt}, ${p.vetoReason}, ${p.vetoedBy},
            ${JSON.stringify(p.snapshot)}::jsonb, ${p.totalWeight}, ${p.quorumWeight}, ${p.yesWeight}, ${p.noWeight},
            ${p.abstainWeight}, ${p.votesCast})`).pipe(Effect.asVoid),
      getProposal: (id) =>
        orUnavailable(sql<ProposalRow>`SELECT * FROM proposals WHERE id = ${id}`).pipe(Effect.map((rows) => (rows[0] ? toProposal(rows[0]) : undefined))),
      getProposalForUpdate: (id) =>
        orUnavailable(sql<ProposalRow>`SELECT * FROM proposals WHERE id = ${id} FOR UPDATE`).pipe(
          Effect.map((rows) => (rows[0] ? toProposal(rows[0]) : undefined))
        ),
      updateProposal: (p) =>
        orUnavailable(sql`
          UPDATE proposals SET status = ${p.status}, closed_at = ${p.closedAt}, veto_window_ends_at = ${p.vetoWindowEndsAt},
            executed_at = ${p.executedAt}, vetoed_at = ${p.vetoedAt}, veto_reason = ${p.vetoReason}, vetoed_by = ${p.vetoedBy},
            yes_weight = ${p.yesWeight}, no_weight = ${p.noWeight}, abstain_weight = ${p.abstainWeight}, votes_cast = ${p.votesCast}
          WHERE id = ${p.id}`).pipe(Effect.asVoid),
      listProposals: (limit) =>
        orUnavailable(sql<ProposalRow>`SELECT * FROM proposals ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${limit}`).pipe(
          Effect.map((rows) => rows.map(toProposal))
        ),
      insertVote: (v) =>
        orUnavailable(sql`
          INSERT INTO proposal_votes (proposal_id, agent_id, choice, weight, cast_at)
          VALUES (${v.proposalId}, ${v.agentId}, ${v.choice}, ${v.weight}, ${v.castAt})`).pipe(Effect.asVoid),
      getVote: (proposalId, agentId) =>
        orUnavailable(sql<VoteRow>`SELECT * FROM proposal_votes WHERE proposal_id = ${proposalId} AND agent_id = ${agentId}`).pipe(
          Effect.map((rows) => (rows[0] ? Vote.make({ ...rows[0], castAt: iso(rows[0].castAt) }) : undefined))
        )
    }
  })
)
