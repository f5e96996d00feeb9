// The builder's storage port: one row per project, its build state included.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { ProjectRecord } from "../../schema/projects/builder.js"

export interface BuildStoreService {
  /** Serialises project creation per account for this unit of work (quota check then insert). */
  readonly lockAccount: (accountId: string) => Effect.Effect<void, StorageUnavailable>
  /** Projects of the account that count against the quota (every build not failed). */
  readonly countActive: (accountId: string) => Effect.Effect<number, StorageUnavailable>
  readonly insert: (record: ProjectRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<ProjectRecord | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<ProjectRecord | undefined, StorageUnavailable>
  readonly update: (record: ProjectRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Up to `limit` builds due at `now` (nextRunAt ≤ now), oldest first, locked for this unit of
   * work; rows another worker holds are skipped (Postgres: FOR UPDATE SKIP LOCKED).
   */
  readonly claimDue: (now: string, limit: number) => Effect.Effect<ReadonlyArray<ProjectRecord>, StorageUnavailable>
}

export class BuildStore extends Context.Service<BuildStore, BuildStoreService>()("agent-commerce/BuildStore") {}
