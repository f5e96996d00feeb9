// In-memory stores for catalog listings, builder projects (with their build state) and agent sessions.
import { Effect, Layer } from "effect"
import type { CatalogListing, CatalogQuery } from "../../schema/projects/catalog.js"
import type { ProjectRecord } from "../../schema/projects/builder.js"
import type { SessionRecord } from "../../schema/sessions/sessions.js"
import { BuildStore } from "../../services/projects/Builder.js"
import { ProjectsStore, sortValue } from "../../services/projects/Projects.js"
import { SessionStore } from "../../services/sessions/Sessions.js"
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
          const afterKey = after === undefined ? undefined : q.sort === "newest" ? Date.parse(after.value as string) : after.value
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

export const MemoryBuildStore = Layer.effect(
  BuildStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const projects = db.table<string, ProjectRecord>("projects")
    /** Account → its project ids (Postgres: projects_account_idx). */
    const byAccount = db.table<string, Array<string>>("projects_by_account")
    return {
      // The memory engine's write lock already serialises units of work.
      lockAccount: () => Effect.void,
      countActive: (accountId) =>
        Effect.sync(() => (byAccount.get(accountId) ?? []).filter((id) => projects.get(id)!.status !== "failed").length),
      insert: (r) => Effect.andThen(projects.set(r.id, r), byAccount.append(r.accountId, r.id)),
      get: (id) => Effect.sync(() => projects.get(id)),
      getForUpdate: (id) => Effect.sync(() => projects.get(id)),
      update: (r) => projects.set(r.id, r),
      claimDue: (now, limit) =>
        Effect.sync(() => {
          const at = Date.parse(now)
          return [...projects.values()]
            .filter((p) => p.nextRunAt !== null && Date.parse(p.nextRunAt) <= at)
            .sort((a, b) => Date.parse(a.nextRunAt!) - Date.parse(b.nextRunAt!) || cmpStr(a.id, b.id))
            .slice(0, limit)
        })
    }
  })
)

export const MemorySessionStore = Layer.effect(
  SessionStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const sessions = db.table<string, SessionRecord>("agent_sessions")
    return {
      insert: (r) => sessions.set(r.id, r),
      get: (id) => Effect.sync(() => sessions.get(id)),
      getForUpdate: (id) => Effect.sync(() => sessions.get(id)),
      update: (r) => sessions.set(r.id, r)
    }
  })
)
