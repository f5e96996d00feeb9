// In-memory store for negotiations: a per-agent list ordered by (createdAt, id) that the page walks
// from its cursor (Postgres: the buyer and seller indexes); the worker's claim is a scan of due rows
// under the write lock.
import { Effect, Layer } from "effect"
import type { NegotiationRecord } from "../../schema/negotiation/negotiation.js"
import type { NegotiationFilter } from "../../schema/negotiation/query.js"
import { NegotiationStore } from "../../services/negotiation/NegotiationStore.js"
import { effectiveStatus } from "../../services/negotiation/policy.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

/** Byte-order string comparison (Postgres compares ids with COLLATE "C"). */
const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** (createdAt, id) order: negative when `a` sorts before `b`. */
const byCreated = (
  a: { readonly createdAt: string; readonly id: string },
  b: { readonly createdAt: string; readonly id: string }
) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || cmpStr(a.id, b.id)

/** Whether the row is on the page's side and in its state (as of the filter's now). */
const matches = (r: NegotiationRecord, agentId: string, f: NegotiationFilter | undefined) =>
  f === undefined ||
  ((f.role === undefined || (f.role === "buyer" ? r.buyerAgentId : r.sellerAgentId) === agentId) &&
    (f.status === undefined || effectiveStatus(r, Date.parse(f.now)) === f.status))

export const MemoryNegotiationStore = Layer.effect(
  NegotiationStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, NegotiationRecord>("negotiations")
    /** Agent (buyer or seller) → negotiation ids oldest first by (createdAt, id). */
    const byAgent = db.table<string, Array<string>>("negotiations_by_agent")
    return {
      insert: Effect.fnUntraced(function* (r) {
        yield* rows.set(r.id, r)
        const before = (a: string, b: string) =>
          byCreated(a === r.id ? r : rows.get(a)!, b === r.id ? r : rows.get(b)!) < 0
        yield* byAgent.insertSorted(r.buyerAgentId, r.id, before)
        if (r.sellerAgentId !== r.buyerAgentId) yield* byAgent.insertSorted(r.sellerAgentId, r.id, before)
      }),
      get: (id) => Effect.sync(() => rows.get(id)),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      // createdAt and the parties never change after the insert, so the ordered lists stay true.
      update: (r) => rows.set(r.id, r),
      listForAgent: (agentId, { limit, before, filter }) =>
        Effect.sync(() => {
          const ids = byAgent.get(agentId) ?? []
          // The first position at or after the cursor (binary search), then newest first from just before it.
          let lo = 0
          let hi = ids.length
          if (before === undefined) lo = ids.length
          else
            while (lo < hi) {
              const mid = (lo + hi) >>> 1
              if (byCreated(rows.get(ids[mid])!, before) < 0) lo = mid + 1
              else hi = mid
            }
          const out: Array<NegotiationRecord> = []
          for (let i = lo - 1; i >= 0 && out.length < limit; i--) {
            const r = rows.get(ids[i])!
            if (matches(r, agentId, filter)) out.push(r)
          }
          return out
        }),
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
