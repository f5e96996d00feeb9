// The storage port of write receipts: one row per (scope, key) naming what a keyed write made, written
// in that write's own unit of work. Adapters: src/layers/idempotency/WriteReceiptStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface WriteReceipt {
  /** Whose key it is: the caller's idempotency scope (a hash of its credential). */
  readonly scope: string
  readonly key: string
  /** Which write made it (`saga.start`, `negotiation.respond`, …). */
  readonly kind: string
  /** sha256 of the write's kind and canonical input: the same key with another request is refused. */
  readonly fingerprint: string
  /** The id of what the write made or changed (saga, investment, negotiation, agent, key, approval). */
  readonly resultId: string
  readonly createdAt: string
}

export interface WriteReceiptStoreService {
  readonly get: (scope: string, key: string) => Effect.Effect<WriteReceipt | undefined, StorageUnavailable>
  /**
   * Records the receipt inside the caller's unit of work; false when (scope, key) already has one
   * (on Postgres: another attempt with that key committed first, after this one began).
   */
  readonly insert: (receipt: WriteReceipt) => Effect.Effect<boolean, StorageUnavailable>
}

export class WriteReceiptStore extends Context.Service<WriteReceiptStore, WriteReceiptStoreService>()(
  "agent-commerce/WriteReceiptStore"
) {}
