// Orders: the purchase's state while it waits for its seller (pull or push). Placing one holds the
// buyer's money in the order's escrow, in the purchase's unit of work; the seller's delivery settles
// it 85/15, its failure or the deadline gives it back in full, each exactly once, each in one write
// (Settlement). A saga's deliver step places orders too (origin saga): the money stays in the saga's
// escrow, the answer is only recorded, and the saga is told (the OrderOwners port). Sellers read
// their orders in keyset pages, optionally waiting for the next one; a buy of a push service may wait
// for the outcome. docs/fulfilment.md has the protocol.
import { Clock, Context, Duration, Effect, Layer, PubSub } from "effect"
import type { TransactionRecord } from "../../schema/commerce/transactions.js"
import type { InsufficientFunds } from "../../schema/ledger/ledger.js"
import {
  type DeliverBody,
  type FailBody,
  type Order,
  ORDER_LIST_MAX_WAIT_MS,
  ORDER_CANCELLED,
  OrderClosed,
  type OrderMode,
  type OrderStatus,
  sagaOf
} from "../../schema/orders/orders.js"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { InvalidInput, NotFound, RateLimited, type StorageUnavailable } from "../../schema/platform/errors.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Transactor } from "../platform/Db.js"
import { NegotiatedPrices } from "./NegotiatedPrices.js"
import { OrderOwners } from "./OrderOwners.js"
import { OrderStore } from "./OrderStore.js"
import { ended } from "./orderEnd.js"
import { newOrder, type PurchaseRecord, purchaseOfOrder } from "./records.js"
import { Settlement } from "./Settlement.js"

/** What a purchase hands over when it places an order instead of settling at once. */
export interface PlaceOrder {
  /** The purchase (its transaction id becomes the order's id; a saga's reference makes it the saga's order). */
  readonly purchase: PurchaseRecord
  readonly input: unknown
  readonly mode: OrderMode
  /** How long the seller has (orderDeadlineMs of the tier). */
  readonly deadlineMs: number
  /** The buyer's wallet balance as read under its lock in this unit of work (Settlement.open), if the caller holds it. */
  readonly lockedBalanceCents?: number
}

export interface OrdersQueryOptions {
  readonly status?: OrderStatus
  readonly cursor?: string
  readonly limit?: number
  /** When the first page is empty, wait up to this long (at most ORDER_LIST_MAX_WAIT_MS) for an order. */
  readonly waitMs?: number
  /** Who waits (the caller's key): at most LIST_WAITS_PER_KEY of its lists wait at once in a process. */
  readonly waiter?: string
}

export interface OrdersService {
  /**
   * Places an order in the caller's unit of work (the buyer's wallet locked, the policy checked): the
   * escrow hold, the pending transaction, the order and `order.created` to the seller, in one write.
   * Fails with InsufficientFunds (nothing written) when the wallet is short. The hold's entry id
   * (null for a saga's order, whose money the saga holds).
   */
  readonly place: (
    input: PlaceOrder
  ) => Effect.Effect<
    { readonly order: Order; readonly tx: TransactionRecord; readonly entryId: string | null },
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
  /** The buyer withdraws its pending order: refunded in full, not the seller's failure (docs/fulfilment.md). */
  readonly cancel: (
    buyerAgentId: string,
    orderId: string
  ) => Effect.Effect<Order, OrderClosed | NotFound | StorageUnavailable>
  /** One order, for its seller or its buyer (anyone else: NotFound). */
  readonly get: (agentId: string, orderId: string) => Effect.Effect<Order, NotFound | StorageUnavailable>
  /**
   * The seller's orders oldest first, in keyset pages; an empty first page may wait for the next order
   * (a waiting list reads the store again only when woken: RateLimited past LIST_WAITS_PER_KEY at once).
   */
  readonly list: (
    sellerAgentId: string,
    options: OrdersQueryOptions
  ) => Effect.Effect<
    { readonly orders: ReadonlyArray<Order>; readonly nextCursor: string | null },
    InvalidInput | RateLimited | StorageUnavailable
  >
  /** The order once it has left pending, or as it is when `maxWaitMs` has passed (undefined if unknown). */
  readonly awaitOutcome: (orderId: string, maxWaitMs: number) => Effect.Effect<Order | undefined, StorageUnavailable>
  /** Expires pending orders past their deadline (a bounded batch): refunds, marks, tells both sides. The count. */
  readonly expireDue: Effect.Effect<number, StorageUnavailable>
  /**
   * Expires the order in its own unit of work if it is still pending past its deadline (refunded or,
   * for a saga's order, recorded and its saga told); whether it did. A saga whose deliver step
   * finds its order overdue asks for this before it looks again: a saga's step never locks its
   * order (the order's lock comes first in every unit of work that takes both).
   */
  readonly expire: (orderId: string) => Effect.Effect<boolean, StorageUnavailable>
  /** Completes when this process next places an order (the push dispatcher's wake-up). */
  readonly placed: Effect.Effect<void>
  /**
   * Tells this process's waiters (order lists, the push dispatcher) that the unit of work that
   * placed `order` has committed: other connections can read it now.
   */
  readonly announce: (order: Pick<Order, "id" | "sellerAgentId">) => Effect.Effect<void>
  /** How long a buy of a push service waits for the seller's answer (ORDER_WAIT_MS). */
  readonly waitMs: number
}

