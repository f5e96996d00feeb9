// In-memory store of orders: rows by id, each seller's orders in (createdAt, id) order, and the
// pending orders by id (what the expiry sweep, the push dispatcher and the buyer's held escrow
// read). The wallet store reads `orders_pending_by_buyer` for the buyer's held money.
import { Effect, Layer } from "effect"
import { type Order, sagaOf } from "../../schema/orders/orders.js"
import { type OrderCursor as OrderKey, OrderStore } from "../../services/purchases/OrderStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const compareKeys = (a: OrderKey, b: OrderKey) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/** The memory tables of orders, shared with the wallet store (held escrow). */
export const orderTables = Effect.map(MemoryDb, (db) => ({
  orders: db.table<string, Order>("orders"),
  bySeller: db.table<string, Array<OrderKey>>("orders_by_seller"),
  byKey: db.table<string, string>("orders_by_key"),
  pending: db.table<string, true>("orders_pending"),
  // buyer → ids of its pending orders holding their own escrow (a buy's; a saga's order holds none).
  pendingByBuyer: db.table<string, Array<string>>("orders_pending_by_buyer"),
  // seller → its pending orders in (createdAt, id) order: its pending list and the owner's page
  // read them without walking its ended ones (Postgres: orders_seller_idx, by status).
  pendingBySeller: db.table<string, Array<OrderKey>>("orders_pending_by_seller")
}))

export const MemoryOrderStore = Layer.effect(
  OrderStore,
  Effect.gen(function* () {
    const t = yield* orderTables
    const pendingOrders = () => {
      const out: Array<Order> = []
      for (const id of t.pending.rows.keys()) {
        const o = t.orders.get(id)
        if (o !== undefined && o.status === "pending") out.push(o)
      }
      return out
    }
    return OrderStore.of({
      insert: Effect.fnUntraced(function* (order: Order) {
        yield* t.orders.set(order.id, order)
        yield* t.bySeller.insertOrdered(order.sellerAgentId, { createdAt: order.createdAt, id: order.id }, compareKeys)
        if (order.idempotencyKey !== null) yield* t.byKey.set(`${order.buyerAgentId}|${order.idempotencyKey}`, order.id)
        if (order.status === "pending") {
          yield* t.pending.set(order.id, true)
          yield* t.pendingBySeller.insertOrdered(
            order.sellerAgentId,
            { createdAt: order.createdAt, id: order.id },
            compareKeys
          )
          // A saga's order holds nothing itself: its money is the saga's escrow, counted through the saga.
          if (sagaOf(order) === null) yield* t.pendingByBuyer.append(order.buyerAgentId, order.id)
        }
      }),
      get: (id) => Effect.sync(() => t.orders.get(id)),
      findByKey: (buyerAgentId, key) =>
        Effect.sync(() => {
          const id = t.byKey.get(`${buyerAgentId}|${key}`)
          return id === undefined ? undefined : t.orders.get(id)
        }),
      // The memory engine's write lock serialises units of work: reading is locking.
      getForUpdate: (id) => Effect.sync(() => t.orders.get(id)),
      listForSeller: (sellerAgentId, { status, after, limit }) =>
        Effect.sync(() => {
          // Pending ones from their own index: the seller's ended orders are not walked.
          const keys = (status === "pending" ? t.pendingBySeller : t.bySeller).get(sellerAgentId) ?? []
          const out: Array<Order> = []
          // After the cursor: the first key greater than it.
          let i = 0
          if (after !== undefined) {
            let lo = 0
            let hi = keys.length
            while (lo < hi) {
              const mid = (lo + hi) >>> 1
              if (compareKeys(keys[mid]!, after) <= 0) lo = mid + 1
              else hi = mid
            }
            i = lo
          }
          for (; i < keys.length && out.length < limit; i++) {
            const o = t.orders.get(keys[i]!.id)
            if (o !== undefined && (status === undefined || o.status === status)) out.push(o)
          }
          return out
        }),
      close: Effect.fnUntraced(function* (order: Order) {
        yield* t.orders.set(order.id, order)
        if (order.status !== "pending" && t.pending.get(order.id) !== undefined) {
          yield* t.pending.delete(order.id)
          const key = (t.pendingBySeller.get(order.sellerAgentId) ?? []).find((k) => k.id === order.id)
          if (key !== undefined) yield* t.pendingBySeller.removeItem(order.sellerAgentId, key)
          if (sagaOf(order) === null) yield* t.pendingByBuyer.removeItem(order.buyerAgentId, order.id)
        }
      }),
      dueExpiries: (now, limit) =>
        Effect.sync(() =>
          pendingOrders()
            .filter((o) => o.deadlineAt <= now)
            .sort((a, b) => (a.deadlineAt < b.deadlineAt ? -1 : a.deadlineAt > b.deadlineAt ? 1 : 0))
            .slice(0, limit)
        ),
      duePushes: (now, perSeller, limit) =>
        Effect.sync(() => {
          const due = pendingOrders()
            .filter(
              (o) =>
                o.push !== null &&
                o.push.acceptedAt === null &&
                o.push.nextAttemptAt !== null &&
                o.push.nextAttemptAt <= now
            )
            .sort((a, b) =>
              compareKeys(
                { createdAt: a.push!.nextAttemptAt!, id: a.id },
                { createdAt: b.push!.nextAttemptAt!, id: b.id }
              )
            )
          const taken = new Map<string, number>()
          const out: Array<Order> = []
          for (const o of due) {
            if (out.length >= limit) break
            const n = taken.get(o.sellerAgentId) ?? 0
            if (n >= perSeller) continue
            taken.set(o.sellerAgentId, n + 1)
            out.push(o)
          }
          return out
        }),
      recordPushAttempt: (id, push, offeredAt) =>
        Effect.suspend(() => {
          const o = t.orders.get(id)
          return o === undefined
            ? Effect.void
            : t.orders.set(id, { ...o, push, ...(offeredAt !== undefined ? { offeredAt } : {}) })
        }),
      sellersWithNewOrders: (sellers, since) =>
        Effect.sync(() =>
          // The seller's pending index, newest last (createdAt, id order): only its tail is read.
          sellers.filter((seller) => {
            const keys = t.pendingBySeller.get(seller) ?? []
            const newest = keys[keys.length - 1]
            return newest !== undefined && newest.createdAt > since
          })
        ),
      endedAmong: (ids) => Effect.sync(() => ids.filter((id) => (t.orders.get(id)?.status ?? "pending") !== "pending")),
      markOffered: (ids, at) =>
        Effect.forEach(
          ids,
          (id) => {
            const o = t.orders.get(id)
            return o === undefined || o.status !== "pending" || (o.offeredAt ?? null) !== null
              ? Effect.void
              : t.orders.set(id, { ...o, offeredAt: at })
          },
          { discard: true }
        )
    })
  })
)
