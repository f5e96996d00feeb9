// In-memory A2A tasks paid with x402: the rows by id, and those never paid in the order they were
// made (a list kept sorted, appended at its end as tasks come), so a purge reads the oldest only.
import { Effect, Layer } from "effect"
import type { X402TaskRecord } from "../../schema/a2a/x402Task.js"
import { X402TaskStore } from "../../services/a2a/X402TaskStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

interface Unpaid {
  readonly createdAt: string
  readonly id: string
}
const olderThan = (a: Unpaid, b: Unpaid) => a.createdAt < b.createdAt

const same = (a: X402TaskRecord, b: X402TaskRecord) => a.state === b.state && a.payer === b.payer && a.nonce === b.nonce

export const MemoryX402TaskStore = Layer.effect(
  X402TaskStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, X402TaskRecord>("a2a_x402_tasks")
    // The tasks never paid (no authorization submitted), oldest first, and each one's entry in that list.
    const unpaid = db.table<"unpaid", Array<Unpaid>>("a2a_x402_tasks_unpaid")
    const entries = db.table<string, Unpaid>("a2a_x402_tasks_unpaid_entries")
    const write = (r: X402TaskRecord) =>
      Effect.suspend(() => {
        const entry = entries.get(r.id)
        const fresh = { createdAt: r.createdAt, id: r.id }
        const index =
          r.payer === null && entry === undefined
            ? Effect.all([entries.set(r.id, fresh), unpaid.insertSorted("unpaid", fresh, olderThan)], { discard: true })
            : r.payer !== null && entry !== undefined
              ? Effect.all([entries.delete(r.id), unpaid.removeItem("unpaid", entry)], { discard: true })
              : Effect.void
        return Effect.andThen(rows.set(r.id, r), index)
      })
    return X402TaskStore.of({
      insert: write,
      get: (id) => Effect.sync(() => rows.get(id)),
      replace: (expected, next) =>
        Effect.suspend(() => {
          const now = rows.get(expected.id)
          return now === undefined || !same(now, expected) ? Effect.succeed(false) : Effect.as(write(next), true)
        }),
      setPayment: (id, paymentId, at) =>
        Effect.suspend(() => {
          const now = rows.get(id)
          return now === undefined ? Effect.void : rows.set(id, { ...now, paymentId, updatedAt: at })
        }),
      purgeUnpaid: (before, limit) =>
        Effect.suspend(() => {
          const old = (unpaid.get("unpaid") ?? []).slice(0, limit).filter((e) => e.createdAt < before)
          return Effect.as(
            Effect.forEach(
              old,
              (e) => Effect.all([rows.delete(e.id), entries.delete(e.id), unpaid.removeItem("unpaid", e)]),
              { discard: true }
            ),
            old.length
          )
        })
    })
  })
)
