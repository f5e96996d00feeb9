// NegotiationStore: the storage port for negotiations, including the durable schedule of the
// automatic seller's answers. Adapters: src/layers/negotiation/NegotiationStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { NegotiationRecord } from "../../schema/negotiation/negotiation.js"
import type { NegotiationFilter } from "../../schema/negotiation/query.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

/** Storage port for negotiations. */
export interface NegotiationStoreService {
  readonly insert: (record: NegotiationRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<NegotiationRecord | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<NegotiationRecord | undefined, StorageUnavailable>
  readonly update: (record: NegotiationRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Negotiations where the agent is buyer or seller (only `filter.role`, when named), newest first,
   * after the keyset cursor; with `filter.status`, only those in that state as of `filter.now`.
   */
  readonly listForAgent: (
    agentId: string,
    options: {
      readonly limit: number
      readonly before?: { readonly createdAt: string; readonly id: string }
      readonly filter?: NegotiationFilter
    }
  ) => Effect.Effect<ReadonlyArray<NegotiationRecord>, StorageUnavailable>
  /**
   * Up to `limit` negotiations whose automatic seller answer is due (sellerDueAt ≤ now), oldest
   * first, locked for this unit of work; rows another process holds are skipped (SKIP LOCKED).
   */
  readonly claimDue: (now: string, limit: number) => Effect.Effect<ReadonlyArray<NegotiationRecord>, StorageUnavailable>
}

export class NegotiationStore extends Context.Service<NegotiationStore, NegotiationStoreService>()(
  "agent-commerce/NegotiationStore"
) {}
