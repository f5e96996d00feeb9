// In-memory A2A tasks paid with x402: the rows by id, and the ids of those never paid in the order
// they were made, so a purge walks the oldest unpaid ones only.
import { Effect, Layer } from "effect"
import type { X402TaskRecord } from "../../schema/a2a/x402Task.js"
import { X402TaskStore } from "../../services/a2a/X402TaskStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const same = (a: X402TaskRecord, b: X402TaskRecord) => a.state === b.state && a.payer === b.payer && a.nonce === b.nonce

export const MemoryX402TaskStore = Layer.effect(
  X402TaskStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, X402TaskRecord>("a2a_x402_tasks")
    // id → true while no authorization was submitted (Map order: creation order).
    const unpaid = db.table<string, true>("a2a_x402_tasks_unpaid")
    const write = (r: X402TaskRecord) =>
      Effect.all([rows.set(r.id, r), r.payer === null ? unpaid.set(r.id, true) : unpaid.delete(r.id)], {
        discard: true
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
          const old: Array<string> = []
          for (const id of unpaid.rows.keys()) {
            const r = rows.get(id)
            if (old.length >= limit || (r !== undefined && r.createdAt >= before)) break
            old.push(id)
          }
          return Effect.as(
            Effect.forEach(old, (id) => Effect.all([rows.delete(id), unpaid.delete(id)]), { discard: true }),
            old.length
          )
        })
    })
  })
)
