// In-memory SellerBoardStore: the seller's pending orders from its pending index, its ended ones
// walking its (createdAt, id) list from the newest, its earnings from its day totals (today's and
// the month's: at most 31 lookups) and the running counters (the tables the order and commerce memory stores write).
import { Effect, Layer } from "effect"
import { splitSettlement } from "../../schema/ledger/ledger.js"
import type { Order } from "../../schema/orders/orders.js"
import { SellerBoardStore } from "../../services/purchases/SellerBoardStore.js"
import { utcDay } from "../../schema/wallet/policy.js"
import { commerceTables, nextDay } from "../storage/memory/commerceTables.js"
import { orderTables } from "./OrderStore.memory.js"

export const MemorySellerBoardStore = Layer.effect(
  SellerBoardStore,
  Effect.map(Effect.all([commerceTables, orderTables]), ([t, o]) =>
    SellerBoardStore.of({
      totals: (sellerAgentId, at) =>
        Effect.sync(() => {
          let pendingCount = 0
          let heldCents = 0
          for (const key of o.pendingBySeller.get(sellerAgentId) ?? []) {
            const order = o.orders.get(key.id)
            if (order === undefined || order.status !== "pending" || order.sellerAgentId !== sellerAgentId) continue
            pendingCount++
            heldCents += splitSettlement(order.priceCents).sellerCents
          }
          let todayCents = 0
          let thisMonthCents = 0
          if (at !== undefined) {
            // The seller's day totals from the month's first day to today: at most 31 lookups.
            const today = utcDay(at.dayStart)
            for (let day = utcDay(at.monthStart); day <= today; day = nextDay(day)) {
              const cents = t.earningDays.get(`${sellerAgentId}|${day}`) ?? 0
              thisMonthCents += cents
              if (day === today) todayCents += cents
            }
          }
          const allTimeCents = t.counters.get(sellerAgentId)?.earnedCents ?? 0
          return { pendingCount, heldCents, todayCents, thisMonthCents, allTimeCents }
        }),
      ended: (sellerAgentId, limit) =>
        Effect.sync(() => {
          const keys = o.bySeller.get(sellerAgentId) ?? []
          const out: Array<Order> = []
          for (let i = keys.length - 1; i >= 0 && out.length < limit; i--) {
            const order = o.orders.get(keys[i]!.id)
            if (order !== undefined && order.status !== "pending") out.push(order)
          }
          return out
        })
    })
  )
)
