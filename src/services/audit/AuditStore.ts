// AuditStore: the storage port of the audit trail. Adapters: src/layers/audit/AuditStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { AuditRecord } from "../../schema/audit/audit.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface AuditStoreService {
  /** Appends an entry, in the caller's unit of work (rolled back with it). */
  readonly insert: (record: AuditRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Up to `limit` of the agent's entries, newest first in the order they were written (entries of
   * one millisecond keep their order), after `before` (the previous page's last entry).
   */
  readonly page: (
    agentId: string,
    options: {
      readonly before: { readonly createdAt: string; readonly id: string } | undefined
      readonly limit: number
    }
  ) => Effect.Effect<ReadonlyArray<AuditRecord>, StorageUnavailable>
}

export class AuditStore extends Context.Service<AuditStore, AuditStoreService>()("agent-commerce/AuditStore") {}
