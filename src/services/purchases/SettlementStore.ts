// SettlementStore: the storage port that writes a settled purchase in one go.
import { Context, type Effect } from "effect"
import type { DeliveryRecord, TransactionRecord } from "../../schema/commerce/transactions.js"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import type { JournalEntry } from "../../schema/ledger/ledger.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { DomainEvent } from "../../schema/events/events.js"

/**
 * Storage port: a settled purchase written at once in the caller's unit of work — its ledger entry
 * (when this purchase posts one), the transaction with its delivery record and the buyer's running
 * totals, and its events. On Postgres one statement: the rows every buyer of a seller shares (the
 * seller's balance, the fee account) are held only from it to commit. The memory store composes
 * the ledger, commerce and event stores.
 */
export interface SettlementStoreService {
  /**
   * Opens a purchase from a wallet, in the caller's unit of work: the buyer's wallet row and its
   * ledger balance locked, in that order, with the balance read under the lock (created, empty,
   * when missing: `wallet` is the row to make), and the service as it is now (undefined when
   * unknown). On Postgres one statement: a buy is BEGIN, this, the settlement, COMMIT.
   */
  readonly open: (input: {
    readonly wallet: WalletRecord
    readonly serviceId: string
  }) => Effect.Effect<
    { readonly wallet: WalletRecord; readonly balanceCents: number; readonly service: ServiceRecord | undefined },
    StorageUnavailable
  >
  readonly write: (settled: {
    readonly entry: JournalEntry | null
    readonly tx: TransactionRecord
    readonly delivery: DeliveryRecord
    readonly events: ReadonlyArray<DomainEvent>
    /** The transaction's row is there as pending (an order): it ends as this one (PurchaseStore.finishPending). */
    readonly replacesPending?: boolean
  }) => Effect.Effect<void, StorageUnavailable>
}

export class SettlementStore extends Context.Service<SettlementStore, SettlementStoreService>()(
  "agent-commerce/SettlementStore"
) {}
