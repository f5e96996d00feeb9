// The catalog's storage port, and the order its listings are kept in (the adapters sort by it).
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { CatalogListing, CatalogQuery, CatalogSort, SortOrder } from "../../schema/projects/catalog.js"

export interface ProjectsStoreService {
  /** Insert or refresh seed listings; safe on every start. */
  readonly upsertListings: (rows: ReadonlyArray<CatalogListing>) => Effect.Effect<void, StorageUnavailable>
  /** Listings matching the filters, in the query's order, after its keyset position, at most `limit`. */
  readonly listListings: (query: CatalogQuery) => Effect.Effect<ReadonlyArray<CatalogListing>, StorageUnavailable>
  readonly getListing: (id: string) => Effect.Effect<CatalogListing | undefined, StorageUnavailable>
}

export class ProjectsStore extends Context.Service<ProjectsStore, ProjectsStoreService>()(
  "agent-commerce/ProjectsStore"
) {}

/** The default direction of each sort (price cheapest first; everything else highest/newest first). */
export const defaultOrder = (sort: CatalogSort): SortOrder => (sort === "price" ? "asc" : "desc")

/** The value a listing is sorted by. */
export const sortValue = (l: CatalogListing, sort: CatalogSort): number | string => {
  switch (sort) {
    case "price":
      return l.askingPriceCents
    case "rating":
      return l.rating
    case "mrr":
      return l.mrrCents
    case "growth":
      return l.monthlyGrowthPct
    case "newest":
      return l.createdAt
  }
}
