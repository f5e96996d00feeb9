// RefusalsStore: the storage port of refused debits. Adapters: src/layers/refusals/RefusalsStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { RefusalRecord, RefusalView } from "../../schema/refusals/refusals.js"

export interface RefusalsStoreService {
  /**
   * Stores the refusal under the agent's account (resolved from the agent at the write); a
   * missing `serviceName` is taken from the service's catalogue row. One statement.
   */
  readonly insert: (r: RefusalRecord) => Effect.Effect<void, StorageUnavailable>
  /** The account's refusals (one agent's when `agentId`), newest first, older than `before`: at most `limit`. */
  readonly page: (
    accountId: string,
    options: {
      readonly agentId: string | undefined
      readonly before: { readonly createdAt: string; readonly id: string } | undefined
      readonly limit: number
    }
  ) => Effect.Effect<ReadonlyArray<RefusalView>, StorageUnavailable>
  /** Each agent's newest refusal, for the account's agents that have one. */
  readonly latestByAgent: (accountId: string) => Effect.Effect<ReadonlyArray<RefusalView>, StorageUnavailable>
}

export class RefusalsStore extends Context.Service<RefusalsStore, RefusalsStoreService>()(
  "agent-commerce/RefusalsStore"
) {}
