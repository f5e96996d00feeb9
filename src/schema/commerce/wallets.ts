// Wallets: spending policies, the stored wallet, its view and top-ups, and the two refusals a
// purchase meets at the wallet (not enough credits, a policy says no).
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"
import { AutonomyLevel, CURRENCY, Slug, Text } from "./common.js"

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
  autoRecharge: AutoRecharge,
  /** Set by the owner (or the agent's own key) to stop every debit at once; the limits stay as they were. */
  frozen: Schema.Boolean
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
  /** true stops every debit; an agent key may set it but only the owner may clear it. */
  frozen: Schema.optional(Schema.Boolean),
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
export const TopupBody = Schema.Struct({
  amountCents: Cents.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: TOPUP_MAX_CENTS })))
})
export const TopupResult = Schema.Struct({
  agentId: Schema.String,
  amountCents: Cents,
  balanceCents: Cents,
  entryId: Schema.String
})

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
  {
    message: Schema.String,
    requiredCents: Schema.Int,
    balanceCents: Schema.Int,
    missingCents: Schema.Int,
    howToFund: HowToFund
  },
  { httpApiStatus: 402, description: "Not enough wallet credits; `missingCents` and `howToFund` say what to do." }
) {}

export const PolicyName = Schema.Literals([
  "perTransactionLimit",
  "dailyLimit",
  "monthlyLimit",
  "allowedCategories",
  "allowedSellers",
  "frozen"
])
export type PolicyName = typeof PolicyName.Type

/** 403 — a wallet spending policy refuses the purchase; `policy` names it. */
export class PolicyViolation extends Schema.TaggedError<PolicyViolation>()(
  "PolicyViolation",
  {
    message: Schema.String,
    policy: PolicyName,
    limitCents: Schema.NullOr(Schema.Int),
    attemptedCents: Schema.NullOr(Schema.Int)
  },
  { httpApiStatus: 403, description: "A wallet spending policy refuses the purchase; `policy` names it." }
) {}
