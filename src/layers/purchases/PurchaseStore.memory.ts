// In-memory PurchaseStore: transactions with their deliveries and reviews, and approvals, each
// with the ordered indexes its pages walk; a transaction's write moves the buyer's running totals
// and its agents' counters in the same unit of work, as the SQL store's one statement does.
import { Effect, Layer } from "effect"
import type { ApprovalRecord } from "../../schema/commerce/approvals.js"
import type { DeliveryRecord, TransactionRecord, TransactionRow } from "../../schema/commerce/transactions.js"
import { Conflict } from "../../schema/platform/errors.js"
import { utcDay } from "../../schema/wallet/policy.js"
import { PurchaseStore } from "../../services/purchases/PurchaseStore.js"
import { zeroCounters } from "../../schema/reputation/counters.js"
import { addCounterDeltas, moveCounters } from "../storage/memory/counters.js"
import {
  addSpend,
  commerceTables,
  countBefore,
  newestFirst,
  olderBy,
  type Tables
} from "../storage/memory/commerceTables.js"

const completedCents = (tx: TransactionRecord | undefined) =>
  tx !== undefined && tx.status === "completed" ? tx.priceCents : 0

/** Adds `sign` calls (and sign × price) to the buyer's usage of the service on the purchase's day. */
const addUsage = (t: Tables, tx: TransactionRecord, sign: number) => {
  if (sign === 0) return Effect.void
  const k = `${tx.buyerAgentId}|${utcDay(tx.createdAt)}`
  const day = t.usageDays.get(k) ?? {}
  const cell = day[tx.serviceId] ?? { calls: 0, spentCents: 0, label: tx.serviceName }
  const label = cell.label > tx.serviceName ? cell.label : tx.serviceName
  return t.usageDays.set(k, {
    ...day,
    [tx.serviceId]: { calls: cell.calls + sign, spentCents: cell.spentCents + sign * tx.priceCents, label }
  })
}
const completedSign = (tx: TransactionRecord | undefined) => (tx !== undefined && tx.status === "completed" ? 1 : 0)

const row = (t: Tables, tx: TransactionRecord): TransactionRow => ({
  tx,
  delivery: t.deliveries.get(tx.id),
  review: t.reviews.get(tx.id),
  disputeId: t.disputeByTx.get(tx.id) ?? null
})

/** Keeps the agent's pending set in step with an approval's status. */
const setPending = (t: Tables, a: ApprovalRecord) => {
  const ids = t.pendingApprovals.get(a.agentId) ?? []
  const has = ids.includes(a.id)
  if (a.status === "pending" && !has) return t.pendingApprovals.set(a.agentId, [...ids, a.id])
  if (a.status !== "pending" && has)
    return t.pendingApprovals.set(
      a.agentId,
      ids.filter((id) => id !== a.id)
    )
  return Effect.void
}

/** A transaction's per-side lists: its buyer's and seller's, and their status lists for a rare status. */
const sideKeys = (tx: TransactionRecord): Array<string> => {
  const keys = [`buyer|${tx.buyerAgentId}`, `seller|${tx.sellerAgentId}`]
  return tx.status === "completed" ? keys : [...keys, ...keys.map((k) => `${k}|${tx.status}`)]
}
/** (createdAt, id) order: true when `a` sorts before `b`. */
const olderThan = (
  a: { readonly createdAt: string; readonly id: string },
  b: { readonly createdAt: string; readonly id: string }
) => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)
/** insertSorted's order for `tx` (not stored yet, or being moved) among stored transactions. */
const olderTx = (t: Tables, tx: TransactionRecord) => (a: string, b: string) =>
  olderThan(a === tx.id ? tx : t.txs.get(a)!, b === tx.id ? tx : t.txs.get(b)!)

