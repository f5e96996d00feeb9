// Catalog: the commerce services sellers publish (tiers, SLA, negotiation bounds), search with
// keyset pages, and SLA compliance measured from recorded deliveries. Its storage port is
// CatalogStore.ts; the simulated delivery is simulation.ts; who may choose which fulfilment is
// fulfilment.ts (the push url's address check is Publishing's, which the API calls).
import { Clock, Context, Effect, Layer } from "effect"
import { decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import {
  CommerceService,
  PublishedService,
  type PublishServiceBody,
  type ServiceRecord,
  type ServiceTier,
  type SlaReport,
  type UpdateServiceBody
} from "../../schema/commerce/services.js"
import { type RankedFilter, type ServiceFilter } from "../../schema/commerce/filters.js"
import { Conflict, Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { Caller } from "../keys/Caller.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Offers } from "../purchases/Offers.js"
import { CatalogStore, type CatalogStoreService } from "./CatalogStore.js"
import { newFulfilmentSecret, resolveFulfilment } from "./fulfilment.js"
import { complianceOf, SLA_WINDOW_DAYS } from "./slaCompliance.js"

import { notFound, tierOf, toService } from "../../schema/commerce/serviceView.js"

export { SLA_WINDOW_DAYS }

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
  /** A new service of the caller's agent; a push secret made for it is in this answer only. */
  readonly publish: (
    caller: Caller,
    body: PublishServiceBody
  ) => Effect.Effect<PublishedService, Forbidden | InvalidInput | StorageUnavailable>
  /** Updates the caller's own service; someone else's is NotFound. Ratings and id never change. */
  readonly update: (
    caller: Caller,
    id: string,
    body: UpdateServiceBody
  ) => Effect.Effect<PublishedService, Forbidden | InvalidInput | NotFound | StorageUnavailable>
  /** A new push signing secret for the caller's own push service, shown once; the old one stops signing. */
  readonly rotateFulfilmentSecret: (
    caller: Caller,
    id: string
  ) => Effect.Effect<
    { readonly serviceId: string; readonly fulfilmentSecret: string },
    Conflict | Forbidden | NotFound | StorageUnavailable
  >
  /** SLA compliance per tier from the deliveries recorded in the last SLA_WINDOW_DAYS days. */
  readonly sla: (serviceId: string) => Effect.Effect<typeof SlaReport.Type, NotFound | StorageUnavailable>
  readonly addRating: CatalogStoreService["addRating"]
  readonly upsertSeed: CatalogStoreService["upsertSeed"]
}

const checkTiers = (tiers: ReadonlyArray<ServiceTier>) => {
  const ids = new Set(tiers.map((t) => t.id))
  return ids.size === tiers.length
    ? Effect.void
    : Effect.fail(new InvalidInput({ message: "tier ids must be unique within a service", field: "tiers" }))
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

  const secret = newFulfilmentSecret(ids.secret)
  const published = (row: ServiceRecord, fulfilmentSecret: string | undefined): PublishedService =>
    fulfilmentSecret === undefined ? toService(row) : { ...toService(row), fulfilmentSecret }

  const publish = Effect.fnUntraced(function* (caller: Caller, body: PublishServiceBody) {
    const sellerAgentId = yield* requireSeller(caller)
    yield* checkTiers(body.tiers)
    const { fulfilment, shownSecret } = yield* resolveFulfilment(caller, body.fulfilment, undefined, secret)
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
      fulfilment,
      status: "active",
      ratingSum: 0,
      ratingCount: 0,
      createdAt: now,
      updatedAt: now
    }
    yield* store.insert(row)
    return published(row, shownSecret)
  }, traced("Catalog.publish"))

  const update = Effect.fnUntraced(
    function* (caller: Caller, id: string, body: UpdateServiceBody) {
      const sellerAgentId = yield* requireSeller(caller)
      const row = yield* getRecord(id)
      if (row.sellerAgentId !== sellerAgentId) return yield* Effect.fail(notFound(id))
      if (body.tiers) yield* checkTiers(body.tiers)
      const { fulfilment, shownSecret } =
        body.fulfilment === undefined
          ? { fulfilment: row.fulfilment, shownSecret: undefined }
          : yield* resolveFulfilment(caller, body.fulfilment, row.fulfilment, secret)
      const next: ServiceRecord = {
        ...row,
        name: body.name ?? row.name,
        description: body.description ?? row.description,
        category: body.category ?? row.category,
        pricingModel: body.pricingModel ?? row.pricingModel,
        tags: body.tags ?? row.tags,
        tiers: body.tiers ?? row.tiers,
        negotiation: body.negotiation ?? row.negotiation,
        fulfilment,
        status: body.status ?? row.status,
        updatedAt: yield* nowIso
      }
      yield* store.update(next)
      return published(next, shownSecret)
    },
    atomically,
    traced("Catalog.update")
  )

  const rotateFulfilmentSecret = Effect.fnUntraced(
    function* (caller: Caller, id: string) {
      const sellerAgentId = yield* requireSeller(caller)
      const row = yield* getRecord(id)
      if (row.sellerAgentId !== sellerAgentId) return yield* Effect.fail(notFound(id))
      if (row.fulfilment.mode !== "push") {
        return yield* Effect.fail(
          new Conflict({ message: `service ${id} is fulfilled by ${row.fulfilment.mode}, not push: it has no secret` })
        )
      }
      const fulfilmentSecret = yield* secret
      yield* store.update({
        ...row,
        fulfilment: { ...row.fulfilment, secret: fulfilmentSecret },
        updatedAt: yield* nowIso
      })
      return { serviceId: id, fulfilmentSecret }
    },
    atomically,
    traced("Catalog.rotateFulfilmentSecret")
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
    rotateFulfilmentSecret,
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
    }),
    fulfilmentOf: (serviceId: string) =>
      Effect.map(
        Effect.catchTag(catalog.getRecord(serviceId), "NotFound", () => Effect.succeed(undefined)),
        (record) => record?.fulfilment
      )
  }))
)
