// Waiting on orders: a seller's list that waits for its next order, and a buy that waits for its
// order's outcome. This process's own placements and endings wake the waiters at once (a PubSub);
// the store is read again every second for what other processes did.
import { Clock, Duration, Effect, PubSub } from "effect"
import { ORDER_LIST_MAX_WAIT_MS } from "../../schema/orders/orders.js"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import type { OrdersQueryOptions } from "./Orders.js"
import type { OrderStoreService } from "./OrderStore.js"

/** Something happened to an order in this process: placed (for its seller) or ended. */
export interface Signal {
  readonly sellerAgentId: string
  readonly orderId: string
}

/** A waiting list or buy reads the store at least this often (orders placed by other processes). */
const REREAD_MS = 1_000
/** After a wake-up from this process, the next read comes this soon (the placing commit may lag). */
const SOON_MS = 100
const PAGE = 50

/** Waits for a signal matching `pick`, or `ms`, whichever is first: true when signalled. */
const signalled = (hub: PubSub.PubSub<Signal>, pick: (s: Signal) => boolean, ms: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sub = yield* PubSub.subscribe(hub)
      const take: Effect.Effect<boolean> = Effect.flatMap(PubSub.take(sub), (s) =>
        pick(s) ? Effect.succeed(true) : take
      )
      return yield* Effect.raceFirst(take, Effect.as(Effect.sleep(Duration.millis(ms)), false))
    })
  )

export const makeWaits = ({
  store,
  placedHub,
  endedHub
}: {
  readonly store: OrderStoreService
  readonly placedHub: PubSub.PubSub<Signal>
  readonly endedHub: PubSub.PubSub<Signal>
}) => {
  const list = Effect.fnUntraced(function* (sellerAgentId: string, options: OrdersQueryOptions) {
    const after = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && after === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not one this list gave", field: "cursor" }))
    }
    const limit = Math.max(1, Math.min(100, options.limit ?? PAGE))
    const read = Effect.map(
      store.listForSeller(sellerAgentId, { status: options.status, after, limit: limit + 1 }),
      (rows) => ({
        orders: rows.slice(0, limit),
        nextCursor: rows.length > limit ? encodeTimeCursor(rows[limit - 1]!) : null
      })
    )
    const first = yield* read
    const wait = Math.min(ORDER_LIST_MAX_WAIT_MS, Math.max(0, options.waitMs ?? 0))
    if (first.orders.length > 0 || wait === 0) return first
    // Nothing yet: wait for this seller's next order (this process tells at once; others are read).
    const until = (yield* Clock.currentTimeMillis) + wait
    let next = REREAD_MS
    for (;;) {
      const left = until - (yield* Clock.currentTimeMillis)
      if (left <= 0) return first
      const woke = yield* signalled(placedHub, (s) => s.sellerAgentId === sellerAgentId, Math.min(left, next))
      next = woke ? SOON_MS : REREAD_MS
      const page = yield* read
      if (page.orders.length > 0) return page
    }
  })

  const awaitOutcome = Effect.fnUntraced(function* (orderId: string, maxWaitMs: number) {
    const until = (yield* Clock.currentTimeMillis) + maxWaitMs
    for (;;) {
      const order = yield* store.get(orderId)
      if (order === undefined || order.status !== "pending") return order
      const left = until - (yield* Clock.currentTimeMillis)
      if (left <= 0) return order
      yield* signalled(endedHub, (s) => s.orderId === orderId, Math.min(left, REREAD_MS))
    }
  })

  return { list, awaitOutcome }
}
