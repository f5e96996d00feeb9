// Loads the seed data into whichever store is configured; idempotent, runs at every start.
import { traced } from "../../services/platform/Tracing.js"
import { Effect, Layer, Schema } from "effect"
import { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import { Plan, Template } from "../../schema/marketplace/marketplace.js"
import { knowledgeBase } from "../../seed/knowledge-base.js"
import { knowledgeProducts } from "../../seed/knowledge-products.js"
import { plans } from "../../seed/plans.js"
import { templates } from "../../seed/templates.js"
import { Transactor } from "../../services/platform/Db.js"
import { KnowledgeStore } from "../../services/knowledge/KnowledgeStore.js"
import { MarketplaceStore } from "../../services/marketplace/MarketplaceStore.js"

/** Seed data decoded through the same schemas the API serves (a bad seed row fails startup). */
export const seedData = {
  templates: Schema.decodeUnknownSync(Schema.Array(Template))(templates),
  plans: Schema.decodeUnknownSync(Schema.Array(Plan))(plans),
  knowledgeProducts: Schema.decodeUnknownSync(Schema.Array(KnowledgeProduct))(knowledgeProducts),
  knowledgeBase: Schema.decodeUnknownSync(KnowledgeBase)(knowledgeBase)
}

export const seedCatalog = Effect.gen(function* () {
  const marketplace = yield* MarketplaceStore
  const knowledge = yield* KnowledgeStore
  const tx = yield* Transactor
  yield* tx.atomically(
    Effect.all([
      marketplace.upsertTemplates(seedData.templates),
      marketplace.upsertPlans(seedData.plans),
      knowledge.upsertProducts(seedData.knowledgeProducts),
      knowledge.putKnowledgeBase(seedData.knowledgeBase)
    ])
  )
}).pipe(traced("seed.catalog"))

export const SeedLive = Layer.effectDiscard(seedCatalog.pipe(Effect.orDie))
