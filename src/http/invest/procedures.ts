// Authenticated procedures of the investment surface (spec §4.2): invest.invest, invest.vote
// (Governance), portfolio.holdings. A key acts as its agent; a dashboard session names one of its agents.
import { Effect, Schema } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { HoldingsResponse, InvestBody, InvestmentResponse, VoteBody, VoteResponse } from "../../schema/invest/invest.js"
import { AgentId } from "../../schema/keys/keys.js"
import { type Caller, CurrentCaller } from "../../services/keys/Caller.js"
import type { Transactor } from "../../services/platform/Db.js"
import { Governance } from "../../services/invest/Governance.js"
import { Invest } from "../../services/invest/Invest.js"
import { Keys } from "../../services/keys/Keys.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { authenticated, mutation, query, type Procedure } from "../trpc/procedure.js"

const AsAgent = Schema.Struct({ agentId: Schema.optional(AgentId) })

/** The agent a call acts for: the key's agent, or (for a session) the named agent of the account. */
const actingAgent = Effect.fnUntraced(function* (caller: Caller, agentId: string | undefined) {
  if (caller.agentId !== undefined) {
    if (agentId !== undefined && agentId !== caller.agentId) {
      return yield* Effect.fail(
        new InvalidInput({ message: "agentId: a key acts only as its own agent", field: "agentId" })
      )
    }
    return caller.agentId
  }
  if (agentId === undefined) {
    return yield* Effect.fail(
      new InvalidInput({ message: "agentId: a dashboard session must name one of its agents", field: "agentId" })
    )
  }
  const agent = yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
  return agent.id
})

export const investProcedures = {
  "invest.invest": mutation({
    description: "Invest wallet credits in the platform token or a project's stake",
    access: authenticated("invest"),
    output: InvestmentResponse,
    input: Schema.Struct({ ...InvestBody.fields, ...AsAgent.fields }),
    handler: Effect.fnUntraced(function* ({ agentId, ...body }) {
      const caller = yield* CurrentCaller
      const acting = yield* actingAgent(caller, agentId)
      const keyed = yield* requestIdempotency
      return yield* Effect.flatMap(Invest, (i) => i.invest(acting, body, keyed))
    })
  }),
  "invest.vote": mutation({
    description: "Vote on a governance proposal (top 10 holders at its snapshot; one vote each)",
    access: authenticated("invest"),
    output: VoteResponse,
    input: Schema.Struct({ ...VoteBody.fields, ...AsAgent.fields }),
    handler: Effect.fnUntraced(function* ({ agentId, ...body }) {
      const caller = yield* CurrentCaller
      const acting = yield* actingAgent(caller, agentId)
      return yield* Effect.flatMap(Governance, (g) => g.vote(acting, body))
    })
  }),
  "portfolio.holdings": query({
    description: "Token holdings of the calling agent (a session: of every agent of the account, or the one named)",
    access: authenticated(),
    output: HoldingsResponse,
    input: Schema.UndefinedOr(AsAgent),
    handler: Effect.fnUntraced(function* (input) {
      const caller = yield* CurrentCaller
      const agentIds =
        caller.agentId !== undefined || input?.agentId !== undefined
          ? [yield* actingAgent(caller, input?.agentId)]
          : (yield* Effect.flatMap(Keys, (k) => k.listAgents(caller.accountId))).map((a) => a.id)
      return yield* Effect.flatMap(Invest, (i) => i.holdings(agentIds))
    })
  })
} satisfies Record<string, Procedure<Invest | Governance | Keys | CurrentCaller | Transactor>>
