// Investment and governance: POST /invest, GET /portfolio, proposals (agent API v1), the public
// /invest/api description, and the founder's veto (dashboard session).
import { PolicyViolation } from "../../schema/commerce/wallets.js"
import { Acquisition } from "../../schema/payments/payments.js"
import { HttpApiEndpoint, HttpApiGroup, OpenApi, HttpApiSchema } from "effect/http-api"
import { AGENT_API_PREFIX, DASHBOARD_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { Cursor, PageLimit, QueryInt } from "../../schema/platform/common.js"
import {
  Conflict,
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import {
  CreateProposalBody,
  Holding,
  InvestBody,
  InvestmentResponse,
  NotATopHolder,
  Offering,
  Proposal,
  StakeExhausted,
  TokenInfo,
  VetoBody
} from "../../schema/invest/invest.js"
import { InsufficientFunds } from "../../schema/ledger/ledger.js"
import { AgentAuth, DashboardAuth, RequiredPermission } from "../middleware/auth.js"

export const PortfolioResponse = Schema.Struct({
  agentId: Schema.String,
  /** Acquired projects (checkouts started through POST /acquire and their state), newest first: one keyset page (`limit`, `cursor`). */
  acquisitions: Schema.Array(Acquisition),
  /** Pass back as `cursor` for the older acquisitions; null on the last page. */
  acquisitionsNextCursor: Schema.NullOr(Schema.String),
  holdings: Schema.Array(Holding),
  token: TokenInfo,
  disclaimer: Schema.String
})

export const InvestApiDescription = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  token: TokenInfo,
  stakePercent: Schema.Literal(49),
  platformOffering: Offering,
  projectOfferings: Schema.String,
  aiAgentInvestment: Schema.Boolean,
  governance: Schema.Struct({
    voters: Schema.String,
    weighting: Schema.String,
    oneVote: Schema.String,
    founderVeto: Schema.String,
    lifecycle: Schema.Array(Schema.String)
  }),
  endpoints: Schema.Array(
    Schema.Struct({ method: Schema.String, path: Schema.String, auth: Schema.String, description: Schema.String })
  ),
  disclaimer: Schema.String
})

const IdParam = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
})
const ListLimit = Schema.Struct({ limit: Schema.optional(QueryInt(1, 100)) })
/** The portfolio's acquisitions page: `limit` 1–100 (default 50), `cursor` the previous page's `acquisitionsNextCursor`. */
const PortfolioParams = Schema.Struct({ limit: Schema.optional(PageLimit), cursor: Schema.optional(Cursor) })

export class InvestGroup extends HttpApiGroup.make("invest")
  .add(
    HttpApiEndpoint.post("invest", "/invest", {
      payload: InvestBody,
      success: InvestmentResponse.pipe(HttpApiSchema.status(201)),
      error: [
        InvalidInput,
        NotFound,
        StakeExhausted,
        InsufficientFunds,
        PolicyViolation,
        IdempotencyKeyReused,
        StorageUnavailable
      ]
    })
      .annotate(RequiredPermission, "invest")
      .annotate(
        OpenApi.Summary,
        "Invest wallet credits in platform utility tokens or a project's stake (49% offered in total)"
      )
  )
  .add(
    HttpApiEndpoint.get("portfolio", "/portfolio", {
      query: PortfolioParams,
      success: PortfolioResponse,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Your acquired projects (newest first, a page: limit, cursor) and token holdings")
  )
  .add(
    HttpApiEndpoint.post("createProposal", "/proposals", {
      payload: CreateProposalBody,
      success: Proposal.pipe(HttpApiSchema.status(201)),
      error: [InvalidInput, NotATopHolder, StorageUnavailable]
    })
      .annotate(RequiredPermission, "invest")
      .annotate(OpenApi.Summary, "Open a governance proposal (top 10 token holders only); voters are snapshotted")
  )
  .add(
    HttpApiEndpoint.get("listProposals", "/proposals", {
      query: ListLimit,
      success: Schema.Array(Proposal),
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "invest")
      .annotate(OpenApi.Summary, "Governance proposals, newest first")
  )
  .add(
    HttpApiEndpoint.get("getProposal", "/proposals/:id", {
      params: IdParam,
      success: Proposal,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "invest")
      .annotate(OpenApi.Summary, "A governance proposal: status, snapshot voters and weights, tally, veto")
  )
  .middleware(AgentAuth)
  .prefix(AGENT_API_PREFIX) {}

export class InvestInfoGroup extends HttpApiGroup.make("investInfo").add(
  HttpApiEndpoint.get("investApi", "/invest/api", {
    success: InvestApiDescription,
    error: [InvalidInput, StorageUnavailable]
  }).annotate(OpenApi.Summary, "The investment API: token, stake, live platform offering, governance rules, endpoints")
) {}

export class GovernanceGroup extends HttpApiGroup.make("governance")
  .add(
    HttpApiEndpoint.post("veto", "/proposals/:id/veto", {
      params: IdParam,
      payload: VetoBody,
      success: Proposal,
      error: [InvalidInput, Forbidden, NotFound, Conflict, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "Founder veto of a passed proposal within its veto window (the founder's dashboard session)"
    )
  )
  .middleware(DashboardAuth)
  .prefix(`${DASHBOARD_PREFIX}/governance`) {}
