// Investment and governance suite, run on memory and Postgres: offerings and the 49 % cap (also
// under racing investments), credits through the ledger, holdings, and governance — only the
// top 10 at the snapshot vote, weights are exact, one vote each, lifecycle, and the founder veto.
import { unlimitedWallet } from "../fixtures/money.js"
import { FakeProcessorLive } from "../../src/layers/payments/PaymentProcessor.fake.js"
import { Knowledge } from "../../src/services/knowledge/Knowledge.js"
import { Payments } from "../../src/services/payments/Payments.js"
import { expect } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { seedCatalog } from "../../src/layers/seed/seed.js"
import { Forbidden, NotFound } from "../../src/schema/platform/errors.js"
import { NotATopHolder, StakeExhausted } from "../../src/schema/invest/invest.js"
import { EXTERNAL_GRANTS, InsufficientFunds, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Events } from "../../src/services/events/Events.js"
import { Governance } from "../../src/services/invest/Governance.js"
import { Invest } from "../../src/services/invest/Invest.js"
import { investmentAccount, VETO_WINDOW_MS } from "../../src/services/invest/policy.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Marketplace } from "../../src/services/marketplace/Marketplace.js"
import { seedCatalogProjects } from "../../src/services/projects/Projects.js"
import { ProjectServicesLive } from "../fixtures/services.js"
import { forEachStorage } from "../fixtures/suite.js"

const FOUNDER = "acct_founder_test"
const HOUR = 3600 * 1000

/** A funded agent id (holdings and wallets are per agent; no account needed for investing). */
const investor = (credits: number) =>
  Effect.gen(function* () {
    const id = yield* Effect.flatMap(Ids, (ids) => ids.make("agt"))
    yield* unlimitedWallet(id)
    if (credits > 0) {
      yield* Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${id}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(id),
          amount: credits
        })
      )
    }
    return id
  })

