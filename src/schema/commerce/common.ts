// Commerce (AI2AIC) building blocks shared by its schemas: the enumerations, the currency and the
// field shapes (slugs, bounded text).
import { Schema } from "effect"

// Enumerations (spec §2.4)

export const PricingModel = Schema.Literals(["per_call", "monthly", "usage_based", "tiered"])
export type PricingModel = typeof PricingModel.Type

export const AutonomyLevel = Schema.Literals(["manual", "semi_auto", "full_auto"])
export type AutonomyLevel = typeof AutonomyLevel.Type

/** Credits are US cents (docs/money.md): every amount in this domain is integer cents. */
export const CURRENCY = "usd" as const
export const CREDIT_UNIT = {
  cents: 1,
  description: "1 credit = 1 US cent; plan credits 500 / 2500 / 10000 fund 500 / 2500 / 10000 cents"
} as const

export const Slug = Schema.String.pipe(
  Schema.check(Schema.isMinCodePoints(1)),
  Schema.check(Schema.isMaxCodePoints(60)),
  Schema.check(Schema.isPattern(/^[a-z0-9][a-z0-9_-]*$/u, { message: "lowercase letters, digits, - and _" }))
)
export const Text = (max: number) =>
  Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(max)))
