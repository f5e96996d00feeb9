// The orders routes' query: a status, a keyset page, and how long an empty first page may wait.
import { Schema } from "effect"
import { ORDER_LIST_MAX_WAIT_MS, OrderStatus } from "../../schema/orders/orders.js"
import { Cursor, PageLimit, QueryInt } from "../../schema/platform/common.js"

export const OrdersQuery = Schema.Struct({
  status: Schema.optional(OrderStatus),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit),
  /** Milliseconds an empty first page waits for the next order (0 to 25,000). */
  waitMs: Schema.optional(QueryInt(0, ORDER_LIST_MAX_WAIT_MS))
})
