// SagaStore: the storage port for purchase sagas, claimed by drivers with a lease.
// Adapters: src/layers/saga/SagaStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { SagaRecord } from "../../schema/saga/saga.js"

/** Storage port for sagas. */
export interface SagaStoreService {
  readonly insert: (record: SagaRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<SagaRecord | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<SagaRecord | undefined, StorageUnavailable>
  readonly update: (record: SagaRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Ids of up to `limit` running sagas due at `now` (nextRunAt ≤ now), oldest first, whose
   * nextRunAt is pushed to `leaseUntil` (rows another process holds are skipped: SKIP LOCKED).
   */
  readonly claimDue: (
    now: string,
    leaseUntil: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  /**
   * Up to `limit` of the buyer's sagas, newest first by (createdAt, id in byte order), from before
   * `before` (a keyset page: A2A's ListTasks lists them among the agent's tasks).
   */
  readonly listForBuyer: (
    buyerAgentId: string,
    limit: number,
    before?: { readonly createdAt: string; readonly id: string }
  ) => Effect.Effect<ReadonlyArray<SagaRecord>, StorageUnavailable>
  /** Which of `transactionIds` are the buyer's sagas' purchases (saga.transactionId), with their saga's id. */
  readonly sagasOfTransactions: (
    buyerAgentId: string,
    transactionIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<{ readonly sagaId: string; readonly transactionId: string }>, StorageUnavailable>
}

export class SagaStore extends Context.Service<SagaStore, SagaStoreService>()("agent-commerce/SagaStore") {}
