// In-memory write receipts: one row per (scope, key), inside the memory database's units of work
// (a failed write's receipt is undone with it).
import { Effect, Layer } from "effect"
import { type WriteReceipt, WriteReceiptStore } from "../../services/idempotency/WriteReceiptStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryWriteReceiptStore = Layer.effect(
  WriteReceiptStore,
  Effect.map(MemoryDb, (db) => {
    const rows = db.table<string, WriteReceipt>("write_receipts")
    const id = (scope: string, key: string) => `${scope}\u0000${key}`
    return {
      get: (scope, key) => Effect.sync(() => rows.get(id(scope, key))),
      insert: (r) =>
        Effect.suspend(() =>
          rows.get(id(r.scope, r.key)) ? Effect.succeed(false) : Effect.as(rows.set(id(r.scope, r.key), r), true)
        )
    }
  })
)
