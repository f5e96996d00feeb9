// The disputes' storage port (one dispute per transaction).
import { Context, type Effect } from "effect"
import type { DisputeRecord } from "../../schema/commerce/disputes.js"
import type { Conflict, StorageUnavailable } from "../../schema/platform/errors.js"

export interface DisputeStoreService {
  /** Fails with Conflict when the transaction already has a dispute. */
  readonly insert: (d: DisputeRecord) => Effect.Effect<void, Conflict | StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<DisputeRecord | undefined, StorageUnavailable>
  readonly lock: (id: string) => Effect.Effect<DisputeRecord | undefined, StorageUnavailable>
  readonly update: (d: DisputeRecord) => Effect.Effect<void, StorageUnavailable>
  /** Ids of open disputes past respondBy and under_review ones past reviewDueAt, oldest first. */
  readonly listDue: (nowIso: string, limit: number) => Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  /** Up to `limit` of the agent's disputes as buyer or seller, newest first, from after `before` (a keyset page). */
  readonly listForAgent: (
    agentId: string,
    limit: number,
    before?: { readonly createdAt: string; readonly id: string }
  ) => Effect.Effect<ReadonlyArray<DisputeRecord>, StorageUnavailable>
}

/** Storage port for disputes (one per transaction). */
export class DisputeStore extends Context.Service<DisputeStore, DisputeStoreService>()("agent-commerce/DisputeStore") {}
