// Seeds the commerce catalog: the platform account that owns the seller agents, the five seller
// agents and their twelve services. Idempotent (runs at every start; ratings are kept).
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import { traced } from "../../services/platform/Tracing.js"
import { Effect, Layer, Schema } from "effect"
import { PublishServiceBody, type ServiceRecord } from "../../schema/commerce/services.js"
import { sellerAgents } from "../../seed/sellers.js"
import { commerceServices } from "../../seed/services.js"
import { CatalogStore } from "../../services/commerce/CatalogStore.js"
import { Transactor } from "../../services/platform/Db.js"
import { KeysStore } from "../../services/keys/KeysStore.js"

/** The account that owns the seeded seller agents (no password: nobody can sign in to it). */
export { PLATFORM_SELLERS_ACCOUNT }

const decodeService = Schema.decodeUnknownSync(PublishServiceBody)

/** The seed services as stored rows, validated by the same schema sellers publish through. */
export const seedServiceRecords: ReadonlyArray<ServiceRecord> = commerceServices.map((s) => {
  const body = decodeService({
    name: s.name,
    description: s.description,
    category: s.category,
    pricingModel: s.pricingModel,
    tags: s.tags,
    tiers: s.tiers,
    negotiation: s.negotiation
  })
  const seller = sellerAgents.find((a) => a.id === s.sellerAgentId)
  if (!seller) throw new Error(`seed service ${s.id} names unknown seller ${s.sellerAgentId}`)
  return {
    id: s.id,
    sellerAgentId: s.sellerAgentId,
    ...body,
    // The seeded sellers call no real model: the platform answers their orders (simulation.ts).
    fulfilment: { mode: "simulated", url: null, secret: null },
    status: "active",
    ratingSum: 0,
    ratingCount: 0,
    createdAt: seller.createdAt,
    updatedAt: seller.createdAt
  }
})

export const seedCommerce = Effect.gen(function* () {
  const keys = yield* KeysStore
  const catalog = yield* CatalogStore
  const tx = yield* Transactor
  yield* tx.atomically(
    Effect.gen(function* () {
      if (!(yield* keys.getAccount(PLATFORM_SELLERS_ACCOUNT))) {
        yield* keys
          .insertAccount({
            id: PLATFORM_SELLERS_ACCOUNT,
            email: "seller-agents@platform.invalid",
            name: "Platform seller agents",
            passwordHash: "disabled",
            planId: null,
            createdAt: sellerAgents[0].createdAt
          })
          .pipe(Effect.catchTag("Conflict", () => Effect.void))
      }
      for (const a of sellerAgents) {
        if (!(yield* keys.getAgent(a.id))) {
          yield* keys.insertAgent({
            id: a.id,
            accountId: PLATFORM_SELLERS_ACCOUNT,
            name: a.name,
            organization: a.organization,
            createdAt: a.createdAt
          })
        }
      }
      yield* catalog.upsertSeed(seedServiceRecords)
    })
  )
}).pipe(traced("seed.commerce"))

export const CommerceSeedLive = Layer.effectDiscard(seedCommerce.pipe(Effect.orDie))
