// Postgres store for offerings (row-locked per investment so the 49 % cap holds under concurrency),
// investments, holdings, governance proposals and votes. Rows are decoded with their row schemas.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { ProposalStatus, SnapshotVoter, Vote, VoteChoice } from "../../schema/invest/invest.js"
import { InvestStore } from "../../services/invest/InvestStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

const OfferingRow = Schema.Struct({
  target: Schema.String,
  totalSupply: Schema.Number,
  offeredTokens: Schema.Number,
  soldTokens: Schema.Number,
  priceCents: Schema.Number,
  createdAt: IsoTimestamp
})

const HoldingRow = Schema.Struct({
  agentId: Schema.String,
  target: Schema.String,
  tokens: Schema.Number,
  investedCents: Schema.Number,
  firstInvestedAt: IsoTimestamp,
  lastInvestedAt: IsoTimestamp
})

const InvestmentRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  target: Schema.String,
  tokens: Schema.Number,
  priceCents: Schema.Number,
  amountCents: Schema.Number,
  journalEntryId: Schema.String,
  createdAt: IsoTimestamp
})
const firstInvestment = decodeFirst(InvestmentRow)
const firstHolding = decodeFirst(HoldingRow)

const ProposalRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  description: Schema.String,
  createdByAgentId: Schema.String,
  status: ProposalStatus,
  createdAt: IsoTimestamp,
  votingEndsAt: IsoTimestamp,
  closedAt: IsoTimestampOrNull,
  vetoWindowEndsAt: IsoTimestampOrNull,
  executedAt: IsoTimestampOrNull,
  vetoedAt: IsoTimestampOrNull,
  vetoReason: Schema.NullOr(Schema.String),
  vetoedBy: Schema.NullOr(Schema.String),
  snapshot: Schema.Array(SnapshotVoter),
  totalWeight: Schema.Number,
  quorumWeight: Schema.Number,
  yesWeight: Schema.Number,
  noWeight: Schema.Number,
  abstainWeight: Schema.Number,
  votesCast: Schema.Number
})

const VoteRow = Schema.Struct({
  proposalId: Schema.String,
  agentId: Schema.String,
  choice: VoteChoice,
  weight: Schema.Number,
  castAt: IsoTimestamp
})

/** The one row a statement must return; none is a defect, as it was when read by index. */
const theRow =
  <A, I>(row: Schema.Codec<A, I>) =>
  (rows: ReadonlyArray<unknown>) =>
    Effect.flatMap(decodeFirst(row)(rows), (r) =>
      r === undefined ? Effect.die(new Error("the statement returned no row")) : Effect.succeed(r)
    )

