// Published commerce services and their tiers: the wire shapes, the stored row, the SLA report and
// the recommendations that list them.
import { Effect, Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"
import { CURRENCY, PricingModel, Slug, Text } from "./common.js"

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
  priceCents: Cents.pipe(
    Schema.check(
      Schema.isGreaterThanOrEqualTo(1, {
        message: "a tier's price must be at least 1 cent (the minimum charge, 0.01 USD)"
      })
    )
  ),
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

/**
 * How a service's orders reach its seller: `pull` (the seller lists and answers them), `push` (each
 * order is POSTed to the seller's https endpoint) or `simulated` (the platform answers; only the
 * platform's own seeded sellers).
 */
export const FulfilmentMode = Schema.Literals(["pull", "push", "simulated"])
export type FulfilmentMode = typeof FulfilmentMode.Type

/** The fulfilment a seller asks for when publishing or updating: `url` with `push` only. */
export const FulfilmentBody = Schema.Struct({
  mode: FulfilmentMode,
  url: Schema.optional(Text(2048))
})
export type FulfilmentBody = typeof FulfilmentBody.Type

/** What anyone may see of a service's fulfilment: the mode, never the url or the secret. */
export const FulfilmentView = Schema.Struct({ mode: FulfilmentMode })

/** The stored fulfilment: the push url and its signing secret are set for `push` only. */
export const StoredFulfilment = Schema.Struct({
  mode: FulfilmentMode,
  url: Schema.NullOr(Schema.String),
  secret: Schema.NullOr(Schema.String)
})
export type StoredFulfilment = typeof StoredFulfilment.Type

/**
 * A commerce service as stored and served. `rating` is the mean review (1–5, 2 decimals) or null.
 * A struct, not a class: a page of services is built and encoded as plain objects (a class's
 * instances cost ~2 µs each to make and another to encode back; docs/performance.md). Its
 * identifier keeps the name the class gave the OpenAPI document's component.
 */
export const CommerceService = Schema.Struct({
  id: Schema.String,
  sellerAgentId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  category: Schema.String,
  pricingModel: PricingModel,
  tags: Schema.Array(Schema.String),
  tiers: Schema.Array(ServiceTier),
  negotiation: NegotiationBounds,
  fulfilment: FulfilmentView,
  status: ServiceStatus,
  rating: Schema.NullOr(Schema.Number),
  reviewCount: Schema.Int,
  /** Cheapest tier, for sorting and price filters. */
  fromPriceCents: Cents,
  currency: Schema.Literal(CURRENCY),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "CommerceServiceEncoded" })
export type CommerceService = typeof CommerceService.Type

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
  readonly fulfilment: StoredFulfilment
  readonly status: "active" | "inactive"
  readonly ratingSum: number
  readonly ratingCount: number
  readonly createdAt: string
  readonly updatedAt: string
}

/** What the text query `q` matches, lowercased (the Postgres store keeps it in a column). */
export const searchText = (s: Pick<ServiceRecord, "name" | "description" | "category" | "tags">) =>
  [s.name, s.description, s.category, ...s.tags].join(" ").toLowerCase()

export const PublishServiceBody = Schema.Struct({
  name: Text(120),
  description: Text(2000),
  category: Slug,
  pricingModel: PricingModel,
  tags: Schema.Array(Text(40)).pipe(
    Schema.check(Schema.isMaxLength(20)),
    Schema.withDecodingDefaultKey(Effect.succeed([]))
  ),
  tiers: Schema.Array(ServiceTier).pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(10))),
  negotiation: NegotiationBounds.pipe(
    Schema.withDecodingDefaultKey(Effect.succeed({ floorPct: 80, counterStepPct: 20 }))
  ),
  fulfilment: FulfilmentBody.pipe(Schema.withDecodingDefaultKey(Effect.succeed({ mode: "pull" as const })))
})
export type PublishServiceBody = typeof PublishServiceBody.Type

export const UpdateServiceBody = Schema.Struct({
  name: Schema.optional(Text(120)),
  description: Schema.optional(Text(2000)),
  category: Schema.optional(Slug),
  pricingModel: Schema.optional(PricingModel),
  tags: Schema.optional(Schema.Array(Text(40)).pipe(Schema.check(Schema.isMaxLength(20)))),
  tiers: Schema.optional(
    Schema.Array(ServiceTier).pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(10)))
  ),
  negotiation: Schema.optional(NegotiationBounds),
  fulfilment: Schema.optional(FulfilmentBody),
  status: Schema.optional(ServiceStatus)
})
export type UpdateServiceBody = typeof UpdateServiceBody.Type

/**
 * A service as its seller publishes or updates it: `fulfilmentSecret` (the push signing secret) is
 * in this answer only when it was just made, and never shown again.
 */
export const PublishedService = Schema.Struct({
  ...CommerceService.fields,
  fulfilmentSecret: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "PublishedService" })
export type PublishedService = typeof PublishedService.Type

/** A push service's new signing secret, shown once. */
export const FulfilmentSecret = Schema.Struct({ serviceId: Schema.String, fulfilmentSecret: Schema.String })

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
  factors: Schema.Struct({
    fit: Schema.Number,
    rating: Schema.Number,
    sellerReputation: Schema.Number,
    price: Schema.Number
  }),
  reasons: Schema.Array(Schema.String)
})
export const Recommendations = Schema.Struct({ formula: Schema.String, data: Schema.Array(Recommendation) })
