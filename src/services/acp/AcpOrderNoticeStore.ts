// The storage port of ACP order event notices (docs/acp.md "Order events").
// Adapters: src/layers/acp/AcpOrderNoticeStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { AcpOrderNotice } from "../../schema/acp/sessions.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface AcpOrderNoticeStoreService {
  /** Adds the session's notice, unless it has one. */
  readonly insert: (n: AcpOrderNotice) => Effect.Effect<void, StorageUnavailable>
  readonly get: (sessionId: string) => Effect.Effect<AcpOrderNotice | undefined, StorageUnavailable>
  /** Up to `limit` notices due at `now`, oldest due first, each leased until `leaseUntil`, in one atomic step. */
  readonly claimDue: (
    now: string,
    leaseUntil: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<AcpOrderNotice>, StorageUnavailable>
  /**
   * Writes what the worker made of a notice it claimed with lease `leasedUntil`, unless the notice
   * was reopened since (its due time is no longer that lease): a refund told while the worker looked
   * at the order it had read before the refund is then not overwritten. Whether it was written.
   */
  readonly update: (n: AcpOrderNotice, leasedUntil: string) => Effect.Effect<boolean, StorageUnavailable>
  /**
   * Makes the agent's notice for the session due at `now` again (done or not: its attempts and last
   * error cleared), so the worker reads the order once more; nothing when there is none.
   */
  readonly reopen: (sessionId: string, agentId: string, now: string) => Effect.Effect<void, StorageUnavailable>
}

export class AcpOrderNoticeStore extends Context.Service<AcpOrderNoticeStore, AcpOrderNoticeStoreService>()(
  "agent-commerce/AcpOrderNoticeStore"
) {}
