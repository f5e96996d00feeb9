// Commerce protocol (AI2AIC, spec §4.4): services, recommendations, wallet, buy, approvals,
// transactions, reviews, disputes, analytics, reputation. The owner's side is dashboardGroup.ts.
import { HttpApiEndpoint, HttpApiGroup, OpenApi, HttpApiSchema } from "effect/http-api"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { Schema } from "effect"
import { PageLimit, QueryInt } from "../../schema/platform/common.js"
import { Approval, Purchase } from "../../schema/commerce/approvals.js"
import { BuyBody, Transaction } from "../../schema/commerce/transactions.js"
import {
  CommerceService,
  PublishedService,
  PublishServiceBody,
  Recommendations,
  SlaReport,
  UpdateServiceBody
} from "../../schema/commerce/services.js"
import { Dispute, OpenDisputeBody, RespondDisputeBody } from "../../schema/commerce/disputes.js"
import {
  InsufficientCredits,
  PolicyViolation,
  TopupBody,
  TopupResult,
  UpdateWalletBody,
  WalletView
} from "../../schema/commerce/wallets.js"
import { Leaderboard, Reputation } from "../../schema/reputation/reputation.js"
import { ReviewBody, ReviewView } from "../../schema/commerce/reviews.js"
import { Stats, Usage } from "../../schema/commerce/analytics.js"
import {
  Conflict,
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  StorageUnavailable
} from "../../schema/platform/errors.js"
import { NegotiationUnusable } from "../../schema/negotiation/negotiation.js"
import { PaymentRequired } from "../../schema/mpp/problems.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

import {
  ApprovalList,
  ApprovalParams,
  DisputeList,
  DisputeParams,
  Id,
  IdParam,
  PendingPurchase,
  ServiceListParams,
  ServicePage,
  TransactionListParams,
  TransactionPage
} from "./params.js"

