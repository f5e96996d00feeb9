// Catalog: the commerce services sellers publish (tiers, SLA, negotiation bounds), search with
// keyset pages, SLA compliance measured from recorded deliveries, and the simulated delivery.
import { Clock, Context, Effect, Layer } from "effect"
import { cents, decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import {
  CommerceService,
  type PublishServiceBody,
  type ServiceRecord,
  type ServiceTier,
  type UpdateServiceBody
} from "../../schema/commerce/services.js"
import { CURRENCY } from "../../schema/commerce/common.js"
import { type RankedFilter, type ServiceFilter } from "../../schema/commerce/filters.js"
import { Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { Caller } from "../keys/Caller.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import { deliverTimeoutMs, deliveryModeOf, Offers, simulatedOutput } from "./Offers.js"
import type { DeliveryMode } from "../../schema/saga/saga.js"

/** Per-tier delivery aggregates over a window (p95 by nearest rank: the ⌈0.95·n⌉-th smallest). */
export interface TierDeliveryStats {
  readonly tierId: string
  readonly deliveries: number
  readonly successes: number
  readonly p95LatencyMs: number | null
}

/** Storage port for the catalog (and the delivery aggregates the SLA report reads). */
export class CatalogStore extends Context.Service<
  CatalogStore,
  {
    /** Inserts seed rows or refreshes their seller-owned fields (ratings are kept). */
    readonly upsertSeed: (rows: ReadonlyArray<ServiceRecord>) => Effect.Effect<void, StorageUnavailable>
    readonly insert: (row: ServiceRecord) => Effect.Effect<void, StorageUnavailable>
    /** Writes the seller-owned fields (never the rating columns, which reviews move concurrently). */
    readonly update: (row: ServiceRecord) => Effect.Effect<void, StorageUnavailable>
    readonly get: (id: string) => Effect.Effect<ServiceRecord | undefined, StorageUnavailable>
    /** Active services matching the filter, id ascending, at most `limit` rows. */
    readonly list: (filter: ServiceFilter) => Effect.Effect<ReadonlyArray<ServiceRecord>, StorageUnavailable>
    /** Listed services in the kept ranking's order (RankedFilter), the policy applied: at most `limit`. */
    readonly ranked: (filter: RankedFilter) => Effect.Effect<ReadonlyArray<ServiceRecord>, StorageUnavailable>
    /** Adds one review's stars to the service's running rating (inside the review's unit of work). */
    readonly addRating: (id: string, rating: number) => Effect.Effect<void, StorageUnavailable>
    readonly deliveryStats: (serviceId: string, sinceIso: string) => Effect.Effect<ReadonlyArray<TierDeliveryStats>, StorageUnavailable>
  }
>()("agent-commerce/CatalogStore") {}

export const SLA_WINDOW_DAYS = 30

const notFound = (id: string) => new NotFound({ message: `service ${id} not found`, resource: "service", id })

export const ratingOf = (r: Pick<ServiceRecord, "ratingSum" | "ratingCount">): number | null =>
  r.ratingCount === 0 ? null : Math.round((r.ratingSum / r.ratingCount) * 100) / 100

/** Rows come from our own stores (validated on the way in): built without re-validation, a hot path. */
export const toService = (r: ServiceRecord): CommerceService =>
  CommerceService.make({
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
  }, { disableChecks: true })

const checkTiers = (tiers: ReadonlyArray<ServiceTier>) => {
  const ids = new Set(tiers.map((t) => t.id))
  return ids.size === tiers.length
    ? Effect.void
    : Effect.fail(new InvalidInput({ message: "tier ids must be unique within a service", field: "tiers" }))
}

// ---------------------------------------------------------------------------------------------
// Simulated delivery (the seeded services call no real model; docs/commerce.md)

/** A tier as any caller holds it (seed rows and offers carry plain numbers, the catalog branded cents). */
export type TierLike = Omit<ServiceTier, "priceCents"> & { readonly priceCents: number }

export interface SimulatedDelivery {
  readonly success: boolean
  /** Simulated, deterministic latency in ms (a function of the input and the tier's p95). */
  readonly latencyMs: number
  readonly output: unknown
  readonly error: string | null
}

/**
 * Runs a seller's service on `input`, deterministically, without sleeping. `{"simulate":"fail"}`
 * fails, `{"simulate":"timeout"}` fails after the deliver timeout (2 × p95, 1–30 s),
 * `{"simulate":"slow","delayMs":n}` succeeds after n ms; otherwise it succeeds within 20–90 % of
 * the tier's p95 latency (the fraction comes from the input's fingerprint).
 */
export const simulateDelivery = (
  service: Pick<CommerceService, "id" | "sellerAgentId" | "name" | "category" | "pricingModel" | "negotiation"> & { readonly tiers: ReadonlyArray<TierLike> },
  tier: TierLike,
  input: unknown,
  reference = "simulation",
  mode: { readonly mode: DeliveryMode; readonly delayMs: number } = deliveryModeOf(input)
): SimulatedDelivery => {
  const output = simulatedOutput({ service, tier }, input, reference)
  const fraction = parseInt(output.inputFingerprint, 16) / 0x1_0000_0000
  switch (mode.mode) {
    case "fail":
      return { success: false, latencyMs: Math.max(1, Math.round(tier.sla.p95LatencyMs / 2)), output: null, error: "the seller reported a failure (simulated)" }
    case "timeout": {
      const ms = deliverTimeoutMs(tier)
      return { success: false, latencyMs: ms, output: null, error: `the seller did not deliver within ${ms} ms (simulated timeout)` }
    }
    case "slow":
      return { success: true, latencyMs: mode.delayMs, output, error: null }
    case "ok":
      return { success: true, latencyMs: Math.max(1, Math.round(tier.sla.p95LatencyMs * (0.2 + 0.7 * fraction))), output, error: null }
  }
}

// ---------------------------------------------------------------------------------------------

/** A service record read from the store and one of its tiers: NotFound (resource "service" or "tier") when either is unknown. */
export const tierOf = (record: ServiceRecord | undefined, serviceId: string, tierId: string) => {
  if (record === undefined) return Effect.fail(notFound(serviceId))
  const service = toService(record)
  const tier = service.tiers.find((t) => t.id === tierId)
  return tier
    ? Effect.succeed({ service, tier })
    : Effect.fail(new NotFound({ message: `service ${serviceId} has no tier "${tierId}" (tiers: ${service.tiers.map((t) => t.id).join(", ")})`, resource: "tier", id: tierId }))
}

export class Catalog extends Context.Service<Catalog>()("agent-commerce/Catalog", {
  make: Effect.gen(function* () {
    const { atomically } = yield* Transactor
    const store = yield* CatalogStore
    const ids = yield* Ids
    const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    const getRecord = (id: string) => Effect.flatMap(store.get(id), (r) => (r ? Effect.succeed(r) : Effect.fail(notFound(id))))

    /** Any service by id (listed or not); NotFound when unknown. The stable read for negotiation and sagas. */
    const getService = (id: string) => Effect.map(getRecord(id), toService).pipe(traced("Catalog.getService"))

    /** A service and one of its tiers; NotFound (resource "tier") when the tier is unknown. */
    const getTier = (serviceId: string, tierId: string) => Effect.flatMap(store.get(serviceId), (record) => tierOf(record, serviceId, tierId))

    const list = Effect.fnUntraced(function* (filter: Omit<ServiceFilter, "afterId" | "limit"> & { readonly cursor?: string; readonly limit?: number }) {
      const limit = filter.limit ?? 20
      let afterId: string | undefined
      if (filter.cursor !== undefined) {
        const c = decodeCursor(filter.cursor) as { i?: unknown } | undefined
        if (!c || typeof c.i !== "string") return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
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

    /** The recommendations' candidates: listed services in the kept ranking's order (RankedFilter). */
    const ranked = (filter: RankedFilter) => Effect.map(store.ranked(filter), (rows) => rows.map(toService)).pipe(traced("Catalog.ranked"))

    const requireSeller = (caller: Caller) =>
      caller.agentId !== undefined && caller.permissions.has("commerce:sell")
        ? Effect.succeed(caller.agentId)
        : Effect.fail(new Forbidden({ message: "publishing services needs an agent key with commerce:sell", permission: "commerce:sell" }))

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

    /** Updates the caller's own service; someone else's is NotFound. Ratings and id never change. */
    const update = Effect.fnUntraced(function* (caller: Caller, id: string, body: UpdateServiceBody) {
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
      }, atomically, traced("Catalog.update"))

    /** SLA compliance per tier from the deliveries recorded in the last SLA_WINDOW_DAYS days. */
    const sla = Effect.fnUntraced(function* (serviceId: string) {
      const service = yield* getService(serviceId)
      const now = yield* Clock.currentTimeMillis
      const stats = yield* store.deliveryStats(serviceId, new Date(now - SLA_WINDOW_DAYS * 86_400_000).toISOString())
      const byTier = new Map(stats.map((s) => [s.tierId, s]))
      const tiers = service.tiers.map((tier) => {
        const s = byTier.get(tier.id)
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
          note: `measured over ${s.deliveries} deliveries: p95 ${s.p95LatencyMs} ms vs ${tier.sla.p95LatencyMs} ms promised; success ${successRatePct}% vs ${tier.sla.uptimePct}% promised`
        }
      })
      return { serviceId, windowDays: SLA_WINDOW_DAYS, checkedAt: new Date(now).toISOString(), tiers }
    }, traced("Catalog.sla"))

    return { getService, getTier, getRecord, list, ranked, publish, update, sla, addRating: store.addRating, upsertSeed: store.upsertSeed } as const
  })
}) {
  static readonly layer = Layer.effect(Catalog, Catalog.make)
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
