// Commerce (AI2AIC): services and tiers, wallets and spending policies, purchases, deliveries,
// approvals, reviews, disputes, reputation and analytics — the shapes and the domain errors.
import { Effect, Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"

// ---------------------------------------------------------------------------------------------
// Enumerations (spec §2.4)

export const PricingModel = Schema.Literals(["per_call", "monthly", "usage_based", "tiered"])
export type PricingModel = typeof PricingModel.Type

export const AutonomyLevel = Schema.Literals(["manual", "semi_auto", "full_auto"])
export type AutonomyLevel = typeof AutonomyLevel.Type

/** Credits are US cents (docs/money.md): every amount in this domain is integer cents. */
export const CURRENCY = "usd" as const
export const CREDIT_UNIT = { cents: 1, description: "1 credit = 1 US cent; plan credits 500 / 2500 / 10000 fund 500 / 2500 / 10000 cents" } as const

const Slug = Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(60)), Schema.check(Schema.isPattern(/^[a-z0-9][a-z0-9_-]*$/u, { message: "lowercase letters, digits, - and _" })))
const Text = (max: number) => Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(max)))

// ---------------------------------------------------------------------------------------------
// Services and tiers

export const Sla = Schema.Struct({
  uptimePct: Schema.Finite.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100 }))),
  p95LatencyMs: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 3_600_000 }))),
  supportWindow: Text(100)
})
export type Sla = typeof Sla.Type

export const ServiceTier = Schema.Struct({
  id: Slug,
  name: Text(80),
  /** At least 1 cent: the smallest charge the platform makes (spec §8, 0.01 USD); nothing is free. */
  priceCents: Cents.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(1, { message: "a tier's price must be at least 1 cent (the minimum charge, 0.01 USD)" }))),
  /** e.g. "call", "month", "1k tokens", "page" */
  unit: Text(40),
  /** Quota per period; null = unlimited. */
  includedUnits: Schema.NullOr(Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))),
  sla: Sla
})
export type ServiceTier = typeof ServiceTier.Type

export const NegotiationBounds = Schema.Struct({
  /** Lowest accepted price as % of the list price (50–95). */
  floorPct: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 50, maximum: 95 }))),
  /** Seller's move toward the buyer per round, % of the gap (5–50). */
  counterStepPct: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 5, maximum: 50 })))
})

export const ServiceStatus = Schema.Literals(["active", "inactive"])

/** A commerce service as stored and served. `rating` is the mean review (1–5, 2 decimals) or null. */
export class CommerceService extends Schema.Class<CommerceService>("CommerceService")({
  id: Schema.String,
  sellerAgentId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tags: Schema.Array(Schema.String),
  tiers: Schema.Array(ServiceTier),
  negotiation: NegotiationBounds,
  status: ServiceStatus,
  rating: Schema.NullOr(Schema.Number),
  reviewCount: Schema.Int,
  /** Cheapest tier, for sorting and price filters. */
  fromPriceCents: Cents,
  currency: Schema.Literal(CURRENCY),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

/** Stored row: the service plus the running rating sum (rating = sum / count). */
export interface ServiceRecord {
  readonly id: string
  readonly sellerAgentId: string
  readonly name: string
  readonly description: string
  readonly category: string
  readonly pricingModel: PricingModel
  readonly tags: ReadonlyArray<string>
  readonly tiers: ReadonlyArray<ServiceTier>
  readonly negotiation: typeof NegotiationBounds.Type
  readonly status: "active" | "inactive"
  readonly ratingSum: number
  readonly ratingCount: number
  readonly createdAt: string
  readonly updatedAt: string
}

/** What the text query `q` matches, lowercased (the Postgres store keeps it in a column). */
export const searchText = (s: Pick<ServiceRecord, "name" | "description" | "category" | "tags">) => [s.name, s.description, s.category, ...s.tags].join(" ").toLowerCase()

export const PublishServiceBody = Schema.Struct({
  name: Text(120),
  description: Text(2000),
  category: Slug,
  pricingModel: PricingModel,
  tags: Schema.Array(Text(40)).pipe(Schema.check(Schema.isMaxLength(20)), Schema.withDecodingDefaultKey(Effect.succeed([]))),
  tiers: Schema.Array(ServiceTier).pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(10))),
  negotiation: NegotiationBounds.pipe(Schema.withDecodingDefaultKey(Effect.succeed({ floorPct: 80, counterStepPct: 20 })))
})
export type PublishServiceBody = typeof PublishServiceBody.Type

