// The seller's side of an agent, as its owner reads it: the orders waiting for the agent (oldest
// first, a bounded page), the ones that ended lately, and what the agent earned as seller (its
// share after the platform fee) and has waiting in the escrow of its pending orders.
import { Schema } from "effect"
import { Cents, Cursor, PageLimit, Timestamp } from "../platform/common.js"
import { OrderMode, OrderStatus } from "./orders.js"

/** One order as the seller's owner sees it: what, for whom, how much, and where it stands. */
export const SellerOrder = Schema.Struct({
  id: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  tierId: Schema.String,
  priceCents: Cents,
  /** The seller's share of the price once delivered (the price less the platform fee). */
  sellerCents: Cents,
  buyerAgentId: Schema.String,
  /** The buyer agent's name; null when it is gone. */
  buyerName: Schema.NullOr(Schema.String),
  mode: OrderMode,
  status: OrderStatus,
  createdAt: Timestamp,
  deadlineAt: Timestamp,
  answeredAt: Schema.NullOr(Timestamp),
  error: Schema.NullOr(Schema.String),
  /** Push orders: attempts so far, when the seller accepted (202), the last attempt's error; null for pull. */
  push: Schema.NullOr(
    Schema.Struct({
      attempts: Schema.Int,
      acceptedAt: Schema.NullOr(Timestamp),
      lastError: Schema.NullOr(Schema.String)
    })
  )
})
export type SellerOrder = typeof SellerOrder.Type

const SellerEarnings = Schema.Struct({
  /** The seller's share of its completed sales placed this UTC day, this UTC month, ever (refunded sales excluded). */
  todayCents: Cents,
  thisMonthCents: Cents,
  allTimeCents: Cents,
  /** The seller's share of its pending orders' prices: in escrow, paid on delivery, not earned yet. */
  heldCents: Cents
})

export const SellerBoard = Schema.Struct({
  agentId: Schema.String,
  pending: Schema.Struct({
    /** Oldest first (the order the seller should answer them in). */
    orders: Schema.Array(SellerOrder),
    /** How many orders wait in all. */
    count: Schema.Int,
    nextCursor: Schema.NullOr(Schema.String)
  }),
  /** The latest orders that ended (delivered, failed, expired), newest placed first. */
  ended: Schema.Array(SellerOrder),
  earnings: SellerEarnings,
  generatedAt: Timestamp
})
export type SellerBoard = typeof SellerBoard.Type

export const SELLER_BOARD_PAGE = 10
export const SellerBoardUrlParams = Schema.Struct({
  /** The previous answer's `pending.nextCursor`: the pending orders after it. */
  cursor: Schema.optional(Cursor),
  /** Pending orders per page (1–100, default 10). */
  limit: Schema.optional(PageLimit)
})
