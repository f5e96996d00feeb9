// MppStore: the storage port for MPP payment challenges.
// Adapters: src/layers/mpp/MppStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { ChallengeRecord } from "../../schema/mpp/challenge.js"

/** Storage port for MPP challenges. */
export interface MppStoreService {
  readonly insert: (record: ChallengeRecord) => Effect.Effect<void, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<ChallengeRecord | undefined, StorageUnavailable>
  readonly update: (record: ChallengeRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Deletes the agent's open challenges that expired at or before `nowIso`, and all but the
   * newest `keep` of those still open, so one agent cannot grow the store without bound.
   */
  readonly pruneOpen: (agentId: string, nowIso: string, keep: number) => Effect.Effect<void, StorageUnavailable>
  /** The most recently paid challenges (for the health check's ledger sample). */
  readonly recentPaid: (limit: number) => Effect.Effect<ReadonlyArray<ChallengeRecord>, StorageUnavailable>
  /** A round trip to the storage (a trivial read). */
  readonly ping: Effect.Effect<void, StorageUnavailable>
}

export class MppStore extends Context.Service<MppStore, MppStoreService>()("agent-commerce/MppStore") {}
