// Foundation suite, run on memory and Postgres: seeding is idempotent, services read the seed,
// and a failed unit of work leaves no trace.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { seedCatalog } from "../../src/layers/seed/seed.js"
import { NotFound } from "../../src/schema/platform/errors.js"
import { atomically } from "../fixtures/atomically.js"
import { Knowledge } from "../../src/services/knowledge/Knowledge.js"
import { KnowledgeStore } from "../../src/services/knowledge/KnowledgeStore.js"
import { Marketplace } from "../../src/services/marketplace/Marketplace.js"
import { MarketplaceStore } from "../../src/services/marketplace/MarketplaceStore.js"
import { Plan } from "../../src/schema/marketplace/marketplace.js"
import { forEachStorage } from "../fixtures/suite.js"

forEachStorage(
  "foundation",
  (storage) => Layer.mergeAll(Marketplace.layer, Knowledge.layer).pipe(Layer.provideMerge(storage)),
  (it) => {
    it.effect("seeds idempotently and serves the seed", () =>
      Effect.gen(function* () {
        yield* seedCatalog
        yield* seedCatalog
        const m = yield* Marketplace
        const k = yield* Knowledge
        expect(yield* m.listTemplates).toHaveLength(16)
        expect((yield* m.listPlans).map((p) => p.id)).toEqual(["starter", "pro", "scale"])
        expect((yield* k.catalog).map((p) => p.priceInCents)).toEqual([25, 99, 1997, 14997, 49997, 1000000])
        expect(Object.keys((yield* k.knowledgeBase).phases)).toContain("lua_nova")
        expect((yield* m.getPlan("pro")).credits).toBe(2500)
      })
    )

    it.effect("unknown ids are typed NotFound errors", () =>
      Effect.gen(function* () {
        const m = yield* Marketplace
        const k = yield* Knowledge
        const e1 = yield* Effect.flip(m.getTemplate("no-such-template"))
        expect(e1).toBeInstanceOf(NotFound)
        const e2 = yield* Effect.flip(k.getProduct(999))
        expect(e2).toBeInstanceOf(NotFound)
      })
    )

    it.effect("a failed unit of work rolls every write back", () =>
      Effect.gen(function* () {
        const store = yield* MarketplaceStore
        const before = yield* store.listPlans
        const changed = Plan.make({ ...before[0], credits: 1 })
        const extra = Plan.make({ ...before[0], id: "pro", credits: 2 })
        const result = yield* atomically(
          Effect.gen(function* () {
            yield* store.upsertPlans([changed, extra])
            expect((yield* store.listPlans).find((p) => p.id === before[0].id)?.credits).toBe(1)
            return yield* Effect.fail("boom" as const)
          })
        ).pipe(Effect.flip)
        expect(result).toBe("boom")
        const after = yield* store.listPlans
        expect(after).toEqual(before)
        const ks = yield* KnowledgeStore
        expect((yield* ks.listProducts).length).toBe(6)
      })
    )
  }
)
