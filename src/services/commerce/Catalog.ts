// Catalog: the commerce services sellers publish (tiers, SLA, negotiation bounds), search with
// keyset pages, and SLA compliance measured from recorded deliveries. Its storage port is
// CatalogStore.ts; the simulated delivery is simulation.ts.
import { Clock, Context, Effect, Layer } from "effect"
import { cents, decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import {
  CommerceService,
  type PublishServiceBody,
  type ServiceRecord,
  type ServiceTier,
  type SlaReport,
  type UpdateServiceBody
} from "../../schema/commerce/services.js"
import { CURRENCY } from "../../schema/commerce/common.js"
import { type RankedFilter, type ServiceFilter } from "../../schema/commerce/filters.js"
import { Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { Caller } from "../keys/Caller.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Offers } from "./Offers.js"
import { CatalogStore, type CatalogStoreService, type TierDeliveryStats } from "./CatalogStore.js"

export interface CatalogService {
  /** Any service by id (listed or not); NotFound when unknown. The stable read for negotiation and sagas. */
  readonly getService: (id: string) => Effect.Effect<CommerceService, NotFound | StorageUnavailable>
  /** A service and one of its tiers; NotFound (resource "tier") when the tier is unknown. */
  readonly getTier: (
    serviceId: string,
    tierId: string
  ) => Effect.Effect<{ service: CommerceService; tier: ServiceTier }, NotFound | StorageUnavailable>
  readonly getRecord: (id: string) => Effect.Effect<ServiceRecord, NotFound | StorageUnavailable>
  /** Listed services matching the filter, a keyset page (default 20). */
  readonly list: (
    filter: Omit<ServiceFilter, "afterId" | "limit"> & { readonly cursor?: string; readonly limit?: number }
  ) => Effect.Effect<{ data: Array<CommerceService>; nextCursor: string | null }, InvalidInput | StorageUnavailable>
  /** The recommendations' candidates: listed services in the kept ranking's order (RankedFilter). */
  readonly ranked: (filter: RankedFilter) => Effect.Effect<Array<CommerceService>, StorageUnavailable>
  readonly publish: (
    caller: Caller,
    body: PublishServiceBody
  ) => Effect.Effect<CommerceService, Forbidden | InvalidInput | StorageUnavailable>
  /** Updates the caller's own service; someone else's is NotFound. Ratings and id never change. */
  readonly update: (
    caller: Caller,
    id: string,
    body: UpdateServiceBody
  ) => Effect.Effect<CommerceService, Forbidden | InvalidInput | NotFound | StorageUnavailable>
  /** SLA compliance per tier from the deliveries recorded in the last SLA_WINDOW_DAYS days. */
  readonly sla: (serviceId: string) => Effect.Effect<typeof SlaReport.Type, NotFound | StorageUnavailable>
  readonly addRating: CatalogStoreService["addRating"]
  readonly upsertSeed: CatalogStoreService["upsertSeed"]
}

export const SLA_WINDOW_DAYS = 30

const notFound = (id: string) => new NotFound({ message: `service ${id} not found`, resource: "service", id })

export const ratingOf = (r: Pick<ServiceRecord, "ratingSum" | "ratingCount">): number | null =>
  r.ratingCount === 0 ? null : Math.round((r.ratingSum / r.ratingCount) * 100) / 100

/** Rows come from our own stores (validated on the way in): built without re-validation, a hot path. */
export const toService = (r: ServiceRecord): CommerceService =>
  CommerceService.make(
    {
      id: r.id,
      sellerAgentId: r.sellerAgentId,
      name: r.name,
      description: r.description,
      category: r.category,
      pricingModel: r.pricingModel,
      tags: [...r.tags],
      tiers: [...r.tiers],
      negotiation: r.negotiation,
      status: r.status,
      rating: ratingOf(r),
      reviewCount: r.ratingCount,
      fromPriceCents: cents(Math.min(...r.tiers.map((t) => t.priceCents))),
      currency: CURRENCY,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt
    },
    { disableChecks: true }
  )

const checkTiers = (tiers: ReadonlyArray<ServiceTier>) => {
  const ids = new Set(tiers.map((t) => t.id))
  return ids.size === tiers.length
    ? Effect.void
    : Effect.fail(new InvalidInput({ message: "tier ids must be unique within a service", field: "tiers" }))
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

/** One tier's SLA compliance from its delivery aggregates over the window (none: "no_data"). */
const complianceOf = (tier: ServiceTier, s: TierDeliveryStats | undefined) => {
  if (!s || s.deliveries === 0) {
    return {
      tierId: tier.id,
      sla: tier.sla,
      status: "no_data" as const,
      deliveries: 0,
      successes: 0,
      successRatePct: null,
      measuredP95LatencyMs: null,
      latencyCompliant: null,
      availabilityCompliant: null,
      note: `no deliveries of this tier recorded in the last ${SLA_WINDOW_DAYS} days; compliance cannot be measured yet`
    }
  }
  const successRatePct = Math.round((s.successes / s.deliveries) * 10_000) / 100
  const latencyCompliant = s.p95LatencyMs !== null && s.p95LatencyMs <= tier.sla.p95LatencyMs
  const availabilityCompliant = successRatePct >= tier.sla.uptimePct
  return {
    tierId: tier.id,
    sla: tier.sla,
    status: latencyCompliant && availabilityCompliant ? ("compliant" as const) : ("breached" as const),
    deliveries: s.deliveries,
    successes: s.successes,
    successRatePct,
    measuredP95LatencyMs: s.p95LatencyMs,
    latencyCompliant,
    availabilityCompliant,
    note:
      `measured over ${s.deliveries} deliveries: p95 ${s.p95LatencyMs} ms vs ${tier.sla.p95LatencyMs} ms promised; ` +
      `success ${successRatePct}% vs ${tier.sla.uptimePct}% promised`
  }
}

const make = Effect.gen(function* () {
  const { atomically } = yield* Transactor
  const store = yield* CatalogStore
  const ids = yield* Ids
  const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const getRecord = (id: string) =>
    Effect.flatMap(store.get(id), (r) => (r ? Effect.succeed(r) : Effect.fail(notFound(id))))

  const getService = (id: string) => Effect.map(getRecord(id), toService).pipe(traced("Catalog.getService"))

  const getTier = (serviceId: string, tierId: string) =>
    Effect.flatMap(store.get(serviceId), (record) => tierOf(record, serviceId, tierId))

  const list = Effect.fnUntraced(function* (
    filter: Omit<ServiceFilter, "afterId" | "limit"> & { readonly cursor?: string; readonly limit?: number }
  ) {
    const limit = filter.limit ?? 20
    let afterId: string | undefined
    if (filter.cursor !== undefined) {
      const c = decodeCursor(filter.cursor) as { i?: unknown } | undefined
      if (!c || typeof c.i !== "string") {
        return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
      }
      afterId = c.i
    }
    const { cursor: _cursor, ...rest } = filter
    const rows = yield* store.list({ ...rest, afterId, limit: limit + 1 })
    const page = rows.slice(0, limit)
    return {
      data: page.map(toService),
      nextCursor: rows.length > limit ? encodeCursor({ i: page[page.length - 1].id }) : null
    }
  }, traced("Catalog.list"))

  const ranked = (filter: RankedFilter) =>
    Effect.map(store.ranked(filter), (rows) => rows.map(toService)).pipe(traced("Catalog.ranked"))

  const requireSeller = (caller: Caller) =>
    caller.agentId !== undefined && caller.permissions.has("commerce:sell")
      ? Effect.succeed(caller.agentId)
      : Effect.fail(
          new Forbidden({
            message: "publishing services needs an agent key with commerce:sell",
            permission: "commerce:sell"
          })
        )

  const publish = Effect.fnUntraced(function* (caller: Caller, body: PublishServiceBody) {
    const sellerAgentId = yield* requireSeller(caller)
    yield* checkTiers(body.tiers)
    const now = yield* nowIso
    const row: ServiceRecord = {
      id: yield* ids.make("svc"),
      sellerAgentId,
      name: body.name,
      description: body.description,
      category: body.category,
      pricingModel: body.pricingModel,
      tags: body.tags,
      tiers: body.tiers,
      negotiation: body.negotiation,
      status: "active",
      ratingSum: 0,
      ratingCount: 0,
      createdAt: now,
      updatedAt: now
    }
    yield* store.insert(row)
    return toService(row)
  }, traced("Catalog.publish"))

  const update = Effect.fnUntraced(
    function* (caller: Caller, id: string, body: UpdateServiceBody) {
      const sellerAgentId = yield* requireSeller(caller)
      const row = yield* getRecord(id)
      if (row.sellerAgentId !== sellerAgentId) return yield* Effect.fail(notFound(id))
      if (body.tiers) yield* checkTiers(body.tiers)
      const next: ServiceRecord = {
        ...row,
        name: body.name ?? row.name,
        description: body.description ?? row.description,
        category: body.category ?? row.category,
        pricingModel: body.pricingModel ?? row.pricingModel,
        tags: body.tags ?? row.tags,
        tiers: body.tiers ?? row.tiers,
        negotiation: body.negotiation ?? row.negotiation,
        status: body.status ?? row.status,
        updatedAt: yield* nowIso
      }
      yield* store.update(next)
      return toService(next)
    },
    atomically,
    traced("Catalog.update")
  )

  const sla = Effect.fnUntraced(function* (serviceId: string) {
    const service = yield* getService(serviceId)
    const now = yield* Clock.currentTimeMillis
    const since = new Date(now - SLA_WINDOW_DAYS * 86_400_000).toISOString()
    const stats = yield* store.deliveryStats(serviceId, since)
    const byTier = new Map(stats.map((s) => [s.tierId, s]))
    const tiers = service.tiers.map((tier) => complianceOf(tier, byTier.get(tier.id)))
    return { serviceId, windowDays: SLA_WINDOW_DAYS, checkedAt: new Date(now).toISOString(), tiers }
  }, traced("Catalog.sla"))

  return Catalog.of({
    getService,
    getTier,
    getRecord,
    list,
    ranked,
    publish,
    update,
    sla,
    addRating: store.addRating,
    upsertSeed: store.upsertSeed
  })
})

export class Catalog extends Context.Service<Catalog, CatalogService>()("agent-commerce/Catalog") {
  static readonly make = make
  static readonly layer = Layer.effect(Catalog, make)
}

/**
 * The negotiation and saga port (src/services/commerce/Offers.ts) answered from this catalog, so services
 * published through the API can be negotiated and bought through a saga too. Unlisted → NotFound.
 */
export const CatalogOffersLive = Layer.effect(
  Offers,
  Effect.map(Catalog, (catalog) => ({
    get: Effect.fnUntraced(function* (serviceId: string, tierId: string | undefined) {
      const service = yield* catalog.getService(serviceId)
      if (service.status !== "active") return yield* Effect.fail(notFound(serviceId))
      if (tierId === undefined) return { service, tier: service.tiers[0] }
      return yield* catalog.getTier(serviceId, tierId)
    })
  }))
)
