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
 * The records a store keeps (the memory store's, each until the service's next write, which makes a
 * new one): their views, and the views' JSON (src/http/commerce/servicePage.ts), are made once. A
 * record read from SQL is made per read and dropped after it: remembering its view would only cost
 * (a WeakMap entry for a short-lived key costs ~1–2 µs in the collector), so it is not remembered.
 */
const kept = new WeakSet<ServiceRecord>()
const views = new WeakMap<ServiceRecord, CommerceService>()
const keptViews = new WeakSet<CommerceService>()

/** Says that `record` is kept as it is until the service's next write (a new record). */
export const keepRecord = <R extends ServiceRecord>(record: R): R => {
  kept.add(record)
  return record
}

/** True for the view of a kept record: the same object, with the same content, each time it is asked for. */
export const isKeptView = (view: CommerceService): boolean => keptViews.has(view)

const viewOf = (r: ServiceRecord): CommerceService => ({
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
})

/** Rows come from our own stores (validated on the way in): built without re-validation, a hot path. */
export const toService = (r: ServiceRecord): CommerceService => {
  if (!kept.has(r)) return viewOf(r)
  let view = views.get(r)
  if (view === undefined) {
    view = viewOf(r)
    views.set(r, view)
    keptViews.add(view)
  }
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
