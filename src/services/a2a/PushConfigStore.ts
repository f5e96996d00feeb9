// The storage port of A2A push notification configurations (docs/a2a.md "Push notifications").
// Adapters: src/layers/a2a/PushConfigStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { PushConfigRecord } from "../../schema/a2a/push.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface PushConfigStoreService {
  /**
   * Serialises, until the caller's unit of work ends, every creation of the agent's configurations
   * (the limits are counted and then written: two creations at once must not both fit in the last place).
   */
  readonly lockAgent: (agentId: string) => Effect.Effect<void, StorageUnavailable>
  /** Inserts, or replaces the task's configuration of the same id. */
  readonly put: (r: PushConfigRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (taskId: string, id: string) => Effect.Effect<PushConfigRecord | undefined, StorageUnavailable>
  /** A task's configurations, oldest first (a task has at most PUSH_CONFIGS_PER_TASK). */
  readonly listForTask: (taskId: string) => Effect.Effect<ReadonlyArray<PushConfigRecord>, StorageUnavailable>
  /** Whether there was one to delete. */
  readonly delete: (taskId: string, id: string) => Effect.Effect<boolean, StorageUnavailable>
  /** How many of the agent's configurations are not done yet. */
  readonly countOpen: (agentId: string) => Effect.Effect<number, StorageUnavailable>
  /**
   * Up to `limit` configurations due at `now`, oldest due first, each leased until `leaseUntil` (its
   * `nextAttemptAt` moved there) in one atomic step (one statement on Postgres): another process
   * skips them meanwhile.
   */
  readonly claimDue: (
    now: string,
    leaseUntil: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<PushConfigRecord>, StorageUnavailable>
  /** Writes a claimed configuration's outcome, unless it was deleted or replaced since (false then). */
  readonly update: (r: PushConfigRecord) => Effect.Effect<boolean, StorageUnavailable>
}

export class PushConfigStore extends Context.Service<PushConfigStore, PushConfigStoreService>()(
  "agent-commerce/PushConfigStore"
) {}