export const PgInvestStore = Layer.effect(
  InvestStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return InvestStore.of({
      lockOffering: Effect.fnUntraced(function* (d) {
        yield* sql`
            INSERT INTO invest_offerings (target, total_supply, offered_tokens, sold_tokens, price_cents, created_at)
            VALUES (${d.target}, ${d.totalSupply}, ${d.offeredTokens}, ${d.soldTokens}, ${d.priceCents}, ${d.createdAt})
            ON CONFLICT (target) DO NOTHING`
        const rows = yield* sql`SELECT * FROM invest_offerings WHERE target = ${d.target} FOR UPDATE`
        return yield* theRow(OfferingRow)(rows)
      }, orUnavailable),
      getOffering: (target) =>
        orUnavailable(sql`SELECT * FROM invest_offerings WHERE target = ${target}`).pipe(
          Effect.flatMap(decodeFirst(OfferingRow))
        ),
      setSold: (target, soldTokens) =>
        orUnavailable(sql`UPDATE invest_offerings SET sold_tokens = ${soldTokens} WHERE target = ${target}`).pipe(
          Effect.asVoid
        ),
      insertInvestment: (r) =>
        orUnavailable(sql`
          INSERT INTO investments (id, agent_id, target, tokens, price_cents, amount_cents, journal_entry_id,
            created_at)
          VALUES (${r.id}, ${r.agentId}, ${r.target}, ${r.tokens}, ${r.priceCents}, ${r.amountCents},
            ${r.journalEntryId}, ${r.createdAt})`).pipe(Effect.asVoid),
      getInvestment: (id) =>
        orUnavailable(
          sql`SELECT id, agent_id, target, tokens, price_cents, amount_cents, journal_entry_id, created_at
              FROM investments WHERE id = ${id}`
        ).pipe(Effect.flatMap(firstInvestment)),
      getHolding: (agentId, target) =>
        orUnavailable(
          sql`SELECT agent_id, target, tokens, invested_cents, first_invested_at, last_invested_at
              FROM holdings WHERE agent_id = ${agentId} AND target = ${target}`
        ).pipe(Effect.flatMap(firstHolding)),
      addToHolding: (agentId, target, tokens, cents, at) =>
        orUnavailable(sql`
          INSERT INTO holdings (agent_id, target, tokens, invested_cents, first_invested_at, last_invested_at)
          VALUES (${agentId}, ${target}, ${tokens}, ${cents}, ${at}, ${at})
          ON CONFLICT (agent_id, target) DO UPDATE SET tokens = holdings.tokens + EXCLUDED.tokens,
            invested_cents = holdings.invested_cents + EXCLUDED.invested_cents,
            last_invested_at = EXCLUDED.last_invested_at
          RETURNING *`).pipe(Effect.flatMap(theRow(HoldingRow))),
      holdingsFor: (agentIds) =>
        agentIds.length === 0
          ? Effect.succeed([])
          : orUnavailable(sql`
              SELECT * FROM holdings WHERE agent_id IN ${sql.in([...agentIds])}
              ORDER BY agent_id COLLATE "C", target COLLATE "C"`).pipe(Effect.flatMap(decodeRows(HoldingRow))),
      topHolders: (target, n) =>
        orUnavailable(sql`
          SELECT * FROM holdings WHERE target = ${target} AND tokens > 0
          ORDER BY tokens DESC, first_invested_at ASC, agent_id COLLATE "C" ASC LIMIT ${n}`).pipe(
          Effect.flatMap(decodeRows(HoldingRow))
        ),
      insertProposal: (p) =>
        orUnavailable(sql`
          INSERT INTO proposals (id, title, description, created_by_agent_id, status, created_at, voting_ends_at,
            closed_at, veto_window_ends_at, executed_at, vetoed_at, veto_reason, vetoed_by, snapshot, total_weight,
            quorum_weight, yes_weight, no_weight, abstain_weight, votes_cast)
          VALUES (${p.id}, ${p.title}, ${p.description}, ${p.createdByAgentId}, ${p.status}, ${p.createdAt},
            ${p.votingEndsAt}, ${p.closedAt}, ${p.vetoWindowEndsAt}, ${p.executedAt}, ${p.vetoedAt}, ${p.vetoReason},
            ${p.vetoedBy}, ${JSON.stringify(p.snapshot)}::jsonb, ${p.totalWeight}, ${p.quorumWeight}, ${p.yesWeight},
            ${p.noWeight}, ${p.abstainWeight}, ${p.votesCast})`).pipe(Effect.asVoid),
      getProposal: (id) =>
        orUnavailable(sql`SELECT * FROM proposals WHERE id = ${id}`).pipe(Effect.flatMap(decodeFirst(ProposalRow))),
      getProposalForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM proposals WHERE id = ${id} FOR UPDATE`).pipe(
          Effect.flatMap(decodeFirst(ProposalRow))
        ),
      updateProposal: (p) =>
        orUnavailable(sql`
          UPDATE proposals SET status = ${p.status}, closed_at = ${p.closedAt},
            veto_window_ends_at = ${p.vetoWindowEndsAt}, executed_at = ${p.executedAt}, vetoed_at = ${p.vetoedAt},
            veto_reason = ${p.vetoReason}, vetoed_by = ${p.vetoedBy}, yes_weight = ${p.yesWeight},
            no_weight = ${p.noWeight}, abstain_weight = ${p.abstainWeight}, votes_cast = ${p.votesCast}
          WHERE id = ${p.id}`).pipe(Effect.asVoid),
      listProposals: (limit) =>
        orUnavailable(sql`SELECT * FROM proposals ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${limit}`).pipe(
          Effect.flatMap(decodeRows(ProposalRow))
        ),
      insertVote: (v) =>
        orUnavailable(sql`
          INSERT INTO proposal_votes (proposal_id, agent_id, choice, weight, cast_at)
          VALUES (${v.proposalId}, ${v.agentId}, ${v.choice}, ${v.weight}, ${v.castAt})`).pipe(Effect.asVoid),
      getVote: (proposalId, agentId) =>
        orUnavailable(
          sql`SELECT * FROM proposal_votes WHERE proposal_id = ${proposalId} AND agent_id = ${agentId}`
        ).pipe(
          Effect.flatMap(decodeFirst(VoteRow)),
          Effect.map((v) => (v ? Vote.make(v) : undefined))
        )
    })
  })
)
