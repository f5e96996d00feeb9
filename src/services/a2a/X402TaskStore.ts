// The storage port of A2A tasks paid with x402 (docs/a2a.md "Paying with x402").
// Adapters: src/layers/a2a/X402TaskStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { X402TaskRecord } from "../../schema/a2a/x402Task.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface X402TaskStoreService {
  readonly insert: (r: X402TaskRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<X402TaskRecord | undefined, StorageUnavailable>
  /**
   * Writes `next` only if the row still has `expected`'s state, payer and nonce (compare and set):
   * two payment messages for one task cannot both record theirs. Whether it was written.
   */
  readonly replace: (expected: X402TaskRecord, next: X402TaskRecord) => Effect.Effect<boolean, StorageUnavailable>
  /** Records the payment the route named (whatever else changed). */
  readonly setPayment: (id: string, paymentId: string, at: string) => Effect.Effect<void, StorageUnavailable>
  /** Removes up to `limit` tasks never paid (no authorization submitted) created before `before`; how many. */
  readonly purgeUnpaid: (before: string, limit: number) => Effect.Effect<number, StorageUnavailable>
}

export class X402TaskStore extends Context.Service<X402TaskStore, X402TaskStoreService>()(
  "agent-commerce/X402TaskStore"
) {}
