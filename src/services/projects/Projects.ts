// Projects: the marketplace catalog of projects (filters, keyset pagination, detail) and their
// evaluation through the pluggable Evaluator.
import { traced } from "../platform/Tracing.js"
import { Context, Effect, Layer } from "effect"
import { decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import { InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { type CatalogFilters } from "../../schema/sessions/sessions.js"
import {
  type CatalogListing,
  type CatalogPage,
  CatalogProject,
  CatalogProjectDetail,
  type CatalogQuery,
  type Evaluation,
  ProjectMetrics,
  revenueShare
} from "../../schema/projects/catalog.js"
import type { Template } from "../../schema/marketplace/marketplace.js"
import { catalogProjects } from "../../seed/projects.js"
import { Transactor } from "../platform/Db.js"
import { Evaluator } from "./Evaluator.js"
import { defaultOrder, ProjectsStore, sortValue } from "./ProjectsStore.js"
import { Marketplace } from "../marketplace/Marketplace.js"

export const DEFAULT_PAGE_SIZE = 20

export const toCatalogProject = (l: CatalogListing): CatalogProject =>
  CatalogProject.make({
    id: l.id,
    name: l.name,
    description: l.description,
    templateId: l.templateId,
    category: l.category,
    creatorName: l.creatorName,
    askingPriceCents: l.askingPriceCents as CatalogProject["askingPriceCents"],
    currency: "usd",
    rating: l.rating,
    metrics: ProjectMetrics.make({
      mrrCents: l.mrrCents as ProjectMetrics["mrrCents"],
      monthlyGrowthPct: l.monthlyGrowthPct,
      activeUsers: l.activeUsers,
      churnPct: l.churnPct,
      ageMonths: l.ageMonths
    }),
    createdAt: l.createdAt
  })

/** Builds the listing rows from the seed projects and the templates they were built from. */
export const listingsFromSeed = (templates: ReadonlyArray<Template>): ReadonlyArray<CatalogListing> =>
  catalogProjects.map((p) => {
    const t = templates.find((x) => x.id === p.templateId)
    if (!t) throw new Error(`seed project ${p.id} names unknown template ${p.templateId}`)
    return {
      id: p.id,
      templateId: p.templateId,
      category: t.category,
      name: p.name,
      description: p.description,
      creatorName: p.creatorName,
      askingPriceCents: p.askingPriceCents,
      rating: t.rating,
      mrrCents: p.metrics.mrrCents,
      monthlyGrowthPct: p.metrics.monthlyGrowthPct,
      activeUsers: p.metrics.activeUsers,
      churnPct: p.metrics.churnPct,
      ageMonths: p.metrics.ageMonths,
      techStack: p.techStack,
      createdAt: new Date(p.createdAt).toISOString()
    }
  })

/** Loads the catalog listings (needs the templates seeded first). Idempotent. */
export const seedCatalogProjects = Effect.gen(function* () {
  const store = yield* ProjectsStore
  const marketplace = yield* Marketplace
  const tx = yield* Transactor
  const templates = yield* marketplace.listTemplates
  yield* tx.atomically(store.upsertListings(listingsFromSeed(templates)))
}).pipe(traced("seed.catalogProjects"))

export interface ProjectsService {
  /** A page of the catalog: filtered, sorted, after the cursor's position. */
  readonly listCatalog: (filters: CatalogFilters) => Effect.Effect<CatalogPage, InvalidInput | StorageUnavailable>
  readonly getCatalogProject: (id: string) => Effect.Effect<CatalogProjectDetail, NotFound | StorageUnavailable>
  readonly getListing: (id: string) => Effect.Effect<CatalogListing, NotFound | StorageUnavailable>
  /** The evaluator's score of a catalog project. */
  readonly evaluate: (projectId: string) => Effect.Effect<Evaluation, NotFound | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* ProjectsStore
  const marketplace = yield* Marketplace
  const evaluator = yield* Evaluator

  const getListing = (id: string) =>
    Effect.flatMap(store.getListing(id), (l) =>
      l
        ? Effect.succeed(l)
        : Effect.fail(new NotFound({ message: `project ${id} not found in the catalog`, resource: "project", id }))
    )

  const listCatalog = Effect.fnUntraced(function* (filters: CatalogFilters) {
    const sort = filters.sort ?? "newest"
    const order = filters.order ?? defaultOrder(sort)
    const limit = filters.limit ?? DEFAULT_PAGE_SIZE
    const { minPriceCents, maxPriceCents } = filters
    if (minPriceCents !== undefined && maxPriceCents !== undefined && minPriceCents > maxPriceCents) {
      return yield* Effect.fail(
        new InvalidInput({ message: "minPriceCents must not exceed maxPriceCents", field: "minPriceCents" })
      )
    }
    let after: CatalogQuery["after"]
    if (filters.cursor !== undefined) {
      const c = decodeCursor(filters.cursor) as { s?: unknown; o?: unknown; v?: unknown; id?: unknown } | undefined
      const valid =
        c !== undefined &&
        c !== null &&
        c.s === sort &&
        c.o === order &&
        typeof c.id === "string" &&
        (sort === "newest"
          ? typeof c.v === "string" && !Number.isNaN(Date.parse(c.v))
          : typeof c.v === "number" && Number.isFinite(c.v))
      if (!valid) {
        return yield* Effect.fail(
          new InvalidInput({
            message: "cursor is not valid for this sort and order; start again without it",
            field: "cursor"
          })
        )
      }
      after = { value: c.v as number | string, id: c.id as string }
    }
    const q = filters.q?.trim()
    const query: CatalogQuery = {
      category: filters.category,
      minPriceCents: filters.minPriceCents,
      maxPriceCents: filters.maxPriceCents,
      minRating: filters.minRating,
      q: q === "" ? undefined : q,
      sort,
      order,
      limit: limit + 1,
      after
    }
    const rows = yield* store.listListings(query)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    const nextCursor =
      rows.length > limit && last ? encodeCursor({ s: sort, o: order, v: sortValue(last, sort), id: last.id }) : null
    return { data: page.map(toCatalogProject), nextCursor } satisfies CatalogPage
  }, traced("Projects.listCatalog"))

  const getCatalogProject = Effect.fnUntraced(function* (id: string) {
    const l = yield* getListing(id)
    const template = yield* marketplace.getTemplate(l.templateId).pipe(Effect.orDie)
    const annual = l.mrrCents * 12
    return CatalogProjectDetail.make({
      ...toCatalogProject(l),
      template,
      techStack: [...l.techStack],
      creator: { name: l.creatorName, revenueSharePercent: 85 },
      price: { askingPriceCents: l.askingPriceCents as CatalogProject["askingPriceCents"], currency: "usd" },
      revenueShare,
      annualRevenueCents: annual as CatalogProject["askingPriceCents"],
      revenueMultiple: annual > 0 ? Math.round((l.askingPriceCents / annual) * 100) / 100 : null
    })
  }, traced("Projects.getCatalogProject"))

  const evaluate = (projectId: string) =>
    Effect.flatMap(getListing(projectId), evaluator.evaluate).pipe(
      traced("Projects.evaluate", { attributes: { projectId } })
    )

  return Projects.of({ listCatalog, getCatalogProject, getListing, evaluate })
})

export class Projects extends Context.Service<Projects, ProjectsService>()("agent-commerce/Projects") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Projects, make).pipe(Layer.provide([Marketplace.layer]))
}
