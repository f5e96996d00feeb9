// In-memory WalletStore: wallets (policies), recharge requests, the escrow a buyer's running sagas
// and pending orders hold, and the running spend totals the policies are checked against (with their drift check).
// Reads the commerce tables it shares with the other memory adapters (src/layers/storage/memory/commerceTables.ts), as the
// Postgres adapter reads the same tables.
import { Clock, Effect, Layer } from "effect"
import type { SagaRecord } from "../../schema/saga/saga.js"
import { sagaHolds } from "../../schema/saga/saga.js"
import { dayBoundary, utcDay } from "../../schema/wallet/policy.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { WalletStore } from "../../services/wallet/WalletStore.js"
import { orderTables } from "../purchases/OrderStore.memory.js"
import { addSpend, commerceTables, nextDay, type Tables, type UsageCell } from "../storage/memory/commerceTables.js"

/** The escrow held by these running sagas: escrow step succeeded, settle not yet. */
const heldBy = (sagas: { get(id: string): SagaRecord | undefined }, ids: ReadonlyArray<string>) => {
  let sum = 0
  for (const id of ids) {
    const r = sagas.get(id)
    if (r !== undefined && r.status === "running" && r.priceCents !== null && sagaHolds(r)) sum += r.priceCents
  }
  return sum
}

/** The escrow held by the buyer's pending orders. */
const heldByOrders = (o: Effect.Success<typeof orderTables>, agentId: string) => {
  let sum = 0
  for (const id of o.pendingByBuyer.get(agentId) ?? []) {
    const order = o.orders.get(id)
    if (order !== undefined && order.status === "pending") sum += order.priceCents
  }
  return sum
}

/**
 * Wallet debits that are not purchases and count as spend: investments, and project charges of
 * builds that did not fail.
 */
const otherSpend = (t: Tables) => [
  ...[...t.investments.values()].map((i) => ({ agentId: i.agentId, at: i.createdAt, cents: i.amountCents })),
  ...[...t.projects.values()]
    .filter((p) => p.status !== "failed" && p.costCents > 0)
    .map((p) => ({ agentId: p.agentId, at: p.createdAt, cents: p.costCents }))
]

export const MemoryWalletStore = Layer.effect(
  WalletStore,
  Effect.map(Effect.all([commerceTables, orderTables]), ([t, o]) => ({
    // The memory engine's write lock serialises units of work: reading is locking.
    lock: (initial) =>
      Effect.suspend(() => {
        const w = t.wallets.get(initial.agentId)
        return w ? Effect.succeed(w) : Effect.as(t.wallets.set(initial.agentId, initial), initial)
      }),
    lockForPurchase: (initial) =>
      Effect.suspend(() => {
        const w = t.wallets.get(initial.agentId)
        const balanceCents = t.ledgerBalances.get(walletAccount(initial.agentId)) ?? 0
        return w
          ? Effect.succeed({ wallet: w, balanceCents })
          : Effect.as(t.wallets.set(initial.agentId, initial), { wallet: initial, balanceCents })
      }),
    get: (agentId) => Effect.sync(() => t.wallets.get(agentId)),
    put: (w) => t.wallets.set(w.agentId, w),
    heldCents: (agentId) =>
      Effect.sync(() => heldBy(t.sagas, t.sagasRunningByBuyer.get(agentId) ?? []) + heldByOrders(o, agentId)),
    addSpend: (agentId, at, cents) => addSpend(t, agentId, at, cents),
    // From the running totals: one lookup per day since `since` (a day or a month).
    spentSince: (agentId, since) =>
      Effect.flatMap(Effect.all([dayBoundary(since), Clock.currentTimeMillis]), ([first, now]) =>
        Effect.sync(() => {
          // Up to today by the program's clock (purchases are dated by it too).
          const today = utcDay(new Date(now).toISOString())
          let sum = 0
          for (let day = first, n = 0; day <= today && n < 400; day = nextDay(day), n++)
            sum += t.spendDays.get(`${agentId}|${day}`) ?? 0
          return sum
        })
      ),
    spendDrift: Effect.sync(() => {
      const recomputed = new Map<string, number>()
      for (const id of t.txOrder.get("all") ?? []) {
        const tx = t.txs.get(id)!
        if (tx.status !== "completed") continue
        const k = `${tx.buyerAgentId}|${utcDay(tx.createdAt)}`
        recomputed.set(k, (recomputed.get(k) ?? 0) + tx.priceCents)
      }
      for (const debit of otherSpend(t)) {
        const k = `${debit.agentId}|${utcDay(debit.at)}`
        recomputed.set(k, (recomputed.get(k) ?? 0) + debit.cents)
      }
      const keys = new Set([...recomputed.keys(), ...t.spendDays.rows.keys()])
      const spend = [...keys]
        .filter((k) => (t.spendDays.get(k) ?? 0) !== (recomputed.get(k) ?? 0))
        .sort()
        .map((k) => {
          const [agentId, day] = k.split("|")
          return {
            agentId,
            day,
            serviceId: null,
            kept: t.spendDays.get(k) ?? 0,
            recomputed: recomputed.get(k) ?? 0,
            keptCalls: null,
            recomputedCalls: null
          }
        })
      // Usage per agent, day and service, the same way.
      const usage = new Map<string, { calls: number; cents: number }>()
      for (const id of t.txOrder.get("all") ?? []) {
        const tx = t.txs.get(id)!
        if (tx.status !== "completed") continue
        const k = `${tx.buyerAgentId}|${utcDay(tx.createdAt)}|${tx.serviceId}`
        const u = usage.get(k) ?? { calls: 0, cents: 0 }
        usage.set(k, { calls: u.calls + 1, cents: u.cents + tx.priceCents })
      }
      const kept = new Map<string, UsageCell>()
      for (const [dayKey, cells] of t.usageDays.rows)
        for (const [serviceId, cell] of Object.entries(cells)) kept.set(`${dayKey}|${serviceId}`, cell)
      const usageDrift = [...new Set([...usage.keys(), ...kept.keys()])]
        .filter(
          (k) =>
            (kept.get(k)?.calls ?? 0) !== (usage.get(k)?.calls ?? 0) ||
            (kept.get(k)?.spentCents ?? 0) !== (usage.get(k)?.cents ?? 0)
        )
        .sort()
        .map((k) => {
          const [agentId, day, serviceId] = k.split("|")
          return {
            agentId,
            day,
            serviceId,
            kept: kept.get(k)?.spentCents ?? 0,
            recomputed: usage.get(k)?.cents ?? 0,
            keptCalls: kept.get(k)?.calls ?? 0,
            recomputedCalls: usage.get(k)?.calls ?? 0
          }
        })
      return [...spend, ...usageDrift]
    }),
    countPendingApprovals: (agentId, nowIso) =>
      Effect.sync(
        () => (t.pendingApprovals.get(agentId) ?? []).filter((id) => t.approvals.get(id)!.expiresAt > nowIso).length
      ),
    insertRecharge: (r) => t.recharges.set(r.id, r),
    listRequestedRecharges: (limit) =>
      Effect.sync(() =>
        [...t.recharges.values()]
          .filter((r) => r.status === "requested")
          .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))
          .slice(0, limit)
      )
  }))
)