/** Orders expired per sweep, and how often the sweeper looks. */
const EXPIRE_BATCH = 100
const SWEEP_EVERY_MS = 1_000
/**
 * The sweeper's pause, in real time whatever the program's clock: a test clock moved on by days
 * would otherwise run every sweep in between at once; each sweep reads the program's clock for
 * what is due.
 */
const everyRealSecond = Effect.callback<void>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), SWEEP_EVERY_MS)
  return Effect.sync(() => clearTimeout(timer))
})

/**
 * How often the process's one reader asks the store, on behalf of every waiting list and buy, what
 * other processes placed or ended (this process's own placings and endings wake them at once).
 */
const READER_EVERY_MS = 1_000
/** How far back the reader looks for orders placed elsewhere (their commit may lag their time). */
const READER_LOOKBACK_MS = 5_000
/** A key's lists waiting at once in a process; one more is 429 (Retry-After: 1). */
export const LIST_WAITS_PER_KEY = 4
const PAGE = 50

const EXPIRED = "the seller did not answer before the deadline"

/** Something happened to an order in this process: placed (for its seller) or ended. */
interface Signal {
  readonly sellerAgentId: string
  readonly orderId: string
}

/**
 * Waits on a subscription for a signal matching `pick`, or `ms`, whichever is first: true when
 * signalled. The subscription is taken before the waiter's first read of the store and kept for the
 * whole wait, so a signal sent while the waiter reads (an order placed, or announced after its
 * commit, between the read and the next wait) is queued for it, not lost until the reader's pass.
 */
const signalled = (sub: PubSub.Subscription<Signal>, pick: (s: Signal) => boolean, ms: number) => {
  const take: Effect.Effect<boolean> = Effect.flatMap(PubSub.take(sub), (s) => (pick(s) ? Effect.succeed(true) : take))
  return Effect.raceFirst(take, Effect.as(Effect.sleep(Duration.millis(ms)), false))
}

const iso = (ms: number) => new Date(ms).toISOString()
const notFound = (id: string) => new NotFound({ message: `order ${id} not found`, resource: "order", id })

