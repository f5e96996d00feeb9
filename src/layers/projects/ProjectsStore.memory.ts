// In-memory store for catalog listings, filtered and keyset-paginated as the Postgres store does.
import { Effect, Layer } from "effect"
import type { CatalogListing, CatalogQuery } from "../../schema/projects/catalog.js"
import { ProjectsStore, sortValue } from "../../services/projects/ProjectsStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

/** Byte-order string comparison (Postgres compares ids with COLLATE "C"). */
const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const cmp = (a: number | string, b: number | string) =>
  typeof a === "number" && typeof b === "number" ? a - b : cmpStr(String(a), String(b))

const matches = (l: CatalogListing, q: CatalogQuery) => {
  if (q.category !== undefined && l.category !== q.category) return false
  if (q.minPriceCents !== undefined && l.askingPriceCents < q.minPriceCents) return false
  if (q.maxPriceCents !== undefined && l.askingPriceCents > q.maxPriceCents) return false
  if (q.minRating !== undefined && l.rating < q.minRating) return false
  if (q.q !== undefined) {
    const hay = `${l.name}\n${l.description}\n${l.creatorName}\n${l.category}\n${l.templateId}`.toLowerCase()
    if (!hay.includes(q.q.toLowerCase())) return false
  }
  return true
}

export const MemoryProjectsStore = Layer.effect(
  ProjectsStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const listings = db.table<string, CatalogListing>("catalog_projects")
    return {
      upsertListings: (rows) => Effect.forEach(rows, (l) => listings.set(l.id, l), { discard: true }),
      getListing: (id) => Effect.sync(() => listings.get(id)),
      listListings: (q) =>
        Effect.sync(() => {
          const dir = q.order === "asc" ? 1 : -1
          // (value, id) in one direction, as Postgres orders by the row value.
          const key = (l: CatalogListing) => {
            const v = sortValue(l, q.sort)
            return q.sort === "newest" ? Date.parse(v as string) : v
          }
          const after = q.after
          const afterKey =
            after === undefined ? undefined : q.sort === "newest" ? Date.parse(after.value as string) : after.value
          return [...listings.values()]
            .filter((l) => matches(l, q))
            .filter((l) => {
              if (after === undefined) return true
              const c = cmp(key(l), afterKey!) || cmpStr(l.id, after.id)
              return c * dir > 0
            })
            .sort((a, b) => (cmp(key(a), key(b)) || cmpStr(a.id, b.id)) * dir)
            .slice(0, q.limit)
        })
    }
  })
)
