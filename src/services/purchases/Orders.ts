// Orders: purchases of pull and push services waiting for their seller. Placing one holds the
// buyer's money in escrow (in the buy's unit of work); the seller's delivery settles it 85/15, its
// failure or the deadline refunds it in full, each exactly once. Sellers read their orders in
// keyset pages, optionally waiting for the next one; a buy of a push service may wait for the
// outcome. A saga's deliver step places orders too (origin saga): the money stays in the saga's
// escrow, the seller's answer is recorded and wakes the saga. docs/fulfilment.md has the protocol.
import { Clock, Context, Effect, Layer, PubSub } from "effect"
import type { TransactionRecord } from "../../schema/commerce/transactions.js"
import { escrowAccount, type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import {
  type DeliverBody,
  type FailBody,
  type Order,
  OrderClosed,
  type OrderMode,
  type OrderOrigin,
  type OrderStatus,
  sagaOf
} from "../../schema/orders/orders.js"
import { InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { NegotiatedPrices } from "./NegotiatedPrices.js"
import { Settlement, type SettlementInput } from "./Settlement.js"
import { PurchaseStore } from "./PurchaseStore.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Transactor } from "../platform/Db.js"
import { makeOutcome } from "./outcome.js"
import { newOrder, pendingTransaction } from "./placing.js"
import { makeWaits, type Signal } from "./waits.js"
import { OrderStore } from "./OrderStore.js"
import { OrderOwners } from "./OrderOwners.js"

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
  /** Default a buy: the order holds the price in its own escrow. A saga's order holds nothing (the saga's escrow does). */
  readonly origin?: OrderOrigin
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

const iso = (ms: number) => new Date(ms).toISOString()
const notFound = (id: string) => new NotFound({ message: `order ${id} not found`, resource: "order", id })

const make = Effect.gen(function* () {
  const store = yield* OrderStore
  const commerce = yield* PurchaseStore
  const settlement = yield* Settlement
  const ledger = yield* Ledger
  const events = yield* Events
  const { atomically } = yield* Transactor
  const config = yield* AppConfig
  const waitMs = config.orderWaitMs
  const negotiated = yield* NegotiatedPrices
  const outcome = makeOutcome({ store, settlement, ledger, events, negotiated, owners: yield* OrderOwners })
  const placedHub = yield* PubSub.unbounded<Signal>()
  const endedHub = yield* PubSub.unbounded<Signal>()

  const place = Effect.fnUntraced(function* (x: PlaceOrder) {
    const order = newOrder(x)
    // The buyer's money moves to the order's own escrow, checked under the wallet lock the buy holds;
    // a saga's order leaves it where the saga's escrow step put it.
    if (order.priceCents > 0 && sagaOf(order) === null) {
      yield* ledger.transfer({
        kind: "escrow_hold",
        reference: order.id,
        memo: `order ${order.id}: escrow`,
        from: walletAccount(order.buyerAgentId),
        to: escrowAccount(order.id),
        amount: order.priceCents
      })
    }
    const tx = pendingTransaction(order)
    yield* commerce.insertPending(tx)
    yield* store.insert(order)
    yield* events.emit(order.sellerAgentId, "order.created", {
      orderId: order.id,
      serviceId: order.serviceId,
      tierId: order.tierId,
      priceCents: order.priceCents,
      input: order.input,
      buyerAgentId: order.buyerAgentId,
      deadlineAt: order.deadlineAt
    })
    yield* PubSub.publish(placedHub, { sellerAgentId: order.sellerAgentId, orderId: order.id })
    return { order, tx }
  })

  /**
   * One answer of the seller, in its own unit of work: `same` is the status this answer leads to
   * (answering it again is the order as it is); a deadline already passed expires the order here,
   * and the answer is refused.
   */
  const answer = Effect.fnUntraced(function* (
    sellerAgentId: string,
    orderId: string,
    same: "delivered" | "failed",
    end: (order: Order, nowMs: number) => Effect.Effect<Order, StorageUnavailable>
  ) {
    const settle = Effect.fnUntraced(function* (order: Order | undefined) {
      if (order === undefined || order.sellerAgentId !== sellerAgentId) return yield* Effect.fail(notFound(orderId))
      if (order.status === same) return { order, closed: false, changed: false }
      if (order.status !== "pending") return { order, closed: true, changed: false }
      const now = yield* Clock.currentTimeMillis
      if (Date.parse(order.deadlineAt) <= now) {
        const expired = yield* outcome.refund(order, "expired", "the seller did not answer before the deadline", now)
        return { order: expired, closed: true, changed: true }
      }
      return { order: yield* end(order, now), closed: false, changed: true }
    })
    const result = yield* atomically(outcome.locked(orderId, settle))
    if (result.changed) yield* PubSub.publish(endedHub, { sellerAgentId, orderId })
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
    answer(sellerAgentId, orderId, "delivered", (order, now) => outcome.deliver(order, body, now))

  const fail = (sellerAgentId: string, orderId: string, body: FailBody) =>
    answer(sellerAgentId, orderId, "failed", (order, now) => outcome.refund(order, "failed", body.error, now))

  const get = (agentId: string, orderId: string) =>
    Effect.flatMap(store.get(orderId), (o) =>
      o !== undefined && (o.sellerAgentId === agentId || o.buyerAgentId === agentId)
        ? Effect.succeed(o)
        : Effect.fail(notFound(orderId))
    )

  const { list, awaitOutcome } = makeWaits({ store, placedHub, endedHub })

  /** One overdue order expired in its own unit of work; false when it was answered or is not due. */
  const expireOne = Effect.fnUntraced(function* (orderId: string, now: number) {
    const { changed, order } = yield* atomically(
      outcome
        .locked(orderId, (order) =>
          // Answered meanwhile (the seller, or another process's sweep), or not due: its outcome stands.
          order === undefined || order.status !== "pending" || Date.parse(order.deadlineAt) > now
            ? Effect.succeed({ order: order!, changed: false, closed: false })
            : Effect.map(
                outcome.refund(order, "expired", "the seller did not answer before the deadline", now),
                (expired) => ({ order: expired, changed: true, closed: false })
              )
        )
        // The sweep's step above never fails NotFound; only the seller's answer does.
        .pipe(Effect.catchTag("NotFound", Effect.die))
    )
    if (changed) yield* PubSub.publish(endedHub, { sellerAgentId: order.sellerAgentId, orderId })
    return changed
  })

  const expireDue = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const due = yield* store.dueExpiries(iso(now), EXPIRE_BATCH)
    let n = 0
    for (const d of due) if (yield* expireOne(d.id, now)) n++
    return n
  })

  const expire = (orderId: string) => Effect.flatMap(Clock.currentTimeMillis, (now) => expireOne(orderId, now))

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
    get,
    list,
    awaitOutcome,
    expireDue,
    expire,
    placed,
    announce,
    waitMs
  })
})

export class Orders extends Context.Service<Orders, OrdersService>()("agent-commerce/Orders") {
  /** The orders service with its expiry sweeper (when this process runs workers); stores stay open. */
  static readonly layer = Layer.effect(Orders, make).pipe(Layer.provide([Settlement.layer, Ledger.layer, Events.layer]))
}