const make = Effect.gen(function* () {
  const store = yield* OrderStore
  const settlement = yield* Settlement
  const negotiated = yield* NegotiatedPrices
  const owners = yield* OrderOwners
  const { atomically } = yield* Transactor
  const config = yield* AppConfig
  const placedHub = yield* PubSub.unbounded<Signal>()
  const endedHub = yield* PubSub.unbounded<Signal>()

  const place = Effect.fnUntraced(function* (x: PlaceOrder) {
    const order = newOrder(x.purchase, x.input, x.mode, x.deadlineMs)
    const { tx, entryId } = yield* settlement.hold({
      order,
      ...(x.lockedBalanceCents !== undefined ? { lockedBalanceCents: x.lockedBalanceCents } : {})
    })
    yield* PubSub.publish(placedHub, { sellerAgentId: order.sellerAgentId, orderId: order.id })
    return { order, tx, entryId }
  })

  /**
   * Ends a pending order, in the caller's unit of work with it opened (locked, its escrow read):
   * delivered (settled 85/15 from its escrow) or failed / expired (the escrow back to the buyer, a
   * redeemed negotiation usable again: nothing was bought with it). A saga's order holds no money:
   * its end is recorded, and its saga told in the same unit of work (it settles or compensates).
   */
  const end = Effect.fnUntraced(function* (opened: { readonly order: Order; readonly escrowCents: number }, to: Order) {
    const own = sagaOf(to) === null
    if (to.status === "delivered" && own) {
      yield* (
        settlement
          .settle({
            purchase: purchaseOfOrder(to),
            delivery: { latencyMs: to.latencyMs ?? 0, output: to.output, deliveredAt: to.answeredAt! },
            from: { _tag: "escrow", holdId: to.id, lockedBalanceCents: opened.escrowCents },
            memo: `${to.serviceId}/${to.tierId}`,
            pending: true,
            closes: to
          })
          // The escrow holds exactly the price from the order's placing: short or unbalanced is a defect.
          .pipe(Effect.catchTags({ InsufficientFunds: Effect.die, InvalidInput: Effect.die }))
      )
    } else if (to.status === "delivered") yield* settlement.close(to)
    else {
      yield* settlement.release({ order: to, escrowCents: opened.escrowCents })
      if (own && to.negotiationId !== null) yield* negotiated.release(to.negotiationId, to.transactionId)
    }
    if (!own) yield* owners.ended(to)
    return to
  })

  /**
   * One answer of the seller, in its own unit of work: `same` is the status this answer leads to
   * (answering it again is the order as it is); a deadline already passed expires the order here,
   * and the answer is refused.
   */
  const answer = Effect.fnUntraced(function* (
    mayAnswer: (order: Order) => boolean,
    orderId: string,
    same: "delivered" | "failed" | "cancelled",
    to: (order: Order, nowMs: number) => Order
  ) {
    const result = yield* atomically(
      Effect.gen(function* () {
        const opened = yield* settlement.openOrder(orderId)
        if (opened === undefined || !mayAnswer(opened.order)) {
          return yield* Effect.fail(notFound(orderId))
        }
        const { order } = opened
        if (order.status === same) return { order, closed: false, changed: false }
        if (order.status !== "pending") return { order, closed: true, changed: false }
        const now = yield* Clock.currentTimeMillis
        if (Date.parse(order.deadlineAt) <= now) {
          const expired = yield* end(opened, ended(order, "expired", now, { output: null, error: EXPIRED }))
          return { order: expired, closed: true, changed: true }
        }
        return { order: yield* end(opened, to(order, now)), closed: false, changed: true }
      })
    )
    if (result.changed) yield* PubSub.publish(endedHub, { sellerAgentId: result.order.sellerAgentId, orderId })
    if (result.closed) {
      return yield* Effect.fail(
        new OrderClosed({
          message: `order ${orderId} is ${result.order.status}; it cannot be ${same} now`,
          orderId,
          status: result.order.status
        })
      )
    }
    return result.order
  })

  const deliver = (sellerAgentId: string, orderId: string, body: DeliverBody) =>
    answer(
      (o) => o.sellerAgentId === sellerAgentId,
      orderId,
      "delivered",
      (order, now) =>
        ended(order, "delivered", now, {
          output: body.output ?? null,
          error: null,
          reportedLatencyMs: body.latencyMs ?? null
        })
    )

  const fail = (sellerAgentId: string, orderId: string, body: FailBody) =>
    answer(
      (o) => o.sellerAgentId === sellerAgentId,
      orderId,
      "failed",
      (order, now) => ended(order, "failed", now, { output: null, error: body.error })
    )

  // Only a buy's own order: a saga's or a paid call's money is not the order's to give back.
  const ownBuy = (buyerAgentId: string) => (o: Order) =>
    o.buyerAgentId === buyerAgentId && (o.origin?.kind ?? "buy") === "buy"
  const cancel = (buyerAgentId: string, orderId: string) =>
    answer(ownBuy(buyerAgentId), orderId, "cancelled", (o, now) =>
      ended(o, "cancelled", now, { output: null, error: ORDER_CANCELLED })
    )

  const get = (agentId: string, orderId: string) =>
    Effect.flatMap(store.get(orderId), (o) =>
      o !== undefined && (o.sellerAgentId === agentId || o.buyerAgentId === agentId)
        ? Effect.succeed(o)
        : Effect.fail(notFound(orderId))
    )

  /** One overdue order expired in its own unit of work; false when it was answered or is not due. */
  const expireOne = Effect.fnUntraced(function* (orderId: string, now: number) {
    const expired = yield* atomically(
      Effect.gen(function* () {
        const opened = yield* settlement.openOrder(orderId)
        // Answered meanwhile (the seller, or another process's sweep), or not due: its outcome stands.
        if (opened === undefined || opened.order.status !== "pending") return undefined
        if (Date.parse(opened.order.deadlineAt) > now) return undefined
        return yield* end(opened, ended(opened.order, "expired", now, { output: null, error: EXPIRED }))
      })
    )
    if (expired === undefined) return false
    yield* PubSub.publish(endedHub, { sellerAgentId: expired.sellerAgentId, orderId })
    return true
  })

  const expireDue = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const due = yield* store.dueExpiries(iso(now), EXPIRE_BATCH)
    let n = 0
    for (const d of due) if (yield* expireOne(d.id, now)) n++
    return n
  })

  const expire = (orderId: string) => Effect.flatMap(Clock.currentTimeMillis, (now) => expireOne(orderId, now))

  /** The pending orders a seller's list shows it for the first time reach it now (their latency runs from here). */
  const offered = Effect.fnUntraced(function* <P extends { readonly orders: ReadonlyArray<Order> }>(page: P) {
    const fresh = page.orders.filter((o) => o.status === "pending" && (o.offeredAt ?? null) === null)
    if (fresh.length === 0) return page
    const at = iso(yield* Clock.currentTimeMillis)
    yield* store.markOffered(
      fresh.map((o) => o.id),
      at
    )
    const ids = new Set(fresh.map((o) => o.id))
    return { ...page, orders: page.orders.map((o) => (ids.has(o.id) ? { ...o, offeredAt: at } : o)) }
  })

  // ---- waiting: one reader per process --------------------------------------------------------
  // A waiting list or buy reads the store once, then only when woken: at once by this process's own
  // placing or ending, and by the reader, which asks the store once a second for every waiter of the
  // process together (orders placed or ended by other processes). A thousand waiters cost the reader's
  // one read a second, not a thousand.
  const watchedSellers = new Map<string, number>()
  const watchedOrders = new Map<string, number>()
  const waitsOf = new Map<string, number>()
  const watch = (map: Map<string, number>, key: string) =>
    Effect.acquireRelease(
      Effect.sync(() => void map.set(key, (map.get(key) ?? 0) + 1)),
      () =>
        Effect.sync(() => {
          const n = (map.get(key) ?? 1) - 1
          if (n <= 0) map.delete(key)
          else map.set(key, n)
        })
    )

  /** The reader's pass: what happened elsewhere to what this process's waiters wait on. */
  const readerPass = Effect.fnUntraced(function* (sinceIso: string) {
    if (watchedSellers.size > 0) {
      for (const seller of yield* store.sellersWithNewOrders([...watchedSellers.keys()], sinceIso)) {
        yield* PubSub.publish(placedHub, { sellerAgentId: seller, orderId: "" })
      }
    }
    if (watchedOrders.size > 0) {
      for (const orderId of yield* store.endedAmong([...watchedOrders.keys()])) {
        yield* PubSub.publish(endedHub, { sellerAgentId: "", orderId })
      }
    }
  })

  /** The reader, in real time whatever the program's clock (as the sweeper): it runs while the layer does. */
  const everyReaderTick = Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), READER_EVERY_MS)
    return Effect.sync(() => clearTimeout(timer))
  })
  yield* Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* readerPass(iso(now - READER_LOOKBACK_MS))
  }).pipe(
    Effect.catchCause((cause) => Effect.logWarning("order waits: the reader's pass failed; retrying", cause)),
    Effect.andThen(everyReaderTick),
    Effect.forever,
    Effect.forkScoped
  )

  const list = Effect.fnUntraced(function* (sellerAgentId: string, options: OrdersQueryOptions) {
    const after = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && after === undefined) {
      return yield* new InvalidInput({ message: "cursor is not one this list gave", field: "cursor" })
    }
    const limit = Math.max(1, Math.min(100, options.limit ?? PAGE))
    const read = Effect.map(
      store.listForSeller(sellerAgentId, { status: options.status, after, limit: limit + 1 }),
      (rows) => ({
        orders: rows.slice(0, limit),
        nextCursor: rows.length > limit ? encodeTimeCursor(rows[limit - 1]!) : null
      })
    )
    const wait = Math.min(ORDER_LIST_MAX_WAIT_MS, Math.max(0, options.waitMs ?? 0))
    const waiter = options.waiter ?? sellerAgentId
    if (wait > 0 && (waitsOf.get(waiter) ?? 0) >= LIST_WAITS_PER_KEY) {
      return yield* new RateLimited({
        message: `at most ${LIST_WAITS_PER_KEY} lists of one key may wait at once; retry when one has answered`,
        retryAfterSeconds: 1,
        limit: LIST_WAITS_PER_KEY,
        window: "concurrent waits"
      })
    }
    if (wait === 0) return yield* offered(yield* read)
    return yield* Effect.scoped(
      Effect.gen(function* () {
        // Subscribed before the first read: an order placed while the store is read still wakes it.
        const placedSignals = yield* PubSub.subscribe(placedHub)
        const first = yield* offered(yield* read)
        if (first.orders.length > 0) return first
        // Nothing yet: wait for this seller's next order, reading the store again only when woken.
        yield* watch(waitsOf, waiter)
        yield* watch(watchedSellers, sellerAgentId)
        const until = (yield* Clock.currentTimeMillis) + wait
        for (;;) {
          const left = until - (yield* Clock.currentTimeMillis)
          if (left <= 0) return first
          const woke = yield* signalled(placedSignals, (s) => s.sellerAgentId === sellerAgentId, left)
          if (!woke) return first
          const page = yield* read
          if (page.orders.length > 0) return yield* offered(page)
        }
      })
    )
  })

  const awaitOutcome = Effect.fnUntraced(function* (orderId: string, maxWaitMs: number) {
    if (maxWaitMs <= 0) return yield* store.get(orderId)
    return yield* Effect.scoped(
      Effect.gen(function* () {
        // Subscribed before the first read: an order ended while the store is read still wakes it.
        const endedSignals = yield* PubSub.subscribe(endedHub)
        const order = yield* store.get(orderId)
        if (order === undefined || order.status !== "pending") return order
        yield* watch(watchedOrders, orderId)
        const until = (yield* Clock.currentTimeMillis) + maxWaitMs
        for (;;) {
          const left = until - (yield* Clock.currentTimeMillis)
          if (left <= 0) return yield* store.get(orderId)
          const woke = yield* signalled(endedSignals, (s) => s.orderId === orderId, left)
          const now = yield* store.get(orderId)
          if (!woke || now === undefined || now.status !== "pending") return now
        }
      })
    )
  })

  if (config.workers) {
    yield* expireDue.pipe(
      Effect.catchCause((cause) => Effect.logWarning("order expiry sweep failed; retrying", cause)),
      Effect.andThen(everyRealSecond),
      Effect.forever,
      Effect.forkScoped
    )
  }

  const placed = Effect.scoped(Effect.flatMap(PubSub.subscribe(placedHub), (sub) => Effect.asVoid(PubSub.take(sub))))
  const announce = (order: Pick<Order, "id" | "sellerAgentId">) =>
    Effect.asVoid(PubSub.publish(placedHub, { sellerAgentId: order.sellerAgentId, orderId: order.id }))

  return Orders.of({
    place,
    deliver,
    fail,
    cancel,
    get,
    list,
    awaitOutcome,
    expireDue,
    expire,
    placed,
    announce,
    waitMs: config.orderWaitMs
  })
})

export class Orders extends Context.Service<Orders, OrdersService>()("agent-commerce/Orders") {
  /** The orders service with its expiry sweeper (when this process runs workers); stores and ports stay open. */
  static readonly layer = Layer.effect(Orders, make).pipe(Layer.provide(Settlement.layer))
}
