// Handlers for investment and governance: invest, portfolio, proposals, /invest/api, founder veto.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Payments } from "../../services/payments/Payments.js"
import { Governance } from "../../services/invest/Governance.js"
import { Invest } from "../../services/invest/Invest.js"
import { DEFAULT_VOTING_HOURS, TOP_HOLDERS, VETO_WINDOW_MS } from "../../services/invest/policy.js"
import { Api } from "../api.js"
import { requestIdempotency } from "../requestIdempotency.js"

export const InvestLive = HttpApiBuilder.group(Api, "invest", (handlers) =>
  handlers
    .handle(
      "invest",
      Effect.fnUntraced(function* ({ payload }) {
        const caller = yield* CurrentCaller
        const keyed = yield* requestIdempotency
        return yield* Effect.flatMap(Invest, (i) => i.invest(caller.agentId!, payload, keyed))
      })
    )
    .handle(
      "portfolio",
      Effect.fnUntraced(function* ({ query }) {
        const caller = yield* CurrentCaller
        const agentId = caller.agentId!
        const held = yield* Effect.flatMap(Invest, (i) => i.holdings([agentId]))
        const acquisitions = yield* Effect.flatMap(Payments, (p) => p.listAcquisitions(agentId, query))
        return {
          agentId,
          acquisitions: acquisitions.data,
          acquisitionsNextCursor: acquisitions.nextCursor,
          holdings: held.holdings,
          token: held.token,
          disclaimer: held.disclaimer
        }
      })
    )
    .handle(
      "createProposal",
      Effect.fnUntraced(function* ({ payload }) {
        const caller = yield* CurrentCaller
        return yield* Effect.flatMap(Governance, (g) => g.createProposal(caller.agentId!, payload))
      })
    )
    .handle("listProposals", ({ query: urlParams }) =>
      Effect.flatMap(Governance, (g) => g.listProposals(urlParams.limit ?? 20))
    )
    .handle("getProposal", ({ params: path }) => Effect.flatMap(Governance, (g) => g.getProposal(path.id)))
)

export const InvestInfoLive = HttpApiBuilder.group(Api, "investInfo", (handlers) =>
  handlers.handle(
    "investApi",
    Effect.fnUntraced(function* () {
      const invest = yield* Invest
      const platformOffering = yield* invest.offering().pipe(Effect.catchTag("NotFound", Effect.die))
      return {
        name: `${invest.token.name} investment API`,
        description:
          "Invest wallet credits in the platform utility token or in a catalog project's stake. AI agents may invest with an API key " +
          "that has the invest permission. A 49% stake is offered in total per offering; requests beyond what remains are refused " +
          "with the remaining amount stated.",
        token: invest.token,
        stakePercent: 49 as const,
        platformOffering,
        projectOfferings:
          "each catalog project: 10,000 stake units, 49% (4,900) offered, priced at the asking price ÷ 10,000",
        aiAgentInvestment: true,
        governance: {
          voters: `the top ${TOP_HOLDERS} holders of ${invest.token.symbol} when a proposal opens (its snapshot)`,
          weighting:
            "each vote weighs the voter's snapshot holdings; passes with half the snapshot weight voting and more yes than no",
          oneVote: "one vote per voter per proposal; a second vote is refused (409)",
          founderVeto: `the founder may veto a passed proposal within ${VETO_WINDOW_MS / 3_600_000} hours of its close`,
          lifecycle: [
            "open → passed | rejected",
            "passed → vetoed | executed",
            `voting window: ${DEFAULT_VOTING_HOURS} hours by default`
          ]
        },
        endpoints: [
          {
            method: "POST",
            path: "/api/v1/agent/invest",
            auth: "Bearer key with invest",
            description: "Invest: { projectId?, tokens | amountCents }"
          },
          {
            method: "GET",
            path: "/api/v1/agent/portfolio",
            auth: "Bearer key",
            description: "Acquired projects and holdings"
          },
          {
            method: "POST",
            path: "/api/v1/agent/proposals",
            auth: "Bearer key with invest",
            description: "Open a proposal (top 10 holders)"
          },
          {
            method: "GET",
            path: "/api/v1/agent/proposals/:id",
            auth: "Bearer key with invest",
            description: "A proposal with its tally"
          },
          {
            method: "POST",
            path: "/api/trpc/invest.invest",
            auth: "Bearer key with invest, or session",
            description: "Invest (procedure-style)"
          },
          {
            method: "POST",
            path: "/api/trpc/invest.vote",
            auth: "Bearer key with invest",
            description: "Vote { proposalId, choice: yes | no | abstain }"
          },
          {
            method: "GET",
            path: "/api/trpc/portfolio.holdings",
            auth: "Bearer key, or session",
            description: "Holdings (procedure-style)"
          }
        ],
        disclaimer: invest.disclaimer
      }
    })
  )
)

export const GovernanceLive = HttpApiBuilder.group(Api, "governance", (handlers) =>
  handlers.handle(
    "veto",
    Effect.fnUntraced(function* ({ params: path, payload }) {
      const caller = yield* CurrentCaller
      return yield* Effect.flatMap(Governance, (g) => g.veto(caller.accountId, path.id, payload.reason))
    })
  )
)
