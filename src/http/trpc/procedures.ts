// The procedure table served at /api/trpc/<router>.<procedure>; each entry calls one service method.
import { Effect, Schema } from "effect"
import { Knowledge } from "../../services/knowledge/Knowledge.js"
import { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import { Plan, Template } from "../../schema/marketplace/marketplace.js"
import { Marketplace } from "../../services/marketplace/Marketplace.js"
import { publicAccess, query, type Procedure } from "./procedure.js"

export const publicProcedures = {
  "marketplace.getTemplates": query({
    description: "All marketplace templates",
    access: publicAccess,
    output: Schema.Array(Template),
    handler: () => Effect.flatMap(Marketplace, (m) => m.listTemplates)
  }),
  "subscription.getPlans": query({
    description: "Subscription plans",
    access: publicAccess,
    output: Schema.Array(Plan),
    handler: () => Effect.flatMap(Marketplace, (m) => m.listPlans)
  }),
  "publicApi.catalog": query({
    description: "All available knowledge services with prices and descriptions",
    access: publicAccess,
    output: Schema.Array(KnowledgeProduct),
    handler: () => Effect.flatMap(Knowledge, (k) => k.catalog)
  }),
  "publicApi.knowledgeBase": query({
    description: "The cycle knowledge base (phases and story)",
    access: publicAccess,
    output: KnowledgeBase,
    handler: () => Effect.flatMap(Knowledge, (k) => k.knowledgeBase)
  })
} satisfies Record<string, Procedure<Marketplace | Knowledge>>
