// Negotiation between a buying agent and a seller: states, the enforced transition table, the
// deterministic seller policy (pure arithmetic on integer cents) and the API shapes.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"

// ---------------------------------------------------------------------------------------------
// States and transitions (docs/negotiation.md has the same table; a test compares them)

export const NegotiationStatus = Schema.Literals([
  "awaiting_seller",
  "awaiting_buyer",
  "accepted",
  "rejected",
  "used",
  "expired"
])
export type NegotiationStatus = typeof NegotiationStatus.Type

export const NegotiationAction = Schema.Literals(["propose", "counter", "accept", "reject"])
export type NegotiationAction = typeof NegotiationAction.Type

export const Party = Schema.Literals(["buyer", "seller"])
export type Party = typeof Party.Type

/** The party whose turn it is in each state (null: nobody can act). */
export const turnOf: Record<NegotiationStatus, Party | null> = {
  awaiting_seller: "seller",
  awaiting_buyer: "buyer",
  accepted: null,
  rejected: null,
  used: null,
  expired: null
}

export interface Transition {
  readonly from: NegotiationStatus | "(new)"
  readonly by: Party | "system"
  readonly action: NegotiationAction | "redeem" | "expire" | "release"
  readonly to: NegotiationStatus
}

/** Every allowed transition. Anything else is refused (409), and the service checks this table. */
export const negotiationTransitions: ReadonlyArray<Transition> = [
  { from: "(new)", by: "buyer", action: "propose", to: "awaiting_seller" },
  { from: "awaiting_seller", by: "seller", action: "accept", to: "accepted" },
  { from: "awaiting_seller", by: "seller", action: "reject", to: "rejected" },
  { from: "awaiting_seller", by: "seller", action: "counter", to: "awaiting_buyer" },
  { from: "awaiting_buyer", by: "buyer", action: "accept", to: "accepted" },
  { from: "awaiting_buyer", by: "buyer", action: "reject", to: "rejected" },
  { from: "awaiting_buyer", by: "buyer", action: "counter", to: "awaiting_seller" },
  { from: "awaiting_buyer", by: "system", action: "expire", to: "expired" },
  { from: "accepted", by: "buyer", action: "redeem", to: "used" },
  { from: "accepted", by: "system", action: "expire", to: "expired" },
  { from: "used", by: "system", action: "release", to: "accepted" }
]

export const canTransition = (
  from: NegotiationStatus,
  by: Party | "system",
  action: Transition["action"]
): NegotiationStatus | undefined =>
  negotiationTransitions.find((t) => t.from === from && t.by === by && t.action === action)?.to

// ---------------------------------------------------------------------------------------------
// Policy numbers

/** Seller answers per negotiation; at the last one the seller accepts at or above the floor, else rejects. */
export const MAX_ROUNDS = 5
/** How long an accepted price, or a seller's counter-offer, stays valid. */
export const OFFER_VALIDITY_MS = 24 * 60 * 60 * 1000
/** Spec §4.4 rule 2: the seller answers within 30 s. The worker's poll interval is subtracted from the configured delay's ceiling. */
export const SELLER_ANSWER_LIMIT_MS = 30_000

/**
 * What the buyer says it intends (volume, commitment length). Recorded and shown on the negotiation,
 * but not binding and not priced: nothing holds the buyer to them, so they give no discount and the
 * seller prices the offer as if none were given (docs/negotiation.md).
 */
export const Terms = Schema.Struct({
  /** Units the buyer intends to buy (calls, pages, seats…); informational. */
  volume: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })))),
  /** Intended commitment length in months; informational. */
  durationMonths: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 120 }))))
})
export type Terms = typeof Terms.Type

export interface SellerPolicy {
  /** integer 50–95: lowest accepted price as % of list price */
  readonly floorPct: number
  /** integer 5–50: how far the seller's counter moves toward the buyer, as % of the gap */
  readonly counterStepPct: number
}

const ceilPct = (cents: number, pct: number) => Math.ceil((cents * pct) / 100)

export interface PolicyPrices {
  readonly listPriceCents: number
  /** At or above this the seller accepts at once. */
  readonly targetCents: number
  /** The lowest price the seller ever agrees to (its counters never go below it). */
  readonly floorCents: number
  /** Below this an offer is rejected outright. */
  readonly minimumCents: number
}

/** The seller's price points for a list price and its policy (integer cents, rounded up: the seller's way). */
export const policyPrices = (listPriceCents: number, policy: SellerPolicy): PolicyPrices => {
  const targetCents = Math.max(1, listPriceCents)
  const floorCents = Math.max(1, Math.min(targetCents, ceilPct(listPriceCents, Math.max(50, policy.floorPct))))
  const minimumCents = Math.max(1, Math.ceil(floorCents / 2))
  return { listPriceCents, targetCents, floorCents, minimumCents }
}

export type SellerDecision =
  | { readonly action: "accept"; readonly priceCents: number; readonly reason: string }
  | { readonly action: "reject"; readonly reason: string }
  | { readonly action: "counter"; readonly priceCents: number; readonly reason: string }

/**
 * The automatic seller's answer to the buyer's offer in round `round` (1-based), given its last
 * ask (undefined in round 1: the target). Deterministic; docs/negotiation.md has worked examples.
 */