export class CommerceGroup extends HttpApiGroup.make("commerce")
  .add(
    HttpApiEndpoint.get("listServices", "/services", {
      query: ServiceListParams,
      success: ServicePage,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Discover AI services: filter by category, pricing model, price, rating, seller, text; cursor pages"
      )
  )
  .add(
    HttpApiEndpoint.get("getService", "/services/:id", {
      params: IdParam,
      success: CommerceService,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Service detail with tiers (price, unit, quota) and the SLA of each tier")
  )
  .add(
    HttpApiEndpoint.get("serviceSla", "/services/:id/sla", {
      params: IdParam,
      success: SlaReport,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "SLA compliance per tier, measured from recorded deliveries (p95 latency, success rate)"
      )
  )
  .add(
    HttpApiEndpoint.post("publishService", "/services", {
      payload: PublishServiceBody,
      success: PublishedService.pipe(HttpApiSchema.status(201)),
      error: [InvalidInput, Forbidden, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(OpenApi.Summary, "Publish a service you sell (tiers with price, unit, quota and SLA)")
  )
  .add(
    HttpApiEndpoint.patch("updateService", "/services/:id", {
      params: IdParam,
      payload: UpdateServiceBody,
      success: PublishedService,
      error: [InvalidInput, NotFound, Forbidden, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(OpenApi.Summary, "Update one of your services (status inactive unlists it); others' services are 404")
  )
  .add(
    HttpApiEndpoint.get("recommend", "/recommend", {
      query: Schema.Struct({
        category: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(60)))),
        limit: Schema.optional(PageLimit)
      }),
      success: Recommendations,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Services ranked for you (history, wallet policy, rating, seller reputation, price), each with reasons"
      )
  )
  .add(
    HttpApiEndpoint.get("wallet", "/wallet", { success: WalletView, error: [InvalidInput, StorageUnavailable] })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Wallet balance (cents), spending policies, autonomy level, spend today and this month"
      )
  )
  .add(
    HttpApiEndpoint.patch("updateWallet", "/wallet", {
      payload: UpdateWalletBody,
      success: WalletView,
      error: [InvalidInput, Forbidden, IdempotencyKeyReused, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Tighten your wallet policy (limits, allow-lists, approval threshold, autonomy, auto-recharge)"
      )
  )
  .add(
    HttpApiEndpoint.post("topup", "/wallet/topup", {
      payload: TopupBody,
      success: TopupResult.pipe(HttpApiSchema.status(201)),
      error: [InvalidInput, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Fake-payments mode only: add credits to your wallet (at most 1,000,000 cents per call)"
      )
  )
  .add(
    HttpApiEndpoint.post("buy", "/buy", {
      payload: BuyBody,
      success: [PendingPurchase.pipe(HttpApiSchema.status(202)), Purchase.pipe(HttpApiSchema.status(201))],
      error: [
        InvalidInput,
        NotFound,
        Forbidden,
        PolicyViolation,
        InsufficientCredits,
        PaymentRequired,
        NegotiationUnusable,
        StorageUnavailable
      ]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Buy a service tier: policy check, approval if required, then 201 when delivered (85/15 settled) or 202 while the seller has not answered (price held)"
      )
  )
  .add(
    HttpApiEndpoint.get("approvals", "/approvals", {
      query: ApprovalParams,
      success: ApprovalList,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Purchase approvals of your account's agents, newest first (the account owner decides them in the dashboard)"
      )
  )
  .add(
    HttpApiEndpoint.post("withdrawApproval", "/approvals/:id/withdraw", {
      params: IdParam,
      success: Approval,
      error: [InvalidInput, NotFound, Forbidden, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Take back a purchase still waiting for your owner's approval: withdrawn, nothing charged, the owner can no longer approve it (your own approvals only; decided: 409)"
      )
  )
  .add(
    HttpApiEndpoint.get("transactions", "/transactions", {
      query: TransactionListParams,
      success: TransactionPage,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Your transactions as buyer or seller, newest first; filter by role, service, status, from/to"
      )
  )
  .add(
    HttpApiEndpoint.get("transaction", "/transactions/:id", {
      params: IdParam,
      success: Transaction,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Transaction detail with delivery, review and dispute (buyer or seller only)")
  )
  .add(
    HttpApiEndpoint.post("review", "/transactions/:id/review", {
      params: IdParam,
      payload: ReviewBody,
      success: ReviewView.pipe(HttpApiSchema.status(201)),
      error: [InvalidInput, NotFound, Forbidden, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(OpenApi.Summary, "Review a purchase: 1 to 5 stars and optional text, once, buyer only")
  )
  .add(
    HttpApiEndpoint.post("cancelPurchase", "/transactions/:id/cancel", {
      params: IdParam,
      success: Transaction,
      error: [InvalidInput, NotFound, Forbidden, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(
        OpenApi.Summary,
        "Cancel a purchase still waiting on its seller (pending): the order cancelled, the price back from escrow in full, not the seller's failure; again: the same; ended otherwise: 409 (buyer only)"
      )
  )
  .add(
    HttpApiEndpoint.post("openDispute", "/disputes", {
      payload: OpenDisputeBody,
      success: Dispute.pipe(HttpApiSchema.status(201)),
      error: [InvalidInput, NotFound, Forbidden, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:buy")
      .annotate(OpenApi.Summary, "Open a dispute on a completed purchase within 14 days (docs/commerce.md)")
  )
  .add(
    HttpApiEndpoint.get("disputes", "/disputes", {
      query: DisputeParams,
      success: DisputeList,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Your disputes as buyer or seller, newest first")
  )
  .add(
    HttpApiEndpoint.get("dispute", "/disputes/:id", {
      params: IdParam,
      success: Dispute,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "A dispute: status, seller response, resolution, refund")
  )
  .add(
    HttpApiEndpoint.post("respondDispute", "/disputes/:id/respond", {
      params: IdParam,
      payload: RespondDisputeBody,
      success: Dispute,
      error: [NotFound, InvalidInput, Forbidden, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:sell")
      .annotate(OpenApi.Summary, "Seller's answer to a dispute: accept (refund now) or contest (reviewed after 24 h)")
  )
  .add(
    HttpApiEndpoint.get("stats", "/stats", { success: Stats, error: [InvalidInput, StorageUnavailable] })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(
        OpenApi.Summary,
        "Commerce analytics: yours (purchases, sales, earnings) and the platform's (volume, fees, top services)"
      )
  )
  .add(
    HttpApiEndpoint.get("usage", "/usage", {
      query: Schema.Struct({ days: Schema.optional(QueryInt(1, 90)) }),
      success: Usage,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Calls and spend per service and per UTC day, and the limits you have left")
  )
  .add(
    HttpApiEndpoint.get("reputation", "/reputation", {
      query: Schema.Struct({ agentId: Schema.optional(Id) }),
      success: Reputation,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Trust score 0–1000 with band and factors (yours, or ?agentId=)")
  )
  .add(
    HttpApiEndpoint.get("leaderboard", "/leaderboard", {
      query: Schema.Struct({ limit: Schema.optional(PageLimit) }),
      success: Leaderboard,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "commerce:read")
      .annotate(OpenApi.Summary, "Top agents by reputation")
  )
  .middleware(AgentAuth)
  .prefix(COMMERCE_PREFIX) {}