export const MemoryPurchaseStore = Layer.effect(
  PurchaseStore,
  Effect.map(commerceTables, (t) => ({
    insertTransaction: Effect.fnUntraced(function* (tx: TransactionRecord, delivery: DeliveryRecord) {
      yield* t.txs.set(tx.id, tx)
      yield* t.txOrder.append("all", tx.id)
      // Per side (and rare status), oldest first by (createdAt, id): the order every page walks (from the end).
      for (const key of sideKeys(tx)) yield* t.txBySide.insertSorted(key, tx.id, olderTx(t, tx))
      if (tx.idempotencyKey !== null) yield* t.txByKey.set(`${tx.buyerAgentId}|${tx.idempotencyKey}`, tx.id)
      yield* t.deliveries.set(tx.id, delivery)
      yield* t.deliveriesByService.append(delivery.serviceId, tx.id)
      yield* addSpend(t, tx.buyerAgentId, tx.createdAt, completedCents(tx))
      yield* addUsage(t, tx, completedSign(tx))
      yield* moveCounters(t, tx, undefined)
    }),
    insertPending: Effect.fnUntraced(function* (tx: TransactionRecord) {
      yield* t.txs.set(tx.id, tx)
      yield* t.txOrder.append("all", tx.id)
      for (const key of sideKeys(tx)) yield* t.txBySide.insertSorted(key, tx.id, olderTx(t, tx))
      if (tx.idempotencyKey !== null) yield* t.txByKey.set(`${tx.buyerAgentId}|${tx.idempotencyKey}`, tx.id)
    }),
    // The pending row counted nothing: the ended one counts as a new transaction does.
    finishPending: Effect.fnUntraced(function* (tx: TransactionRecord, delivery: DeliveryRecord) {
      const before = t.txs.get(tx.id)
      yield* t.txs.set(tx.id, tx)
      const now = new Set(sideKeys(tx))
      const was = before === undefined ? [] : sideKeys(before)
      for (const key of was) if (!now.has(key)) yield* t.txBySide.removeItem(key, tx.id)
      for (const key of now) if (!was.includes(key)) yield* t.txBySide.insertSorted(key, tx.id, olderTx(t, tx))
      yield* t.deliveries.set(tx.id, delivery)
      yield* t.deliveriesByService.append(delivery.serviceId, tx.id)
      yield* addSpend(t, tx.buyerAgentId, tx.createdAt, completedCents(tx))
      yield* addUsage(t, tx, completedSign(tx))
      yield* moveCounters(t, tx, undefined)
    }),
    getTransaction: (id) => Effect.sync(() => (t.txs.get(id) ? row(t, t.txs.get(id)!) : undefined)),
    lockTransaction: (id) => Effect.sync(() => t.txs.get(id)),
    updateTransaction: Effect.fnUntraced(function* (tx: TransactionRecord) {
      const before = t.txs.get(tx.id)
      yield* t.txs.set(tx.id, tx)
      if (before !== undefined && before.status !== tx.status) {
        // A refund moves the row between the status lists (the SQL partial indexes follow the same update).
        const now = new Set(sideKeys(tx))
        const was = sideKeys(before)
        for (const key of was) if (!now.has(key)) yield* t.txBySide.removeItem(key, tx.id)
        for (const key of now) if (!was.includes(key)) yield* t.txBySide.insertSorted(key, tx.id, olderTx(t, tx))
      }
      yield* addSpend(t, tx.buyerAgentId, tx.createdAt, completedCents(tx) - completedCents(before))
      yield* addUsage(t, tx, completedSign(tx) - completedSign(before))
      if (before !== undefined) yield* moveCounters(t, tx, before)
    }),
    findByIdempotencyKey: (buyer, key) =>
      Effect.sync(() => {
        const id = t.txByKey.get(`${buyer}|${key}`)
        return id ? row(t, t.txs.get(id)!) : undefined
      }),
    // Newest first: walks the agent's ordered index back from the cursor (binary search) and stops
    // after `limit` matches, as the Postgres page walks its (agent, created_at, id) index.
    listTransactions: (f) =>
      Effect.sync(() => {
        // One list per side asked for: the side's own, or its status list for a rare status.
        const rare = f.status !== undefined && f.status !== "completed" ? `|${f.status}` : ""
        const sides = f.role === undefined ? (["buyer", "seller"] as const) : [f.role]
        const lists = sides.map((side) => t.txBySide.get(`${side}|${f.agentId}${rare}`) ?? [])
        const get = (id: string) => t.txs.get(id)!
        // Each list's end: before the cursor and before `to` (binary searches), so nothing newer is walked.
        const ends = lists.map((ids) => {
          let end = f.before === undefined ? ids.length : countBefore(ids, get, f.before)
          if (f.to !== undefined) end = Math.min(end, countBefore(ids, get, { createdAt: f.to, id: "" }))
          return end
        })
        const out: Array<TransactionRow> = []
        let last: string | undefined
        // Newest first across the sides (a merge from the ends), a purchase from oneself once.
        while (out.length < f.limit) {
          let pick = -1
          for (let k = 0; k < lists.length; k++) {
            if (ends[k] === 0) continue
            if (pick < 0 || olderThan(get(lists[pick][ends[pick] - 1]), get(lists[k][ends[k] - 1]))) pick = k
          }
          if (pick < 0) break
          const tx = get(lists[pick][--ends[pick]])
          if (f.from !== undefined && tx.createdAt < f.from) break
          if (tx.id === last) continue
          last = tx.id
          if (f.serviceId !== undefined && tx.serviceId !== f.serviceId) continue
          if (f.status !== undefined && tx.status !== f.status) continue
          out.push(row(t, tx))
        }
        return out
      }),
    insertReview: (r) =>
      Effect.suspend(() => {
        if (t.reviews.get(r.transactionId))
          return Effect.fail(
            new Conflict({ message: `transaction ${r.transactionId} was already reviewed`, state: "reviewed" })
          )
        const tx = t.txs.get(r.transactionId)
        const counted = tx !== undefined && tx.status === "completed"
        return Effect.andThen(
          t.reviews.set(r.transactionId, r),
          counted
            ? addCounterDeltas(t, [
                { agentId: tx.sellerAgentId, delta: { ...zeroCounters, reviewsReceived: 1, ratingSum: r.rating } }
              ])
            : Effect.void
        )
      }),
    insertApproval: (a) =>
      Effect.all(
        [
          t.approvals.set(a.id, a),
          a.idempotencyKey !== null ? t.approvalsByKey.set(`${a.agentId}|${a.idempotencyKey}`, a.id) : Effect.void,
          t.approvalsByAccount.insertSorted(
            a.accountId,
            a.id,
            olderBy(a, (id) => t.approvals.get(id))
          ),
          t.approvalsByAccountStatus.insertSorted(
            `${a.accountId}|${a.status}`,
            a.id,
            olderBy(a, (id) => t.approvals.get(id))
          ),
          t.approvalsByAgent.insertSorted(
            a.agentId,
            a.id,
            olderBy(a, (id) => t.approvals.get(id))
          ),
          setPending(t, a)
        ],
        { discard: true }
      ),
    lockApproval: (id) => Effect.sync(() => t.approvals.get(id)),
    updateApproval: (a) =>
      Effect.suspend(() => {
        const previous = t.approvals.get(a.id)
        const moved =
          previous === undefined || previous.status === a.status
            ? Effect.void
            : Effect.andThen(
                t.approvalsByAccountStatus.removeItem(`${previous.accountId}|${previous.status}`, a.id),
                t.approvalsByAccountStatus.insertSorted(
                  `${a.accountId}|${a.status}`,
                  a.id,
                  olderBy(a, (id) => t.approvals.get(id))
                )
              )
        return Effect.all([t.approvals.set(a.id, a), moved, setPending(t, a)], { discard: true })
      }),
    findApprovalByKey: (agentId, key) =>
      Effect.sync(() => {
        const id = t.approvalsByKey.get(`${agentId}|${key}`)
        return id ? t.approvals.get(id) : undefined
      }),
    // Newest first: walks the account's (or the account's one status's) ordered index from the
    // cursor, stopping at the page.
    listApprovals: (accountId, status, limit, before) =>
      Effect.sync(() =>
        newestFirst(
          status === undefined
            ? t.approvalsByAccount.get(accountId)
            : t.approvalsByAccountStatus.get(`${accountId}|${status}`),
          (id) => t.approvals.get(id)!,
          () => true,
          limit,
          before
        )
      ),
    listAgentApprovals: (agentId, limit, before) =>
      Effect.sync(() =>
        newestFirst(
          t.approvalsByAgent.get(agentId),
          (id) => t.approvals.get(id)!,
          () => true,
          limit,
          before
        )
      )
  }))
)
