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
  readonly update: (n: AcpOrderNotice) => Effect.Effect<void, StorageUnavailable>
}

export class AcpOrderNoticeStore extends Context.Service<AcpOrderNoticeStore, AcpOrderNoticeStoreService>()(
  "agent-commerce/AcpOrderNoticeStore"
) {}
