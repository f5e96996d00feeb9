// The catalog's storage port: published services and the delivery aggregates the SLA report reads.
import { Context, type Effect } from "effect"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import type { RankedFilter, ServiceFilter } from "../../schema/commerce/filters.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

/** Per-tier delivery aggregates over a window (p95 by nearest rank: the ⌈0.95·n⌉-th smallest). */
export interface TierDeliveryStats {
  readonly tierId: string
  readonly deliveries: number
  readonly successes: number
  readonly p95LatencyMs: number | null
}

export interface CatalogStoreService {
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
  /**
   * Adds one review's stars to the service's running rating (inside the review's unit of work), or,
   * with `reviews` -1, takes a review's stars back out (its transaction was refunded: it no longer counts).
   */
  readonly addRating: (id: string, rating: number, reviews?: 1 | -1) => Effect.Effect<void, StorageUnavailable>
  readonly deliveryStats: (
    serviceId: string,
    sinceIso: string
  ) => Effect.Effect<ReadonlyArray<TierDeliveryStats>, StorageUnavailable>
}

/** Storage port for the catalog (and the delivery aggregates the SLA report reads). */
export class CatalogStore extends Context.Service<CatalogStore, CatalogStoreService>()("agent-commerce/CatalogStore") {}
