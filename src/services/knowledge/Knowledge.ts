// Knowledge service: the paid consultation catalogue and the cycle knowledge base (spec §4.5).
import { cachedSuccess } from "../platform/ReadCache.js"
import { traced } from "../platform/Tracing.js"
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import { deliverable, type Deliverable } from "./knowledgeContent.js"
import { KnowledgeStore } from "./KnowledgeStore.js"

export interface KnowledgeService {
  /** The public catalogue: active products only, ordered by id. */
  readonly catalog: Effect.Effect<ReadonlyArray<KnowledgeProduct>, StorageUnavailable>
  /** A product, active or not, always read from storage (a purchase). */
  readonly getProduct: (id: number) => Effect.Effect<KnowledgeProduct, NotFound | StorageUnavailable>
  readonly knowledgeBase: Effect.Effect<KnowledgeBase, NotFound | StorageUnavailable>
  /** What a product delivers once paid, drawn from the knowledge base. */
  readonly deliverableOf: (product: KnowledgeProduct) => Effect.Effect<Deliverable, NotFound | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* KnowledgeStore
  // The public reads are reused for PUBLIC_READ_TTL_MS; a purchase (getProduct) always reads storage.
  const active = store.listProducts.pipe(Effect.map((all) => all.filter((p) => p.isActive).sort((a, b) => a.id - b.id)))
  const catalog = (yield* cachedSuccess(active)).pipe(traced("Knowledge.catalog"))
  const getProduct = (id: number) =>
    Effect.flatMap(store.listProducts, (all) => {
      const p = all.find((x) => x.id === id)
      return p
        ? Effect.succeed(p)
        : Effect.fail(
            new NotFound({ message: `knowledge product ${id} not found`, resource: "knowledgeProduct", id: String(id) })
          )
    })
  const loaded = store.getKnowledgeBase.pipe(
    Effect.flatMap((kb) =>
      kb
        ? Effect.succeed(kb)
        : Effect.fail(new NotFound({ message: "knowledge base not loaded", resource: "knowledgeBase" }))
    )
  )
  const knowledgeBase = (yield* cachedSuccess(loaded)).pipe(traced("Knowledge.knowledgeBase"))
  /** The same text the public reads, arranged per product. */
  const deliverableOf = (product: KnowledgeProduct): Effect.Effect<Deliverable, NotFound | StorageUnavailable> =>
    Effect.map(knowledgeBase, (kb) => deliverable(product, kb))
  return Knowledge.of({ catalog, getProduct, knowledgeBase, deliverableOf })
})

export class Knowledge extends Context.Service<Knowledge, KnowledgeService>()("agent-commerce/Knowledge") {
  static readonly make = make
  static readonly layer = Layer.effect(Knowledge, make)
}