export const UpdateServiceBody = Schema.Struct({
  name: Schema.optional(Text(120)),
  description: Schema.optional(Text(2000)),
  category: Schema.optional(Slug),
  pricingModel: Schema.optional(PricingModel),
  tags: Schema.optional(Schema.Array(Text(40)).pipe(Schema.check(Schema.isMaxLength(20)))),
  tiers: Schema.optional(Schema.Array(ServiceTier).pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(10)))),
  negotiation: Schema.optional(NegotiationBounds),
  status: Schema.optional(ServiceStatus)
})
export type UpdateServiceBody = typeof UpdateServiceBody.Type

export interface ServiceFilter {
  readonly category?: string
  readonly pricingModel?: PricingModel
  readonly minPriceCents?: number
  readonly maxPriceCents?: number
  readonly minRating?: number
  readonly sellerId?: string
  readonly q?: string
  /** Keyset: services with id greater than this. */
  readonly afterId?: string
  readonly limit: number
}

/**
 * The recommendations' candidates (docs/commerce.md, "Recommendations"): listed services in the
 * kept ranking's order — the Bayesian mean of their stars, (ratingSum + 3·2) / (ratingCount + 2),
 * highest first, ties by id — with a buyer's wallet policy applied while walking.
 */
export interface RankedFilter {
  readonly category?: string
  /** Left out: the buyer's own services. */
  readonly excludeSeller?: string
  /** Only these sellers / categories (a wallet's allowed lists); null: any. */
  readonly sellers: ReadonlyArray<string> | null
  readonly categories: ReadonlyArray<string> | null
  /** Only services with a tier at or under this price (a per-transaction limit); null: any. */
  readonly maxTierCents: number | null
  readonly limit: number
}

/** A service's place in the kept ranking: the Bayesian mean of its stars (3 with no review). */
export const rankOf = (r: { readonly ratingSum: number; readonly ratingCount: number }) => (r.ratingSum + 3 * 2) / (r.ratingCount + 2)

export const TierCompliance = Schema.Struct({
  tierId: Schema.String,
  sla: Sla,
  /** "no_data" until a delivery of this tier is recorded. */
  status: Schema.Literals(["compliant", "breached", "no_data"]),
  deliveries: Schema.Int,
  successes: Schema.Int,
  successRatePct: Schema.NullOr(Schema.Number),
  measuredP95LatencyMs: Schema.NullOr(Schema.Int),
  latencyCompliant: Schema.NullOr(Schema.Boolean),
  availabilityCompliant: Schema.NullOr(Schema.Boolean),
  note: Schema.String
})

export const SlaReport = Schema.Struct({
  serviceId: Schema.String,
  windowDays: Schema.Int,
  checkedAt: Timestamp,
  tiers: Schema.Array(TierCompliance)
})

export const Recommendation = Schema.Struct({
  rank: Schema.Int,
  score: Schema.Number,
  service: CommerceService,
  tierId: Schema.String,
  priceCents: Cents,
  factors: Schema.Struct({ fit: Schema.Number, rating: Schema.Number, sellerReputation: Schema.Number, price: Schema.Number }),
  reasons: Schema.Array(Schema.String)
})
export const Recommendations = Schema.Struct({ formula: Schema.String, data: Schema.Array(Recommendation) })

// ---------------------------------------------------------------------------------------------
// Wallets and policies

export const AutoRecharge = Schema.Struct({ enabled: Schema.Boolean, thresholdCents: Cents, amountCents: Cents })

