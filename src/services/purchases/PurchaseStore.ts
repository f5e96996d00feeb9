// PurchaseStore: the storage port for transactions (with their deliveries and reviews) and approvals.
import { Context, type Effect } from "effect"
import type { ApprovalRecord, ApprovalStatus } from "../../schema/commerce/approvals.js"
import type { DeliveryRecord, TransactionRecord, TransactionRow } from "../../schema/commerce/transactions.js"
import type { ReviewRecord } from "../../schema/commerce/reviews.js"
import type { TransactionFilter } from "../../schema/commerce/filters.js"
import type { Conflict, StorageUnavailable } from "../../schema/platform/errors.js"

/** Storage port for transactions (with their deliveries and reviews) and approvals. */
export interface PurchaseStoreService {
  readonly insertTransaction: (
    tx: TransactionRecord,
    delivery: DeliveryRecord
  ) => Effect.Effect<void, StorageUnavailable>
  /**
   * A pending transaction (an order waiting for its seller): the row only, no delivery; it counts in
   * no spend, usage or counter until it ends (finishPending).
   */
  readonly insertPending: (tx: TransactionRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Ends a pending transaction as `tx` (completed or failed) with its delivery: written as
   * insertTransaction writes a new one (spend, usage, counters), in the caller's unit of work.
   */
  readonly finishPending: (tx: TransactionRecord, delivery: DeliveryRecord) => Effect.Effect<void, StorageUnavailable>
  readonly getTransaction: (id: string) => Effect.Effect<TransactionRow | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly lockTransaction: (id: string) => Effect.Effect<TransactionRecord | undefined, StorageUnavailable>
  readonly updateTransaction: (tx: TransactionRecord) => Effect.Effect<void, StorageUnavailable>
  readonly findByIdempotencyKey: (
    buyerAgentId: string,
    key: string
  ) => Effect.Effect<TransactionRow | undefined, StorageUnavailable>
  /** Newest first (createdAt, id descending), at most `limit` rows. */
  readonly listTransactions: (
    filter: TransactionFilter
  ) => Effect.Effect<ReadonlyArray<TransactionRow>, StorageUnavailable>
  /** Fails with Conflict when the transaction already has a review. */
  readonly insertReview: (review: ReviewRecord) => Effect.Effect<void, Conflict | StorageUnavailable>
  readonly insertApproval: (approval: ApprovalRecord) => Effect.Effect<void, StorageUnavailable>
  readonly lockApproval: (id: string) => Effect.Effect<ApprovalRecord | undefined, StorageUnavailable>
  readonly updateApproval: (approval: ApprovalRecord) => Effect.Effect<void, StorageUnavailable>
  readonly findApprovalByKey: (
    agentId: string,
    key: string
  ) => Effect.Effect<ApprovalRecord | undefined, StorageUnavailable>
  /** Up to `limit` of the account's approvals (of one stored status), newest first, from after `before` (a keyset page). */
  readonly listApprovals: (
    accountId: string,
    status: ApprovalStatus | undefined,
    limit: number,
    before?: { readonly createdAt: string; readonly id: string }
  ) => Effect.Effect<ReadonlyArray<ApprovalRecord>, StorageUnavailable>
  /** Up to `limit` of one agent's own approvals (every status), newest first, from after `before`. */
  readonly listAgentApprovals: (
    agentId: string,
    limit: number,
    before?: { readonly createdAt: string; readonly id: string }
  ) => Effect.Effect<ReadonlyArray<ApprovalRecord>, StorageUnavailable>
}

export class PurchaseStore extends Context.Service<PurchaseStore, PurchaseStoreService>()(
  "agent-commerce/PurchaseStore"
) {}
