// Orders: purchases of pull and push services waiting for their seller. Placing one holds the
// buyer's money in escrow (in the buy's unit of work); the seller's delivery settles it 85/15, its
// failure or the deadline refunds it in full, each exactly once. Sellers read their orders in
// keyset pages, optionally waiting for the next one; a buy of a push service may wait for the
// outcome. docs/fulfilment.md has the protocol.
import { Context, type Effect } from "effect"
import type { TransactionRecord } from "../../schema/commerce/transactions.js"
import type { InsufficientFunds } from "../../schema/ledger/ledger.js"
import type { DeliverBody, FailBody, Order, OrderClosed, OrderMode, OrderStatus } from "../../schema/orders/orders.js"
import type { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type { SettlementInput } from "../commerce/Settlement.js"

/** What a buy hands over when it places an order instead of settling at once. */
export interface PlaceOrder {
  /** The purchase as it would be settled (its transaction id becomes the order's id). */
  readonly purchase: Omit<SettlementInput, "from" | "memo" | "delivery">
  readonly input: unknown
  readonly mode: OrderMode
  /** How long the seller has (orderDeadlineMs of the tier). */
  readonly deadlineMs: number
  /** The buyer's wallet balance as read under its lock in this unit of work, if the caller holds it. */
  readonly lockedBalanceCents?: number
}

export interface OrdersQueryOptions {
  readonly status?: OrderStatus
  readonly cursor?: string
  readonly limit?: number
  /** When the first page is empty, wait up to this long (at most ORDER_LIST_MAX_WAIT_MS) for an order. */
  readonly waitMs?: number
}

export interface OrdersService {
  /**
   * Places an order in the caller's unit of work (the buyer's wallet locked, the policy checked):
   * the escrow hold, the pending transaction, the order and `order.created` to the seller. Fails
   * with InsufficientFunds (nothing written) when the wallet is short.
   */
  readonly place: (
    input: PlaceOrder
  ) => Effect.Effect<
    { readonly order: Order; readonly tx: TransactionRecord },
    InsufficientFunds | InvalidInput | StorageUnavailable
  >
  /**
   * The seller delivers, in its own unit of work: settled from the escrow, the transaction
   * completed. Delivering a delivered order again answers the order as it is (paid once); after a
   * failure or the deadline, OrderClosed. Another agent's order is NotFound.
   */
  readonly deliver: (
    sellerAgentId: string,
    orderId: string,
    body: DeliverBody
  ) => Effect.Effect<Order, OrderClosed | NotFound | StorageUnavailable>
  /** The seller fails the order: the escrow back to the buyer in full. Idempotent as `deliver`. */
  readonly fail: (
    sellerAgentId: string,
    orderId: string,
    body: FailBody
  ) => Effect.Effect<Order, OrderClosed | NotFound | StorageUnavailable>
  /** One order, for its seller or its buyer (anyone else: NotFound). */
  readonly get: (agentId: string, orderId: string) => Effect.Effect<Order, NotFound | StorageUnavailable>
  /** The seller's orders oldest first, in keyset pages; an empty first page may wait for the next order. */
  readonly list: (
    sellerAgentId: string,
    options: OrdersQueryOptions
  ) => Effect.Effect<
    { readonly orders: ReadonlyArray<Order>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  /** The order once it has left pending, or as it is when `maxWaitMs` has passed (undefined if unknown). */
  readonly awaitOutcome: (orderId: string, maxWaitMs: number) => Effect.Effect<Order | undefined, StorageUnavailable>
  /** Expires pending orders past their deadline (a bounded batch): refunds, marks, tells both sides. The count. */
  readonly expireDue: Effect.Effect<number, StorageUnavailable>
  /** Completes when this process next places an order (the push dispatcher's wake-up). */
  readonly placed: Effect.Effect<void>
}

export class Orders extends Context.Service<Orders, OrdersService>()("agent-commerce/Orders") {}
