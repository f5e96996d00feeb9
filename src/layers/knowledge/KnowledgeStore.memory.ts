// In-memory store for the knowledge products and the knowledge base document.
import { Effect, Layer } from "effect"
import type { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import { KnowledgeStore } from "../../services/knowledge/KnowledgeStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

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
