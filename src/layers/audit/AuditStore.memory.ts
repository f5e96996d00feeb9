// In-memory AuditStore: entries by id and, per agent, their ids in the order written (the undo
// journal takes a rolled-back entry out again, as the transaction does on Postgres).
import { Effect, Layer } from "effect"
import type { AuditRecord } from "../../schema/audit/audit.js"
import { AuditStore } from "../../services/audit/AuditStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryAuditStore = Layer.effect(
  AuditStore,
  Effect.map(MemoryDb, (db) => {
    const entries = db.table<string, AuditRecord>("audit_entries")
    // agent → entry ids, oldest first (append-only).
    const byAgent = db.table<string, Array<string>>("audit_entries_by_agent")
    return {
      insert: (r) => Effect.andThen(entries.set(r.id, r), byAgent.append(r.agentId, r.id)),
      page: (agentId, { before, limit }) =>
        Effect.sync(() => {
          const ids = byAgent.get(agentId) ?? []
          let end = ids.length
          if (before !== undefined) {
            const at = ids.lastIndexOf(before.id)
            end = at < 0 ? 0 : at
          }
          const out: Array<AuditRecord> = []
          for (let i = end - 1; i >= 0 && out.length < limit; i--) out.push(entries.get(ids[i])!)
          return out
        })
    }
  })
)
