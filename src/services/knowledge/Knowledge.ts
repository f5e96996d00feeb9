// Knowledge service: the paid consultation catalogue and the cycle knowledge base (spec §4.5).
import { cachedSuccess } from "../platform/ReadCache.js"
import { traced } from "../platform/Tracing.js"
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import { deliverable, type Deliverable } from "./knowledgeContent.js"

/** Storage port for knowledge products and the knowledge base document. */
export class KnowledgeStore extends Context.Service<
  KnowledgeStore,
  {
    readonly listProducts: Effect.Effect<ReadonlyArray<KnowledgeProduct>, StorageUnavailable>
    readonly upsertProducts: (products: ReadonlyArray<KnowledgeProduct>) => Effect.Effect<void, StorageUnavailable>
    readonly getKnowledgeBase: Effect.Effect<KnowledgeBase | undefined, StorageUnavailable>
    readonly putKnowledgeBase: (kb: KnowledgeBase) => Effect.Effect<void, StorageUnavailable>
  }
>()("KnowledgeStore") {}

export class Knowledge extends Context.Service<Knowledge>()("Knowledge", {
  make: Effect.gen(function* () {
    const store = yield* KnowledgeStore
    /** The public catalogue: active products only, ordered by id. */
    // The public reads are reused for PUBLIC_READ_TTL_MS; a purchase (getProduct) always reads storage.
    const catalog = (yield* cachedSuccess(store.listProducts.pipe(Effect.map((all) => all.filter((p) => p.isActive).sort((a, b) => a.id - b.id))))).pipe(
      traced("Knowledge.catalog")
    )
    const getProduct = (id: number) =>
      Effect.flatMap(store.listProducts, (all) => {
        const p = all.find((x) => x.id === id)
        return p ? Effect.succeed(p) : Effect.fail(new NotFound({ message: `knowledge product ${id} not found`, resource: "knowledgeProduct", id: String(id) }))
      })
    const knowledgeBase = (yield* cachedSuccess(
      store.getKnowledgeBase.pipe(
        Effect.flatMap((kb) => (kb ? Effect.succeed(kb) : Effect.fail(new NotFound({ message: "knowledge base not loaded", resource: "knowledgeBase" }))))
      )
    )).pipe(traced("Knowledge.knowledgeBase"))
    /** What a product delivers once paid, drawn from the knowledge base (the same text the public reads, arranged per product). */
    const deliverableOf = (product: KnowledgeProduct): Effect.Effect<Deliverable, NotFound | StorageUnavailable> =>
      Effect.map(knowledgeBase, (kb) => deliverable(product, kb))
    return { catalog, getProduct, knowledgeBase, deliverableOf } as const
  })
}) {
  static readonly layer = Layer.effect(Knowledge, Knowledge.make)
}