export const WalletPolicy = Schema.Struct({
  perTransactionLimitCents: Schema.NullOr(Cents),
  dailyLimitCents: Schema.NullOr(Cents),
  monthlyLimitCents: Schema.NullOr(Cents),
  /** null = any category / seller. */
  allowedCategories: Schema.NullOr(Schema.Array(Schema.String)),
  allowedSellers: Schema.NullOr(Schema.Array(Schema.String)),
  approvalThresholdCents: Cents,
  autonomyLevel: AutonomyLevel,
  autoRecharge: AutoRecharge
})
export type WalletPolicy = typeof WalletPolicy.Type

export interface WalletRecord {
  readonly agentId: string
  readonly policy: WalletPolicy
  readonly createdAt: string
  readonly updatedAt: string
}

/** Limits are caps (max 1,000,000,000 cents); recharges 100–1,000,000 cents (docs/commerce.md). */
const Limit = Schema.NullOr(Cents.pipe(Schema.check(Schema.isLessThanOrEqualTo(1_000_000_000))))
export const UpdateWalletBody = Schema.Struct({
  perTransactionLimitCents: Schema.optional(Limit),
  dailyLimitCents: Schema.optional(Limit),
  monthlyLimitCents: Schema.optional(Limit),
  allowedCategories: Schema.optional(Schema.NullOr(Schema.Array(Slug).pipe(Schema.check(Schema.isMaxLength(50))))),
  allowedSellers: Schema.optional(Schema.NullOr(Schema.Array(Text(100)).pipe(Schema.check(Schema.isMaxLength(50))))),
  approvalThresholdCents: Schema.optional(Cents.pipe(Schema.check(Schema.isLessThanOrEqualTo(1_000_000_000)))),
  autonomyLevel: Schema.optional(AutonomyLevel),
  autoRecharge: Schema.optional(
    Schema.Struct({
      enabled: Schema.optional(Schema.Boolean),
      thresholdCents: Schema.optional(Cents.pipe(Schema.check(Schema.isLessThanOrEqualTo(100_000_000)))),
      amountCents: Schema.optional(Cents.pipe(Schema.check(Schema.isBetween({ minimum: 100, maximum: 1_000_000 }))))
    })
  )
})
export type UpdateWalletBody = typeof UpdateWalletBody.Type

export const WalletView = Schema.Struct({
  agentId: Schema.String,
  balanceCents: Cents,
  currency: Schema.Literal(CURRENCY),
  creditUnit: Schema.Struct({ cents: Schema.Int, description: Schema.String }),
  policies: WalletPolicy,
  autonomyLevel: AutonomyLevel,
  spentTodayCents: Cents,
  spentThisMonthCents: Cents,
  /** Committed but not yet spent: the escrow of running sagas; counted against the daily and monthly limits. */
  heldCents: Cents,
  remainingTodayCents: Schema.NullOr(Cents),
  remainingThisMonthCents: Schema.NullOr(Cents),
  pendingApprovals: Schema.Int,
  updatedAt: Timestamp
})
export type WalletView = typeof WalletView.Type

export const TOPUP_MAX_CENTS = 1_000_000
export const TopupBody = Schema.Struct({ amountCents: Cents.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: TOPUP_MAX_CENTS }))) })
export const TopupResult = Schema.Struct({ agentId: Schema.String, amountCents: Cents, balanceCents: Cents, entryId: Schema.String })

// ---------------------------------------------------------------------------------------------
// Purchases, deliveries, transactions

export const BuyBody = Schema.Struct({
  serviceId: Text(100),
  tierId: Text(60),
  input: Schema.Unknown.pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
  negotiationId: Schema.optional(Text(100))
})
export type BuyBody = typeof BuyBody.Type

export const TransactionStatus = Schema.Literals(["completed", "failed", "refunded"])
export type TransactionStatus = typeof TransactionStatus.Type

