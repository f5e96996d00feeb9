// The commerce offer lookup negotiation, saga and MPP price from (a service and one of its tiers),
// and the simulated seller delivery they run. A port, so the catalog behind it can be swapped.
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { DeliveryMode } from "../../schema/saga/saga.js"
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import { commerceServices } from "../../seed/services.js"
import type { CommerceServiceSeed, ServiceTierSeed } from "../../seed/types.js"

export type OfferService = Pick<CommerceServiceSeed, "id" | "sellerAgentId" | "name" | "category" | "pricingModel" | "negotiation"> & {
  readonly tiers: ReadonlyArray<OfferTier>
}
export type OfferTier = Pick<ServiceTierSeed, "id" | "name" | "priceCents" | "unit" | "includedUnits" | "sla">

export interface Offer {
  readonly service: OfferService
  readonly tier: OfferTier
}

/** Storage-independent port: the service and tier a negotiation, saga or paid call is about. */
export class Offers extends Context.Service<
  Offers,
  {
    /** NotFound (resource "service" or "tier") when either is unknown or unlisted. */
    readonly get: (serviceId: string, tierId: string | undefined) => Effect.Effect<Offer, NotFound | StorageUnavailable>
  }
>()("agent-commerce/Offers") {}

const pick = (service: OfferService | undefined, serviceId: string, tierId: string | undefined) => {
  if (!service) return Effect.fail(new NotFound({ message: `service ${serviceId} not found`, resource: "service", id: serviceId }))
  const tier = tierId === undefined ? service.tiers[0] : service.tiers.find((t) => t.id === tierId)
  if (!tier) {
    return Effect.fail(
      new NotFound({ message: `service ${serviceId} has no tier "${tierId}" (tiers: ${service.tiers.map((t) => t.id).join(", ")})`, resource: "tier", id: tierId })
    )
  }
  return Effect.succeed({ service, tier })
}

/** Offers read from the seeded commerce catalog (src/seed/services.ts). */
export const SeedOffersLive = Layer.succeed(Offers, {
  get: (serviceId, tierId) => pick(commerceServices.find((s) => s.id === serviceId), serviceId, tierId)
})

/** Offers from a fixed list (tests: a tier priced below the minimum charge, a custom policy…). */
export const offersFrom = (services: ReadonlyArray<OfferService>) =>
  Layer.succeed(Offers, { get: (serviceId, tierId) => pick(services.find((s) => s.id === serviceId), serviceId, tierId) })

// ---------------------------------------------------------------------------------------------
// Simulated delivery

/** How long the deliver step waits for the seller: twice the tier's p95 latency, within 1–30 s. */
export const deliverTimeoutMs = (tier: OfferTier) => Math.min(30_000, Math.max(1_000, 2 * tier.sla.p95LatencyMs))

/** The simulated seller behaviour the input asks for (`{"simulate": "fail" | "timeout" | "slow", "delayMs": n}`). */
export const deliveryModeOf = (input: unknown): { readonly mode: DeliveryMode; readonly delayMs: number } => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { mode: "ok", delayMs: 0 }
  const record = input as Record<string, unknown>
  const simulate = record.simulate
  const delay = typeof record.delayMs === "number" && Number.isSafeInteger(record.delayMs) && record.delayMs >= 0 ? record.delayMs : undefined
  if (simulate === "fail") return { mode: "fail", delayMs: 0 }
  if (simulate === "timeout") return { mode: "timeout", delayMs: 0 }
  if (simulate === "slow") return { mode: "slow", delayMs: Math.min(delay ?? 1_000, 600_000) }
  return { mode: "ok", delayMs: 0 }
}

const asIs = { mode: "ok", delayMs: 0 } as const

/**
 * The behaviour a delivery simulates: what the input asks for, when the seller is one of the
 * platform's simulated sellers (an agent of the platform sellers account); on a service another
 * agent published the buyer does not decide the seller's outcome, and `simulate` is plain input.
 * The seller is looked up only when the input asks for something.
 */
export const deliveryModes =
  (agents: { readonly getAgent: (id: string) => Effect.Effect<{ readonly accountId: string } | undefined, StorageUnavailable> }) =>
  (input: unknown, sellerAgentId: string): Effect.Effect<{ readonly mode: DeliveryMode; readonly delayMs: number }, StorageUnavailable> => {
    const asked = deliveryModeOf(input)
    if (asked.mode === "ok") return Effect.succeed(asked)
    return Effect.map(agents.getAgent(sellerAgentId), (agent) => (agent?.accountId === PLATFORM_SELLERS_ACCOUNT ? asked : asIs))
  }

const digest = (s: string) => {
  // FNV-1a: a short deterministic fingerprint of the input, so the simulated output depends on it.
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

/** The deterministic, simulated output of a successful delivery (no real model is called). */
export const simulatedOutput = (offer: Offer, input: unknown, reference: string) => ({
  simulated: true,
  serviceId: offer.service.id,
  tierId: offer.tier.id,
  reference,
  summary: `${offer.service.name} (${offer.tier.name}) processed the request`,
  inputFingerprint: digest(JSON.stringify(input ?? null)),
  units: 1,
  unit: offer.tier.unit
})