forEachStorage(
  "invest",
  (storage) =>
    Layer.effectDiscard(Effect.andThen(seedCatalog, seedCatalogProjects)).pipe(
      Layer.provideMerge(ProjectServicesLive),
      Layer.provideMerge(Payments.layer),
      Layer.provideMerge(FakeProcessorLive),
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, Events.layer, Keys.layer, Marketplace.layer, Knowledge.layer)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    it.effect("the platform offering: 100,000,000 tokens, 49,000,000 offered at 10 cents", () =>
      Effect.gen(function* () {
        const invest = yield* Invest
        const o = yield* invest.offering()
        expect(o).toMatchObject({
          target: { type: "platform", id: "platform" },
          unit: "ACT",
          totalSupply: 100_000_000,
          offeredTokens: 49_000_000,
          stakePercent: 49,
          priceCentsPerToken: 10,
          valuationCents: 1_000_000_000
        })
        const p = yield* invest.offering("prj_indica_ai")
        expect(p).toMatchObject({
          unit: "ACT:prj_indica_ai",
          totalSupply: 10_000,
          offeredTokens: 4_900,
          priceCentsPerToken: 8,
          valuationCents: 80_000
        })
        expect(yield* Effect.flip(invest.offering("prj_nope"))).toBeInstanceOf(NotFound)
      })
    )

    it.effect("investing moves credits through the ledger and builds a holding, with the disclaimer", () =>
      Effect.gen(function* () {
        const invest = yield* Invest
        const ledger = yield* Ledger
        const agent = yield* investor(50_000)
        const before = (yield* invest.offering()).soldTokens
        const r = yield* invest.invest(agent, { tokens: 1_000 })
        expect(r.investment).toMatchObject({
          agentId: agent,
          tokens: 1_000,
          priceCentsPerToken: 10,
          amountCents: 10_000,
          unit: "ACT"
        })
        expect(r.holding).toMatchObject({ tokens: 1_000, investedCents: 10_000, ownershipPercent: 0.001 })
        expect(r.offering.soldTokens).toBe(before + 1_000)
        expect(r.disclaimer).toBe(
          "Agent Commerce Utility Token (ACT) is a utility token, not a security. Jurisdictions: Brazil and Paraguay. Projections and valuations are estimates, not investment advice."
        )
        expect(r.token).toMatchObject({ symbol: "ACT", type: "utility" })
        // amountCents buys whole tokens only; the remainder is not charged.
        const r2 = yield* invest.invest(agent, { amountCents: 1_005 })
        expect(r2.investment).toMatchObject({ tokens: 100, amountCents: 1_000 })
        expect(r2.holding).toMatchObject({ tokens: 1_100, investedCents: 11_000 })
        expect(yield* ledger.balance(walletAccount(agent))).toBe(39_000)
        const entries = yield* ledger.entriesByReference(r.investment.id)
        expect(entries.map((e) => [e.kind, e.id])).toEqual([["investment", r.investment.journalEntryId]])
        expect(entries[0].postings).toEqual(
          expect.arrayContaining([
            { account: walletAccount(agent), amount: -10_000 },
            { account: investmentAccount("platform"), amount: 10_000 }
          ])
        )
        const held = yield* invest.holdings([agent])
        expect(held.holdings.map((h) => [h.target.id, h.tokens])).toEqual([["platform", 1_100]])
        expect(held.disclaimer).toMatch(/not a security/)
        expect((yield* ledger.check).ok).toBe(true)
      })
    )

    it.effect("refuses bad amounts, unknown projects and unfunded wallets without selling anything", () =>
      Effect.gen(function* () {
        const invest = yield* Invest
        const agent = yield* investor(500)
        expect(yield* Effect.flip(invest.invest(agent, {}))).toMatchObject({ _tag: "InvalidInput", field: "tokens" })
        expect(yield* Effect.flip(invest.invest(agent, { tokens: 1, amountCents: 10 }))).toMatchObject({
          _tag: "InvalidInput"
        })
        expect(yield* Effect.flip(invest.invest(agent, { amountCents: 9 }))).toMatchObject({
          _tag: "InvalidInput",
          field: "amountCents"
        })
        expect(yield* Effect.flip(invest.invest(agent, { projectId: "prj_nope", tokens: 1 }))).toBeInstanceOf(NotFound)
        const sold = (yield* invest.offering("prj_habitly")).soldTokens
        const e = yield* Effect.flip(invest.invest(agent, { projectId: "prj_habitly", tokens: 100 }))
        expect(e).toBeInstanceOf(InsufficientFunds)
        expect(e).toMatchObject({ balanceCents: 500, requiredCents: 2_000 })
        expect((yield* invest.offering("prj_habitly")).soldTokens).toBe(sold)
        expect((yield* invest.holdings([agent])).holdings).toEqual([])
      })
    )

    it.effect("the 49% stake is never exceeded; a refusal states what remains", () =>
      Effect.gen(function* () {
        const invest = yield* Invest
        const a = yield* investor(1_000_000)
        const b = yield* investor(1_000_000)
        yield* invest.invest(a, { projectId: "prj_kit_marca", tokens: 4_000 }) // 38 cents each
        const e = yield* Effect.flip(invest.invest(b, { projectId: "prj_kit_marca", tokens: 1_000 }))
        expect(e).toBeInstanceOf(StakeExhausted)
        expect(e).toMatchObject({
          requestedTokens: 1_000,
          remainingTokens: 900,
          remainingCents: 34_200,
          target: { type: "project", id: "prj_kit_marca" }
        })
        expect(e.message).toBe("only 900 of the 4900 tokens of the 49% stake remain (34200 cents); 1000 requested")
        const rest = yield* invest.invest(b, { projectId: "prj_kit_marca", tokens: 900 })
        expect(rest.offering).toMatchObject({ soldTokens: 4_900, remainingTokens: 0, remainingCents: 0 })
        expect(rest.holding.ownershipPercent).toBe(9)
        expect(yield* Effect.flip(invest.invest(b, { projectId: "prj_kit_marca", tokens: 1 }))).toMatchObject({
          _tag: "StakeExhausted",
          remainingTokens: 0
        })
        // Never more than 49% of the supply held in total.
        const held = yield* invest.holdings([a, b])
        expect(held.holdings.reduce((s, h) => s + h.tokens, 0)).toBe(4_900)
        expect(yield* Effect.flatMap(Ledger, (l) => l.balance(investmentAccount("prj_kit_marca")))).toBe(4_900 * 38)
      })
    )

    it.effect(
      "the cap holds under 30 racing investments (exactly 16 of 300 units fit in 4,900)",
      () =>
        Effect.gen(function* () {
          const invest = yield* Invest
          const agents = yield* Effect.forEach(
            Array.from({ length: 30 }, () => 0),
            () => investor(10_000)
          )
          const results = yield* Effect.forEach(
            agents,
            (agent) => Effect.result(invest.invest(agent, { projectId: "prj_indica_ai", tokens: 300 })),
            {
              concurrency: "unbounded"
            }
          )
          const ok = results.filter((r) => r._tag === "Success")
          const refused = results.flatMap((r) =>
            r._tag === "Failure" && r.failure._tag === "StakeExhausted" ? [r.failure] : []
          )
          expect(ok).toHaveLength(16)
          expect(refused).toHaveLength(14)
          expect(refused.every((e) => e.remainingTokens === 100 && e.remainingCents === 800)).toBe(true)
          const o = yield* invest.offering("prj_indica_ai")
          expect(o).toMatchObject({ soldTokens: 4_800, remainingTokens: 100 })
          const held = yield* invest.holdings(agents)
          expect(held.holdings.reduce((s, h) => s + h.tokens, 0)).toBe(4_800)
          expect(yield* Effect.flatMap(Ledger, (l) => l.balance(investmentAccount("prj_indica_ai")))).toBe(4_800 * 8)
          expect((yield* Effect.flatMap(Ledger, (l) => l.check)).ok).toBe(true)
        }),
      { timeout: 60_000 }
    )

    it.effect(
      "governance: only the top 10 at the snapshot vote, weighted exactly, once each; a veto overturns a pass",
      () =>
        Effect.gen(function* () {
          const invest = yield* Invest
          const governance = yield* Governance
          // 12 holders of distinct sizes, far above any platform holdings of earlier tests.
          const agents = yield* Effect.forEach(
            Array.from({ length: 12 }, (_, i) => i),
            () => investor(100_000_000)
          )
          for (let i = 0; i < 12; i++) yield* invest.invest(agents[i], { tokens: (i + 1) * 100_000 })
          const [a1, a2, a3, , , , , , , a10, a11, a12] = agents
          // agents[11] holds 1.2M (rank 1) … agents[2] holds 300k (rank 10); agents[0..1] (100k, 200k) are outside.
          expect(
            yield* Effect.flip(governance.createProposal(a1, { title: "Lower fees", description: "" }))
          ).toBeInstanceOf(NotATopHolder)
          const p = yield* governance.createProposal(a3, {
            title: "Lower fees",
            description: "Cut the fee to 12%",
            votingPeriodHours: 48
          })
          expect(p.status).toBe("open")
          expect(p.snapshot.voters.map((v) => [v.rank, v.weight])).toEqual(
            Array.from({ length: 10 }, (_, i) => [i + 1, (12 - i) * 100_000])
          )
          expect(p.snapshot.voters[0].agentId).toBe(a12)
          expect(p.snapshot.totalWeight).toBe(7_500_000)
          expect(p.quorumWeight).toBe(3_750_000)
          expect(Date.parse(p.votingEndsAt) - Date.parse(p.createdAt)).toBe(48 * HOUR)

          // Outside the top 10: refused, even after buying more once the snapshot was taken.
          expect(yield* Effect.flip(governance.vote(a1, { proposalId: p.id, choice: "yes" }))).toBeInstanceOf(
            NotATopHolder
          )
          yield* invest.invest(a2, { tokens: 2_000_000 })
          expect(yield* Effect.flip(governance.vote(a2, { proposalId: p.id, choice: "yes" }))).toMatchObject({
            _tag: "NotATopHolder",
            proposalId: p.id
          })

          const v1 = yield* governance.vote(a12, { proposalId: p.id, choice: "yes" }) // 1.2M
          expect(v1.vote).toMatchObject({ weight: 1_200_000, choice: "yes" })
          yield* governance.vote(a11, { proposalId: p.id, choice: "no" }) // 1.1M
          yield* governance.vote(a10, { proposalId: p.id, choice: "yes" }) // 1M
          const v4 = yield* governance.vote(a3, { proposalId: p.id, choice: "abstain" }) // 300k
          expect(v4.proposal.tally).toEqual({ yes: 2_200_000, no: 1_100_000, abstain: 300_000, votesCast: 4 })
          expect(v4.proposal.status).toBe("open")
          // One vote each: a second is refused, and the tally does not move.
          expect(yield* Effect.flip(governance.vote(a12, { proposalId: p.id, choice: "no" }))).toMatchObject({
            _tag: "Conflict",
            state: "voted"
          })
          expect((yield* governance.getProposal(p.id)).tally.yes).toBe(2_200_000)

          // The window closes: 3.6M of 7.5M voted (quorum 3.75M not reached) → rejected, though yes > no.
          yield* TestClock.adjust(48 * HOUR)
          const closed = yield* governance.getProposal(p.id)
          expect(closed.status).toBe("rejected")
          expect(closed.closedAt).toBe(p.votingEndsAt)
          expect(yield* Effect.flip(governance.vote(agents[4], { proposalId: p.id, choice: "yes" }))).toMatchObject({
            _tag: "Conflict",
            state: "rejected"
          })
          expect(yield* Effect.flip(governance.veto(FOUNDER, p.id, "no"))).toMatchObject({
            _tag: "Conflict",
            state: "rejected"
          })

          // A second proposal reaches quorum and passes; the founder vetoes it.
          const q = yield* governance.createProposal(a12, {
            title: "New template category",
            description: "Add Education"
          })
          expect(q.snapshot.voters[0]).toMatchObject({ agentId: a2, weight: 2_200_000 }) // a2 now ranks first
          expect(q.snapshot.totalWeight).toBe(9_400_000)
          yield* governance.vote(a2, { proposalId: q.id, choice: "yes" }) // 2.2M
          yield* governance.vote(a12, { proposalId: q.id, choice: "yes" }) // 1.2M
          yield* governance.vote(a11, { proposalId: q.id, choice: "no" }) // 1.1M
          yield* governance.vote(a10, { proposalId: q.id, choice: "yes" }) // 1M: 5.5M of 9.4M voted, quorum 4.7M met
          yield* TestClock.adjust(72 * HOUR)
          const passed = yield* governance.getProposal(q.id)
          expect(passed).toMatchObject({
            status: "passed",
            quorumWeight: 4_700_000,
            tally: { yes: 4_400_000, no: 1_100_000, abstain: 0, votesCast: 4 }
          })
          expect(Date.parse(passed.vetoWindowEndsAt!) - Date.parse(passed.closedAt!)).toBe(VETO_WINDOW_MS)
          expect(yield* Effect.flip(governance.veto("acct_someone_else", q.id, "mine"))).toBeInstanceOf(Forbidden)
          const vetoed = yield* governance.veto(FOUNDER, q.id, "Out of scope for this quarter")
          expect(vetoed.status).toBe("vetoed")
          expect(vetoed.veto).toMatchObject({ reason: "Out of scope for this quarter", byAccountId: FOUNDER })
          expect((yield* governance.getProposal(q.id)).status).toBe("vetoed")
          expect(yield* Effect.flip(governance.veto(FOUNDER, q.id, "again"))).toMatchObject({
            _tag: "Conflict",
            state: "vetoed"
          })

          // A third passes early (every snapshot voter voted) and, unvetoed, is executed when the veto window ends.
          const r = yield* governance.createProposal(a12, { title: "Publish a roadmap", description: "" })
          for (const v of r.snapshot.voters)
            yield* governance.vote(v.agentId, { proposalId: r.id, choice: v.rank <= 6 ? "yes" : "no" })
          const early = yield* governance.getProposal(r.id)
          expect(early.status).toBe("passed")
          expect(early.closedAt).toBe(early.createdAt)
          yield* TestClock.adjust(VETO_WINDOW_MS)
          const executed = yield* governance.getProposal(r.id)
          expect(executed).toMatchObject({ status: "executed", executedAt: early.vetoWindowEndsAt })
          expect(yield* Effect.flip(governance.veto(FOUNDER, r.id, "too late"))).toMatchObject({
            _tag: "Conflict",
            state: "executed"
          })
          expect((yield* governance.listProposals(10)).map((x) => x.id).slice(0, 3)).toEqual([r.id, q.id, p.id])
          expect(yield* Effect.flip(governance.getProposal("prop_missing"))).toBeInstanceOf(NotFound)
        })
    )
  },
  { founderAccountId: Option.some(FOUNDER) }
)
