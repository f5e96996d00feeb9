// The commerce offer lookup negotiation, saga and MPP price from (a service and one of its tiers).
// A port, so the catalog behind it can be swapped; the simulated delivery they run is simulation.ts.
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { commerceServices } from "../../seed/services.js"
import type { CommerceServiceSeed, ServiceTierSeed } from "../../seed/types.js"

export type OfferService = Pick<
  CommerceServiceSeed,
  "id" | "sellerAgentId" | "name" | "category" | "pricingModel" | "negotiation"
> & {
  readonly tiers: ReadonlyArray<OfferTier>
  /** Who delivers: the catalog's services say (pull, push, simulated); the seed's are simulated when absent. */
  readonly fulfilment?: { readonly mode: "pull" | "push" | "simulated" }
}
export type OfferTier = Pick<ServiceTierSeed, "id" | "name" | "priceCents" | "unit" | "includedUnits" | "sla">

export interface Offer {
  readonly service: OfferService
  readonly tier: OfferTier
}

export interface OffersService {
  /** NotFound (resource "service" or "tier") when either is unknown or unlisted. */
  readonly get: (serviceId: string, tierId: string | undefined) => Effect.Effect<Offer, NotFound | StorageUnavailable>
}

/** Storage-independent port: the service and tier a negotiation, saga or paid call is about. */
export class Offers extends Context.Service<Offers, OffersService>()("agent-commerce/Offers") {}

const pick = (service: OfferService | undefined, serviceId: string, tierId: string | undefined) => {
  if (!service) {
    return Effect.fail(new NotFound({ message: `service ${serviceId} not found`, resource: "service", id: serviceId }))
  }
  const tier = tierId === undefined ? service.tiers[0] : service.tiers.find((t) => t.id === tierId)
  if (!tier) {
    const tiers = service.tiers.map((t) => t.id).join(", ")
    return Effect.fail(
      new NotFound({
        message: `service ${serviceId} has no tier "${tierId}" (tiers: ${tiers})`,
        resource: "tier",
        id: tierId
      })
    )
  }
  return Effect.succeed({ service, tier })
}

/** Offers read from the seeded commerce catalog (src/seed/services.ts). */
export const SeedOffersLive = Layer.succeed(Offers, {
  get: (serviceId, tierId) =>
    pick(
      commerceServices.find((s) => s.id === serviceId),
      serviceId,
      tierId
    )
})

/** Offers from a fixed list (tests: a tier priced below the minimum charge, a custom policy…). */
export const offersFrom = (services: ReadonlyArray<OfferService>) =>
  Layer.succeed(Offers, {
    get: (serviceId, tierId) =>
      pick(
        services.find((s) => s.id === serviceId),
        serviceId,
        tierId
      )
  })