export interface TransactionRecord {
  readonly id: string
  readonly buyerAgentId: string
  readonly sellerAgentId: string
  readonly serviceId: string
  readonly serviceName: string
  readonly category: string
  readonly pricingModel: PricingModel
  readonly tierId: string
  readonly listPriceCents: number
  readonly priceCents: number
  readonly sellerCents: number
  readonly feeCents: number
  readonly negotiationId: string | null
  readonly approvalId: string | null
  readonly idempotencyKey: string | null
  readonly status: TransactionStatus
  readonly ledgerEntryId: string | null
  readonly createdAt: string
  readonly refundedAt: string | null
}

export interface DeliveryRecord {
  readonly transactionId: string
  readonly serviceId: string
  readonly tierId: string
  readonly success: boolean
  readonly latencyMs: number
  readonly output: unknown
  readonly error: string | null
  readonly deliveredAt: string
}

/** A transaction with its delivery, review and dispute, as the stores return it. */
export interface TransactionRow {
  readonly tx: TransactionRecord
  readonly delivery: DeliveryRecord | undefined
  readonly review: ReviewRecord | undefined
  readonly disputeId: string | null
}

export const Delivery = Schema.Struct({
  success: Schema.Boolean,
  /** Simulated latency of the seeded services (docs/commerce.md), in milliseconds. */
  latencyMs: Schema.Int,
  output: Schema.Unknown,
  error: Schema.NullOr(Schema.String),
  deliveredAt: Timestamp
})

export const ReviewView = Schema.Struct({
  id: Schema.String,
  transactionId: Schema.String,
  serviceId: Schema.String,
  reviewerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  rating: Schema.Int,
  text: Schema.NullOr(Schema.String),
  createdAt: Timestamp
})

export class Transaction extends Schema.Class<Transaction>("Transaction")({
  id: Schema.String,
  role: Schema.Literals(["buyer", "seller"]),
  status: TransactionStatus,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tierId: Schema.String,
  currency: Schema.Literal(CURRENCY),
  listPriceCents: Cents,
  priceCents: Cents,
  sellerCents: Cents,
  feeCents: Cents,
  negotiationId: Schema.NullOr(Schema.String),
  approvalId: Schema.NullOr(Schema.String),
  ledgerEntryId: Schema.NullOr(Schema.String),
  delivery: Schema.NullOr(Delivery),
  review: Schema.NullOr(ReviewView),
  disputeId: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  refundedAt: Schema.NullOr(Timestamp)
}) {}

export interface TransactionFilter {
  readonly agentId: string
  readonly role?: "buyer" | "seller"
  readonly serviceId?: string
  readonly status?: TransactionStatus
  readonly from?: string
  readonly to?: string
  /** Keyset (newest first): rows strictly before (createdAt, id). */
  readonly before?: { readonly createdAt: string; readonly id: string }
  readonly limit: number
}

// ---------------------------------------------------------------------------------------------
// Approvals

export const ApprovalStatus = Schema.Literals(["pending", "approved", "declined", "expired", "void"])
export type ApprovalStatus = typeof ApprovalStatus.Type

export interface ApprovalRecord {
  readonly id: string
  readonly accountId: string
  readonly agentId: string
  readonly serviceId: string
  readonly tierId: string
  readonly quotedPriceCents: number
  readonly negotiationId: string | null
  readonly input: unknown
  /** Why it waits: "manual" (every purchase) or "approvalThreshold". */
  readonly reason: "manual" | "approvalThreshold"
  readonly status: ApprovalStatus
  readonly idempotencyKey: string | null
  /** The id the transaction gets when approved (a redeemed negotiation is marked used by it). */
  readonly reservedTransactionId: string
  readonly transactionId: string | null
  readonly decidedBy: string | null
  readonly createdAt: string
  readonly decidedAt: string | null
  readonly expiresAt: string
}

export class Approval extends Schema.Class<Approval>("Approval")({
  id: Schema.String,
  agentId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  quotedPriceCents: Cents,
  negotiationId: Schema.NullOr(Schema.String),
  reason: Schema.Literals(["manual", "approvalThreshold"]),
  status: ApprovalStatus,
  transactionId: Schema.NullOr(Schema.String),
  decidedBy: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  decidedAt: Schema.NullOr(Timestamp),
  expiresAt: Timestamp
}) {}

