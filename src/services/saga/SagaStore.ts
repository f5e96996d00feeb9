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
}

export class SagaStore extends Context.Service<SagaStore, SagaStoreService>()("agent-commerce/SagaStore") {}
