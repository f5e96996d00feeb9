// In-memory OverviewStore: each agent's wallet figures read from the commerce tables the wallet and
// ledger memory adapters write (src/layers/storage/memory/commerceTables.ts), as the Postgres twin
// queries the same tables.
import { Effect, Layer } from "effect"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { sagaHolds } from "../../schema/saga/saga.js"
import { OverviewStore, type AgentFigures } from "../../services/audit/OverviewStore.js"
import { commerceTables, nextDay } from "../storage/memory/commerceTables.js"
import { orderTables } from "../purchases/OrderStore.memory.js"

export const MemoryOverviewStore = Layer.effect(
  OverviewStore,
  Effect.map(Effect.all([commerceTables, orderTables]), ([t, o]) => {
    /** Spend of the days from `first` to `today`, both included. */
    const spent = (agentId: string, first: string, today: string) => {
      let sum = 0
      for (let day = first, n = 0; day <= today && n < 400; day = nextDay(day), n++)
        sum += t.spendDays.get(`${agentId}|${day}`) ?? 0
      return sum
    }
    return {
      figures: (agentIds, at) =>
        Effect.sync(() => {
          const out = new Map<string, AgentFigures>()
          for (const agentId of agentIds) {
            let held = 0
            for (const id of t.sagasRunningByBuyer.get(agentId) ?? []) {
              const s = t.sagas.get(id)
              if (s !== undefined && s.priceCents !== null && sagaHolds(s)) held += s.priceCents
            }
            // And the escrow of its pending orders, as the wallet's held figure counts it.
            for (const id of o.pendingByBuyer.get(agentId) ?? []) {
              const order = o.orders.get(id)
              if (order !== undefined && order.status === "pending") held += order.priceCents
            }
            const pending = (t.pendingApprovals.get(agentId) ?? []).filter(
              (id) => t.approvals.get(id)!.expiresAt > at.nowIso
            ).length
            out.set(agentId, {
              policy: t.wallets.get(agentId)?.policy ?? null,
              balanceCents: t.ledgerBalances.get(walletAccount(agentId)) ?? 0,
              spentTodayCents: spent(agentId, at.dayStart, at.today),
              spentThisMonthCents: spent(agentId, at.monthStart, at.today),
              heldCents: held,
              pendingApprovals: pending
            })
          }
          return out
        })
    }
  })
)