export const PurchaseStatus = Schema.Literals(["completed", "failed", "pending_approval"])

/** What POST /buy answers: a completed (or failed-delivery, uncharged) transaction, or an approval that waits. */
export const Purchase = Schema.Struct({
  status: PurchaseStatus,
  transaction: Schema.NullOr(Transaction),
  approval: Schema.NullOr(Approval)
})
export type Purchase = typeof Purchase.Type

export const ApprovalDecision = Schema.Struct({ approval: Approval, transaction: Schema.NullOr(Transaction) })

// ---------------------------------------------------------------------------------------------
// Reviews and disputes

export const ReviewBody = Schema.Struct({
  rating: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 5 }, { message: "rating must be an integer from 1 to 5" }))),
  text: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(2000))))
})

export interface ReviewRecord {
  readonly id: string
  readonly transactionId: string
  readonly serviceId: string
  readonly reviewerAgentId: string
  readonly sellerAgentId: string
  readonly rating: number
  readonly text: string | null
  readonly createdAt: string
}

export const DisputeStatus = Schema.Literals(["open", "under_review", "resolved_refunded", "resolved_rejected"])
export type DisputeStatus = typeof DisputeStatus.Type

export interface DisputeRecord {
  readonly id: string
  readonly transactionId: string
  readonly buyerAgentId: string
  readonly sellerAgentId: string
  readonly reason: string
  readonly status: DisputeStatus
  readonly sellerResponse: "accept" | "contest" | null
  readonly sellerNote: string | null
  readonly resolution: string | null
  readonly refundCents: number
  readonly refundEntryId: string | null
  readonly respondBy: string
  readonly reviewDueAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly resolvedAt: string | null
}

export class Dispute extends Schema.Class<Dispute>("Dispute")({
  id: Schema.String,
  role: Schema.Literals(["buyer", "seller"]),
  transactionId: Schema.String,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  reason: Schema.String,
  status: DisputeStatus,
  sellerResponse: Schema.NullOr(Schema.Literals(["accept", "contest"])),
  sellerNote: Schema.NullOr(Schema.String),
  resolution: Schema.NullOr(Schema.String),
  refundCents: Cents,
  refundEntryId: Schema.NullOr(Schema.String),
  respondBy: Timestamp,
  reviewDueAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  resolvedAt: Schema.NullOr(Timestamp)
}) {}

export const OpenDisputeBody = Schema.Struct({ transactionId: Text(100), reason: Text(2000) })
export const RespondDisputeBody = Schema.Struct({ action: Schema.Literals(["accept", "contest"]), note: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(2000)))) })

// ---------------------------------------------------------------------------------------------
// Reputation, leaderboard, analytics

export const ReputationBand = Schema.Literals(["Bronze", "Silver", "Gold", "Platinum", "Diamond"])
export type ReputationBand = typeof ReputationBand.Type

/** Aggregates the reputation formula reads for one agent. */
export interface ReputationInputs {
  readonly agentId: string
  readonly reviewsReceived: number
  readonly ratingSum: number
  readonly completedDeals: number
  readonly volumeCents: number
  readonly disputesLost: number
}

export const ReputationFactors = Schema.Struct({
  reviews: Schema.Struct({ points: Schema.Int, max: Schema.Int, count: Schema.Int, averageRating: Schema.NullOr(Schema.Number) }),
  disputes: Schema.Struct({ points: Schema.Int, max: Schema.Int, lost: Schema.Int, completedDeals: Schema.Int }),
  volume: Schema.Struct({ points: Schema.Int, max: Schema.Int, volumeCents: Schema.Int }),
  tenure: Schema.Struct({ points: Schema.Int, max: Schema.Int, days: Schema.Int })
})

export const Reputation = Schema.Struct({
  agentId: Schema.String,
  score: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))),
  band: ReputationBand,
  nextBand: Schema.NullOr(Schema.Struct({ band: ReputationBand, atScore: Schema.Int })),
  factors: ReputationFactors,
  formula: Schema.String
})
export type Reputation = typeof Reputation.Type

