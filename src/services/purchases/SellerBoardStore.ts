// SellerBoardStore: the reads behind the seller's side of an owner's agent page that the order
// store does not answer. Each is bounded by what is waiting or by a fixed count, never by the
// seller's whole history: the pending orders' totals, the latest ended orders, and the earnings
// (the current month's completed sales, and the running all-time counter).
// Adapters: src/layers/orders/SellerBoardStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { Order } from "../../schema/orders/orders.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

/** What the board shows of an order (no input, output or idempotency key). */
export type BoardOrder = Pick<
  Order,
  | "id"
  | "serviceId"
  | "serviceName"
  | "tierId"
  | "priceCents"
  | "buyerAgentId"
  | "mode"
  | "status"
  | "createdAt"
  | "deadlineAt"
  | "answeredAt"
  | "error"
  | "push"
>

export interface SellerTotals {
  /** Orders waiting for the seller. */
  readonly pendingCount: number
  /** The seller's share (splitSettlement) of their prices, summed order by order. */
  readonly heldCents: number
  /** The seller's share of completed sales placed since the UTC day's and month's start, and ever. */
  readonly todayCents: number
  readonly thisMonthCents: number
  readonly allTimeCents: number
}

export interface SellerBoardStoreService {
  /**
   * Pending count, held share and earnings; `dayStart` and `monthStart` are ISO instants. Without
   * them the day's and month's figures are not read (0): the live stamp needs only the others.
   */
  readonly totals: (
    sellerAgentId: string,
    at: { readonly dayStart: string; readonly monthStart: string } | undefined
  ) => Effect.Effect<SellerTotals, StorageUnavailable>
  /** The seller's latest `limit` orders that ended (delivered, failed, expired), newest placed first. */
  readonly ended: (sellerAgentId: string, limit: number) => Effect.Effect<ReadonlyArray<BoardOrder>, StorageUnavailable>
}

export class SellerBoardStore extends Context.Service<SellerBoardStore, SellerBoardStoreService>()(
  "agent-commerce/SellerBoardStore"
) {}
