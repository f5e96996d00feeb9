// In-memory store for negotiations (the worker's claim is a scan of due rows under the write lock).
import { Effect, Layer } from "effect"
import type { NegotiationRecord } from "../../../schema/negotiation.js"
import { NegotiationStore } from "../../../services/Negotiation.js"
import { MemoryDb } from "./MemoryDb.js"

/** Byte-order string comparison (Postgres compares ids with COLLATE "C"). */
const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** Newest first: created_at DESC, id DESC. */
const newestFirst = (a: NegotiationRecord, b: NegotiationRecord) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || cmpStr(b.id, a.id)

export const MemoryNegotiationStore = Layer.effect(
  NegotiationStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, NegotiationRecord>("negotiations")
    return {
      insert: (r) => rows.set(r.id, r),
      get: (id) => Effect.sync(() => rows.get(id)),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      update: (r) => rows.set(r.id, r),
      listForAgent: (agentId, { limit, before }) =>
        Effect.sync(() =>
          [...rows.values()]
            .filter((r) => r.buyerAgentId === agentId || r.sellerAgentId === agentId)
            .filter((r) => {
              if (before === undefined) return true
              const d = Date.parse(r.createdAt) - Date.parse(before.createdAt)
              return d < 0 || (d === 0 && cmpStr(r.id, before.id) < 0)
            })
            .sort(newestFirst)
            .slice(0, limit)
        ),
      claimDue: (now, limit) =>
        Effect.sync(() => {
          const at = Date.parse(now)
          return [...rows.values()]
            .filter((r) => r.sellerDueAt !== null && Date.parse(r.sellerDueAt) <= at)
            .sort((a, b) => Date.parse(a.sellerDueAt!) - Date.parse(b.sellerDueAt!) || cmpStr(a.id, b.id))
            .slice(0, limit)
        })
    }
  })
)
