// The knowledge domain's storage port: the paid products and the knowledge base document.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"

export interface KnowledgeStoreService {
  readonly listProducts: Effect.Effect<ReadonlyArray<KnowledgeProduct>, StorageUnavailable>
  readonly upsertProducts: (products: ReadonlyArray<KnowledgeProduct>) => Effect.Effect<void, StorageUnavailable>
  readonly getKnowledgeBase: Effect.Effect<KnowledgeBase | undefined, StorageUnavailable>
  readonly putKnowledgeBase: (kb: KnowledgeBase) => Effect.Effect<void, StorageUnavailable>
}

export class KnowledgeStore extends Context.Service<KnowledgeStore, KnowledgeStoreService>()(
  "agent-commerce/KnowledgeStore"
) {}
