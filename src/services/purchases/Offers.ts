// The catalogue as a purchase reads it: the offer (a listed service and one of its tiers) a buy,
// a negotiation, a saga and a paid call price from, and how a service is fulfilled now (where its
// orders are pushed). A port the commerce catalogue answers (Catalog.ts CatalogOffersLive), so the
// purchase domain sits below the catalogue; the seed's and a fixed list's answers are for tests.
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { commerceServices } from "../../seed/services.js"
import type { CommerceServiceSeed, ServiceTierSeed } from "../../seed/types.js"
import type { StoredFulfilment } from "../../schema/commerce/services.js"

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
  /**
   * How the service is fulfilled now, listed or not (undefined when unknown): a push order's next
   * attempt goes to the url and is signed with the secret as they are when it is sent.
   */
  readonly fulfilmentOf: (serviceId: string) => Effect.Effect<StoredFulfilment | undefined, StorageUnavailable>
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

const SIMULATED: StoredFulfilment = { mode: "simulated", url: null, secret: null }

/** Offers read from the seeded commerce catalog (src/seed/services.ts): simulated sellers only. */
export const SeedOffersLive = Layer.succeed(Offers, {
  get: (serviceId, tierId) =>
    pick(
      commerceServices.find((s) => s.id === serviceId),
      serviceId,
      tierId
    ),
  fulfilmentOf: (serviceId) => Effect.succeed(commerceServices.some((s) => s.id === serviceId) ? SIMULATED : undefined)
})

/** Offers from a fixed list (tests: a tier priced below the minimum charge, a custom policy…). */
export const offersFrom = (services: ReadonlyArray<OfferService>) =>
  Layer.succeed(Offers, {
    get: (serviceId, tierId) =>
      pick(
        services.find((s) => s.id === serviceId),
        serviceId,
        tierId
      ),
    fulfilmentOf: (serviceId) => {
      const mode = services.find((s) => s.id === serviceId)?.fulfilment?.mode
      return Effect.succeed(mode === undefined ? undefined : { mode, url: null, secret: null })
    }
  })
