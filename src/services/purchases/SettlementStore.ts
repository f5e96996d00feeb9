// SettlementStore: the storage port that opens a purchase (the buyer's wallet locked, or an order's
// answer: the order locked) and writes each of its steps at once (docs/architecture.md walks them).
import { Context, type Effect } from "effect"
import type { DeliveryRecord, TransactionRecord } from "../../schema/commerce/transactions.js"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import type { JournalEntry } from "../../schema/ledger/ledger.js"
import type { Order } from "../../schema/orders/orders.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { DomainEvent } from "../../schema/events/events.js"

/**
 * One step of a purchase, written at once in the caller's unit of work: its ledger entry (when the
 * step moves money), its transaction as it stands after the step (with its delivery once there is
 * one), the order it places or closes, and its events. On Postgres one statement, so the rows every
 * buyer of a seller shares (the seller's balance, the fee account) are held only from it to commit.
 * The memory store composes the ledger, purchase, order and event stores.
 */
export interface SettlementWrite {
  readonly entry: JournalEntry | null
  readonly transaction?: {
    readonly tx: TransactionRecord
    /** None while the purchase waits for its seller (a pending transaction counts in no total yet). */
    readonly delivery: DeliveryRecord | null
    /** The row is there as pending (its order was placed): this step ends it, and it counts from now. */
    readonly replacesPending: boolean
  }
  /** The order this step places, or closes (its row locked by `openOrder` in this unit of work). */
  readonly order?: { readonly place: Order } | { readonly close: Order }
  readonly events: ReadonlyArray<DomainEvent>
}

/** A purchase opened: the buyer's wallet (locked) and balance, the service, its seller's account. */
export interface Opened {
  readonly wallet: WalletRecord
  readonly balanceCents: number
  readonly service: ServiceRecord | undefined
  /** The account of the service's seller (undefined when the service or its agent is unknown). */
  readonly sellerAccountId: string | undefined
}

export interface SettlementStoreService {
  /**
   * Opens a purchase from a wallet, in the caller's unit of work: the buyer's wallet row and its
   * ledger balance locked, in that order, with the balance read under the lock (created, empty,
   * when missing: `wallet` is the row to make), the service as it is now (undefined when unknown)
   * and the account its seller belongs to. On Postgres one statement: a buy is BEGIN, this, one
   * write, COMMIT.
   */
  readonly open: (input: {
    readonly wallet: WalletRecord
    readonly serviceId: string
  }) => Effect.Effect<Opened, StorageUnavailable>
  /**
   * Opens an answer to an order (the seller's, or its deadline's), in the caller's unit of work: the
   * order locked, and the balance of its escrow read under that lock (only a unit of work holding
   * the order's lock moves its escrow). Undefined when there is no such order. On Postgres one
   * statement: an answer is BEGIN, this, one write, COMMIT.
   */
  readonly openOrder: (
    orderId: string
  ) => Effect.Effect<{ readonly order: Order; readonly escrowCents: number } | undefined, StorageUnavailable>
  readonly write: (step: SettlementWrite) => Effect.Effect<void, StorageUnavailable>
}

export class SettlementStore extends Context.Service<SettlementStore, SettlementStoreService>()(
  "agent-commerce/SettlementStore"
) {}