export const LeaderboardEntry = Schema.Struct({
  rank: Schema.Int,
  agentId: Schema.String,
  name: Schema.String,
  organization: Schema.NullOr(Schema.String),
  score: Schema.Int,
  band: ReputationBand,
  completedDeals: Schema.Int,
  reviewsReceived: Schema.Int
})
export const Leaderboard = Schema.Struct({ data: Schema.Array(LeaderboardEntry), generatedAt: Timestamp })

export const ServiceCount = Schema.Struct({ serviceId: Schema.String, serviceName: Schema.String, count: Schema.Int, volumeCents: Schema.Int })
export const Stats = Schema.Struct({
  agent: Schema.Struct({
    purchases: Schema.Int,
    spentCents: Schema.Int,
    sales: Schema.Int,
    earnedCents: Schema.Int,
    feesGeneratedCents: Schema.Int,
    refundsReceivedCents: Schema.Int,
    topServicesBought: Schema.Array(ServiceCount),
    topServicesSold: Schema.Array(ServiceCount)
  }),
  platform: Schema.Struct({
    transactions: Schema.Int,
    volumeCents: Schema.Int,
    feesCents: Schema.Int,
    activeServices: Schema.Int,
    buyers: Schema.Int,
    sellers: Schema.Int,
    topServices: Schema.Array(ServiceCount)
  }),
  generatedAt: Timestamp
})

/** One aggregate row: completed purchases grouped by a key (service id or UTC day). */
export interface UsageRow {
  readonly key: string
  readonly label: string
  readonly calls: number
  readonly spentCents: number
}

export const Usage = Schema.Struct({
  agentId: Schema.String,
  from: Timestamp,
  to: Timestamp,
  byService: Schema.Array(Schema.Struct({ serviceId: Schema.String, serviceName: Schema.String, calls: Schema.Int, spentCents: Schema.Int })),
  byDay: Schema.Array(Schema.Struct({ day: Schema.String, calls: Schema.Int, spentCents: Schema.Int })),
  totals: Schema.Struct({ calls: Schema.Int, spentCents: Schema.Int }),
  limits: Schema.Struct({
    perTransactionLimitCents: Schema.NullOr(Cents),
    dailyLimitCents: Schema.NullOr(Cents),
    remainingTodayCents: Schema.NullOr(Cents),
    monthlyLimitCents: Schema.NullOr(Cents),
    remainingThisMonthCents: Schema.NullOr(Cents)
  })
})

// ---------------------------------------------------------------------------------------------
// Errors

export const HowToFund = Schema.Struct({
  topupUrl: Schema.NullOr(Schema.String),
  checkoutUrl: Schema.String,
  /** A wallet recharge through the payment processor, where the payments layer exposes one. */
  rechargeUrl: Schema.NullOr(Schema.String),
  note: Schema.String,
  /** How to retry once funded (the Idempotency-Key replay rule). */
  retry: Schema.String
})

/** 402 — the wallet holds fewer credits than the price; says how many are missing and how to fund. */
export class InsufficientCredits extends Schema.TaggedError<InsufficientCredits>()(
  "InsufficientCredits",
  { message: Schema.String, requiredCents: Schema.Int, balanceCents: Schema.Int, missingCents: Schema.Int, howToFund: HowToFund },
  { httpApiStatus: 402, description: "Not enough wallet credits; `missingCents` and `howToFund` say what to do." }
) {}

export const PolicyName = Schema.Literals(["perTransactionLimit", "dailyLimit", "monthlyLimit", "allowedCategories", "allowedSellers"])
export type PolicyName = typeof PolicyName.Type

/** 403 — a wallet spending policy refuses the purchase; `policy` names it. */
export class PolicyViolation extends Schema.TaggedError<PolicyViolation>()(
  "PolicyViolation",
  { message: Schema.String, policy: PolicyName, limitCents: Schema.NullOr(Schema.Int), attemptedCents: Schema.NullOr(Schema.Int) },
  { httpApiStatus: 403, description: "A wallet spending policy refuses the purchase; `policy` names it." }
) {}
