// In-memory store for purchase sagas (claimed with a lease, like Postgres).
import { Effect, Layer } from "effect"
import type { SagaRecord } from "../../schema/saga/saga.js"
import { SagaStore } from "../../services/saga/SagaStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"
import { newestFirst, olderBy } from "../storage/memory/commerceTables.js"

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const MemorySagaStore = Layer.effect(
  SagaStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, SagaRecord>("sagas")
    // buyer → ids of its running sagas (Postgres: the partial index sagas_running_buyer_idx): the
    // wallet store sums their escrow, so the list must not grow with the buyer's history.
    const runningByBuyer = db.table<string, ReadonlyArray<string>>("sagas_running_by_buyer")
    // buyer → ids of all its sagas, oldest first by (createdAt, id) (Postgres: sagas_buyer_page_idx).
    const byBuyer = db.table<string, Array<string>>("sagas_by_buyer")
    // transaction id → the saga whose purchase it is (Postgres: sagas_transaction_idx).
    const byTransaction = db.table<string, string>("sagas_by_transaction")
    const get = (id: string) => rows.get(id)
    const write = Effect.fnUntraced(function* (r: SagaRecord) {
      const before = rows.get(r.id)
      yield* rows.set(r.id, r)
      if (before === undefined) yield* byBuyer.insertSorted(r.buyerAgentId, r.id, olderBy(r, get))
      if (r.transactionId !== null && before?.transactionId !== r.transactionId)
        yield* byTransaction.set(r.transactionId, r.id)
      const was = before !== undefined && before.status === "running"
      const is = r.status === "running"
      if (was === is) return
      const ids = runningByBuyer.get(r.buyerAgentId) ?? []
      const next = is ? [...ids, r.id] : ids.filter((id) => id !== r.id)
      yield* runningByBuyer.set(r.buyerAgentId, next)
    })
    return {
      insert: write,
      get: (id) => Effect.sync(() => rows.get(id)),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      update: write,
      claimDue: Effect.fnUntraced(function* (now, leaseUntil, limit) {
        const at = Date.parse(now)
        const due = [...rows.values()]
          .filter((r) => r.nextRunAt !== null && Date.parse(r.nextRunAt) <= at)
          .sort((a, b) => Date.parse(a.nextRunAt!) - Date.parse(b.nextRunAt!) || cmpStr(a.id, b.id))
          .slice(0, limit)
        for (const r of due) yield* rows.set(r.id, { ...r, nextRunAt: leaseUntil })
        return due.map((r) => r.id)
      }),
      listForBuyer: (buyerAgentId, limit, before) =>
        Effect.sync(() =>
          newestFirst(
            byBuyer.get(buyerAgentId),
            (id) => rows.get(id)!,
            () => true,
            limit,
            before
          )
        ),
      sagasOfTransactions: (buyerAgentId, transactionIds) =>
        Effect.sync(() =>
          transactionIds.flatMap((transactionId) => {
            const sagaId = byTransaction.get(transactionId)
            return sagaId !== undefined && rows.get(sagaId)?.buyerAgentId === buyerAgentId
              ? [{ sagaId, transactionId }]
              : []
          })
        )
    }
  })
)
