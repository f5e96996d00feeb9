// A stored service as the API shows it (the fulfilment's mode only: never its url or secret), and
// the lookup of one of its tiers.
import { Effect } from "effect"
import type { Cents } from "../platform/common.js"
import type { CommerceService, ServiceRecord, ServiceTier } from "./services.js"
import { CURRENCY } from "./common.js"
import { NotFound } from "../platform/errors.js"

export const notFound = (id: string) => new NotFound({ message: `service ${id} not found`, resource: "service", id })

export const ratingOf = (r: Pick<ServiceRecord, "ratingSum" | "ratingCount">): number | null =>
  r.ratingCount === 0 ? null : Math.round((r.ratingSum / r.ratingCount) * 100) / 100

/** The cheapest tier's price (every stored service has a tier: publishing asks for 1 to 10). */
const fromPrice = (tiers: ReadonlyArray<ServiceTier>): Cents => {
  let low = tiers[0].priceCents
  for (const t of tiers) if (t.priceCents < low) low = t.priceCents
  return low
}

/**
 * Each record's view, made once: a store hands out a new record object for every write of a service
 * (the memory store keeps it until the next write; the SQL stores make one per row read), and a view
 * is only read, so a record's view is the same object for as long as the record is.
 */
const views = new WeakMap<ServiceRecord, CommerceService>()

/** Rows come from our own stores (validated on the way in): built without re-validation, a hot path. */
export const toService = (r: ServiceRecord): CommerceService => {
  const known = views.get(r)
  if (known !== undefined) return known
  const view: CommerceService = {
    id: r.id,
    sellerAgentId: r.sellerAgentId,
    name: r.name,
    description: r.description,
    category: r.category,
    pricingModel: r.pricingModel,
    tags: r.tags,
    tiers: r.tiers,
    negotiation: r.negotiation,
    fulfilment: { mode: r.fulfilment.mode },
    status: r.status,
    rating: ratingOf(r),
    reviewCount: r.ratingCount,
    fromPriceCents: fromPrice(r.tiers),
    currency: CURRENCY,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt
  }
  views.set(r, view)
  return view
}

/**
 * A service record read from the store and one of its tiers: NotFound (resource "service" or "tier")
 * when either is unknown.
 */
export const tierOf = (record: ServiceRecord | undefined, serviceId: string, tierId: string) => {
  if (record === undefined) return Effect.fail(notFound(serviceId))
  const service = toService(record)
  const tier = service.tiers.find((t) => t.id === tierId)
  if (tier) return Effect.succeed({ service, tier })
  const tiers = service.tiers.map((t) => t.id).join(", ")
  return Effect.fail(
    new NotFound({
      message: `service ${serviceId} has no tier "${tierId}" (tiers: ${tiers})`,
      resource: "tier",
      id: tierId
    })
  )
}
