// OrderStore: where orders are kept. Writes run in the caller's unit of work; pages are keyset
// pages on (createdAt, id), oldest first, so a seller works its queue in the order it was placed.
import { Context, type Effect } from "effect"
import type { Order, OrderStatus, PushState } from "../../schema/orders/orders.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface OrderCursor {
  readonly createdAt: string
  readonly id: string
}

export interface OrderStoreService {
  readonly insert: (order: Order) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<Order | undefined, StorageUnavailable>
  /** The order, locked for the caller's unit of work (Postgres: FOR UPDATE). */
  readonly getForUpdate: (id: string) => Effect.Effect<Order | undefined, StorageUnavailable>
  /** The buyer's order placed with this idempotency key, if any. */
  readonly findByKey: (buyerAgentId: string, key: string) => Effect.Effect<Order | undefined, StorageUnavailable>
  /** A seller's orders, optionally of one status, after the cursor, oldest first. */
  readonly listForSeller: (
    sellerAgentId: string,
    options: {
      readonly status: OrderStatus | undefined
      readonly after: OrderCursor | undefined
      readonly limit: number
    }
  ) => Effect.Effect<ReadonlyArray<Order>, StorageUnavailable>
  /** Replaces a pending order with its ended self (status, answer, time); the caller holds its lock. */
  readonly close: (order: Order) => Effect.Effect<void, StorageUnavailable>
  /** Pending orders whose deadline has passed, oldest deadline first. */
  readonly dueExpiries: (nowIso: string, limit: number) => Effect.Effect<ReadonlyArray<Order>, StorageUnavailable>
  /**
   * Pending push orders not accepted, whose next attempt is due, at most `perSeller` of any one
   * seller (a seller with a long backlog does not fill the batch), up to `limit`.
   */
  readonly duePushes: (
    nowIso: string,
    perSeller: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Order>, StorageUnavailable>
  /**
   * A push attempt's state; `offeredAt` when the attempt starts now (the order reaches its seller: its
   * latency is measured from the attempt that gets the answer).
   */
  readonly recordPushAttempt: (
    id: string,
    push: PushState,
    offeredAt?: string
  ) => Effect.Effect<void, StorageUnavailable>
  /**
   * Of `sellerAgentIds`, those with a pending order placed after `sinceIso`: what the process's one
   * reader asks each second on behalf of every seller waiting on its list (orders placed elsewhere).
   */
  readonly sellersWithNewOrders: (
    sellerAgentIds: ReadonlyArray<string>,
    sinceIso: string
  ) => Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  /** Of `ids`, the orders that have ended: what the one reader asks on behalf of every buy waiting on one. */
  readonly endedAmong: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  /** The pending orders of `ids` not yet offered reach their seller at `at` (a pull seller listed them). */
  readonly markOffered: (ids: ReadonlyArray<string>, at: string) => Effect.Effect<void, StorageUnavailable>
}

export class OrderStore extends Context.Service<OrderStore, OrderStoreService>()("agent-commerce/OrderStore") {}
