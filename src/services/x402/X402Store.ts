// X402Store: the storage port of x402 payments (one row per payment, docs/x402.md).
// Adapters: src/layers/x402/X402Store.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { PaymentRecord, PaymentStatus } from "../../schema/x402/x402.js"

export interface X402StoreService {
  /**
   * Claims the payment: inserted unless a payment with the same payer and key, or the same
   * authorization (network, asset, payer, nonce), exists — then that one is answered, untouched.
   */
  readonly claim: (
    record: PaymentRecord
  ) => Effect.Effect<
    { readonly _tag: "Claimed" } | { readonly _tag: "Exists"; readonly existing: PaymentRecord },
    StorageUnavailable
  >
  readonly get: (id: string) => Effect.Effect<PaymentRecord | undefined, StorageUnavailable>
  /** The payment of one authorization (network, asset, payer, nonce; lower case), if any. */
  readonly byAuthorization: (
    network: string,
    asset: string,
    payer: string,
    nonce: string
  ) => Effect.Effect<PaymentRecord | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<PaymentRecord | undefined, StorageUnavailable>
  readonly update: (record: PaymentRecord) => Effect.Effect<void, StorageUnavailable>
  /** Forgets a payment that never moved money (refused by the facilitator): the payer may sign again. */
  readonly remove: (id: string) => Effect.Effect<void, StorageUnavailable>
  /** Payments in these states, oldest first (the reconciliation's work list). */
  readonly inStatus: (
    statuses: ReadonlyArray<PaymentStatus>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<PaymentRecord>, StorageUnavailable>
  /** Every payment, oldest first, in pages after `afterId` (the books check against the chain). */
  readonly page: (
    afterId: string | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<PaymentRecord>, StorageUnavailable>
}

export class X402Store extends Context.Service<X402Store, X402StoreService>()("agent-commerce/X402Store") {}
