// In-memory store for the marketplace catalogue: templates and plans.
import { Effect, Layer } from "effect"
import type { Plan, Template } from "../../schema/marketplace/marketplace.js"
import { MarketplaceStore } from "../../services/marketplace/MarketplaceStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryMarketplaceStore = Layer.effect(
  MarketplaceStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const templates = db.table<string, Template>("templates")
    const plans = db.table<string, Plan>("plans")
    return {
      listTemplates: Effect.sync(() => [...templates.values()]),
      listPlans: Effect.sync(() => [...plans.values()].sort((a, b) => a.priceCents - b.priceCents)),
      upsertTemplates: (rows) => Effect.forEach(rows, (t) => templates.set(t.id, t), { discard: true }),
      upsertPlans: (rows) => Effect.forEach(rows, (p) => plans.set(p.id, p), { discard: true })
    }
  })
)
