// In-memory stores for the marketplace catalogue and the knowledge products.
import { Effect, Layer } from "effect"
import type { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import type { Plan, Template } from "../../schema/marketplace/marketplace.js"
import { KnowledgeStore } from "../../services/knowledge/Knowledge.js"
import { MarketplaceStore } from "../../services/marketplace/Marketplace.js"
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

export const MemoryKnowledgeStore = Layer.effect(
  KnowledgeStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const products = db.table<number, KnowledgeProduct>("knowledge_products")
    const docs = db.table<string, KnowledgeBase>("knowledge_base")
    return {
      listProducts: Effect.sync(() => [...products.values()].sort((a, b) => a.id - b.id)),
      upsertProducts: (rows) => Effect.forEach(rows, (p) => products.set(p.id, p), { discard: true }),
      getKnowledgeBase: Effect.sync(() => docs.get("current")),
      putKnowledgeBase: (kb) => docs.set("current", kb)
    }
  })
)