export const sellerDecision = (input: {
  readonly offerCents: number
  readonly round: number
  readonly previousAskCents: number | undefined
  readonly prices: PolicyPrices
  readonly policy: SellerPolicy
}): SellerDecision => {
  const { offerCents, round, prices, policy } = input
  if (offerCents >= prices.targetCents)
    return {
      action: "accept",
      priceCents: offerCents,
      reason: `the offer is at or above the target of ${prices.targetCents} cents`
    }
  if (offerCents < prices.minimumCents)
    return { action: "reject", reason: `the offer is below the seller's minimum of ${prices.minimumCents} cents` }
  if (round >= MAX_ROUNDS) {
    return offerCents >= prices.floorCents
      ? {
          action: "accept",
          priceCents: offerCents,
          reason: `final round: the offer is at or above the floor of ${prices.floorCents} cents`
        }
      : { action: "reject", reason: `final round: the offer is below the floor of ${prices.floorCents} cents` }
  }
  const ask = input.previousAskCents ?? prices.targetCents
  const move = Math.floor(((ask - offerCents) * policy.counterStepPct) / 100)
  const counter = Math.max(prices.floorCents, ask - move)
  if (counter <= offerCents)
    return { action: "accept", priceCents: offerCents, reason: "the counter-offer would not be above the offer" }
  return {
    action: "counter",
    priceCents: counter,
    reason: `moves ${policy.counterStepPct}% of the gap from ${ask} toward ${offerCents}, not below the floor of ${prices.floorCents}`
  }
}

// ---------------------------------------------------------------------------------------------
// Records and API shapes

export const HistoryEntry = Schema.Struct({
  round: Schema.Int,
  by: Party,
  action: NegotiationAction,
  priceCents: Schema.NullOr(Schema.Int),
  terms: Terms,
  /** true when the platform's automatic seller answered. */
  automatic: Schema.Boolean,
  reason: Schema.NullOr(Schema.String),
  at: Timestamp
})
export type HistoryEntry = typeof HistoryEntry.Type

/** The stored row. */
export interface NegotiationRecord {
  readonly id: string
  readonly buyerAgentId: string
  readonly sellerAgentId: string
  readonly serviceId: string
  readonly tierId: string
  readonly listPriceCents: number
  readonly terms: Terms
  readonly status: NegotiationStatus
  /** Seller answers given so far. */
  readonly round: number
  /** The price on the table (the last offer or counter). */
  readonly currentPriceCents: number
  /** The seller's last counter (its ask), if any. */
  readonly sellerAskCents: number | null
  readonly agreedPriceCents: number | null
  readonly history: ReadonlyArray<HistoryEntry>
  /** When the automatic seller answers (set iff awaiting_seller): the durable schedule. */
  readonly sellerDueAt: string | null
  /** awaiting_buyer: the counter's validity; accepted: the price's validity. */
  readonly expiresAt: string | null
  /** What redeemed the accepted price (a transaction or saga id). */
  readonly usedBy: string | null
  readonly usedAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

export class Negotiation extends Schema.Class<Negotiation>("Negotiation")({
  id: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  status: NegotiationStatus,
  /** Whose move it is: buyer, seller, or null when closed. */
  turn: Schema.NullOr(Party),
  round: Schema.Int,
  maxRounds: Schema.Int,
  listPriceCents: Cents,
  currentPriceCents: Cents,
  agreedPriceCents: Schema.NullOr(Cents),
  terms: Terms,
  history: Schema.Array(HistoryEntry),
  /** When the automatic seller will answer (awaiting_seller only). */
  sellerAnswerDueAt: Schema.NullOr(Timestamp),
  /** Until when the counter-offer (awaiting_buyer) or the agreed price (accepted) is valid. */
  expiresAt: Schema.NullOr(Timestamp),
  usedBy: Schema.NullOr(Schema.String),
  usedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

const PositiveCents = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })))
const Id = Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))

export const NegotiateBody = Schema.Struct({
  serviceId: Id,
  tierId: Id,
  /** integer cents, 1 to the tier's list price */
  proposedPriceCents: PositiveCents,
  terms: Schema.optional(Terms)
})
export type NegotiateBody = typeof NegotiateBody.Type

export const RespondBody = Schema.Struct({
  action: Schema.Literals(["accept", "reject", "counter"]),
  /** required with counter */
  counterPriceCents: Schema.optional(PositiveCents),
  /** replaces the terms (counter only) */
  terms: Schema.optional(Terms)
})
export type RespondBody = typeof RespondBody.Type

export const NegotiationPage = Schema.Struct({
  data: Schema.Array(Negotiation),
  nextCursor: Schema.NullOr(Schema.String)
})

// ---------------------------------------------------------------------------------------------
// Errors

/** 409 — not this party's turn, or the negotiation is closed (accepted, rejected, used, expired). */
export class NegotiationClosed extends Schema.TaggedError<NegotiationClosed>()(
  "NegotiationClosed",
  { message: Schema.String, status: NegotiationStatus, turn: Schema.NullOr(Party) },
  { httpApiStatus: 409, description: "Wrong turn, or the negotiation is no longer open." }
) {}

/** 422 — a counter without a price, or a price the rules do not allow (above the list price, not below the ask). */
export class InvalidOffer extends Schema.TaggedError<InvalidOffer>()(
  "InvalidOffer",
  { message: Schema.String, field: Schema.String },
  { httpApiStatus: 422 }
) {}

/** 409 — an accepted price that is used, expired, or for another service, tier or buyer. */
export class NegotiationUnusable extends Schema.TaggedError<NegotiationUnusable>()(
  "NegotiationUnusable",
  { message: Schema.String, negotiationId: Schema.String, status: NegotiationStatus },
  { httpApiStatus: 409 }
) {}
