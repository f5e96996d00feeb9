// Marketplace: the template catalogue and subscription plans (read-mostly, seeded at startup).
import { cachedSuccess } from "../platform/ReadCache.js"
import { traced } from "../platform/Tracing.js"
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { Plan, PlanId, Template } from "../../schema/marketplace/marketplace.js"
import { MarketplaceStore } from "./MarketplaceStore.js"

export interface MarketplaceService {
  readonly listTemplates: Effect.Effect<ReadonlyArray<Template>, StorageUnavailable>
  readonly listPlans: Effect.Effect<ReadonlyArray<Plan>, StorageUnavailable>
  readonly getTemplate: (id: string) => Effect.Effect<Template, NotFound | StorageUnavailable>
  readonly getPlan: (id: PlanId | string) => Effect.Effect<Plan, NotFound | StorageUnavailable>
  /** One storage round trip, never answered from the cache: the readiness probe behind /health. */
  readonly ready: Effect.Effect<void, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* MarketplaceStore
  // Seeded, changed only by an operator: reused for PUBLIC_READ_TTL_MS (src/services/platform/ReadCache.ts).
  const listTemplates = (yield* cachedSuccess(store.listTemplates)).pipe(traced("Marketplace.listTemplates"))
  const listPlans = (yield* cachedSuccess(store.listPlans)).pipe(traced("Marketplace.listPlans"))
  const getTemplate = (id: string) =>
    Effect.flatMap(listTemplates, (all) => {
      const t = all.find((x) => x.id === id)
      return t
        ? Effect.succeed(t)
        : Effect.fail(new NotFound({ message: `template ${id} not found`, resource: "template", id }))
    })
  const getPlan = (id: PlanId | string) =>
    Effect.flatMap(listPlans, (all) => {
      const p = all.find((x) => x.id === id)
      return p
        ? Effect.succeed(p)
        : Effect.fail(new NotFound({ message: `plan ${id} not found`, resource: "plan", id }))
    })
  const ready = Effect.asVoid(store.listPlans)
  return Marketplace.of({ listTemplates, listPlans, getTemplate, getPlan, ready })
})

export class Marketplace extends Context.Service<Marketplace, MarketplaceService>()("agent-commerce/Marketplace") {
  static readonly make = make
  static readonly layer = Layer.effect(Marketplace, make)
}
