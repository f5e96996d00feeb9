// OrderOwners: the port through which an order tells the party that placed it on its own money (a
// saga's deliver step: the money waits in the saga's escrow, not the order's) that the seller's
// answer or the deadline has ended it. The saga domain answers it (saga/SagaOrderOwners.ts), so the
// purchase domain calls no saga code and the saga acts on the answer at once, not at its timer.
import { Context, type Effect } from "effect"
import type { Order } from "../../schema/orders/orders.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface OrderOwnersService {
  /**
   * Called in the unit of work that ended `order`, its row locked (the order's lock is always taken
   * before its owner's, so the two never wait on each other crosswise). A buy's or a paid call's
   * order has no owner besides its buyer: nothing to do.
   */
  readonly ended: (order: Order) => Effect.Effect<void, StorageUnavailable>
}

export class OrderOwners extends Context.Service<OrderOwners, OrderOwnersService>()("agent-commerce/OrderOwners") {}
