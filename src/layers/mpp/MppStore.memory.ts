// In-memory store for MPP payment challenges.
import { Effect, Layer } from "effect"
import type { ChallengeRecord } from "../../schema/mpp/challenge.js"
import { MppStore } from "../../services/mpp/MppStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const MemoryMppStore = Layer.effect(
  MppStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, ChallengeRecord>("mpp_challenges")
    /** Open challenge ids per agent, oldest first (the Postgres partial index's counterpart). */
    const openByAgent = db.table<string, ReadonlyArray<string>>("mpp_open_by_agent")
    /**
     * Paid challenges, newest payment first, then by id (Postgres: mpp_challenges_paid_idx):
     * GET /mpp/health reads the first 20.
     */
    const paid = db.table<string, Array<ChallengeRecord>>("mpp_paid")
    const byPaid = (a: ChallengeRecord, b: ChallengeRecord) =>
      Date.parse(b.paidAt!) - Date.parse(a.paidAt!) || cmpStr(a.id, b.id)
    /** Keeps the paid list in step with a challenge's write. */
    const indexPaid = Effect.fnUntraced(function* (before: ChallengeRecord | undefined, after: ChallengeRecord) {
      if (before !== undefined && before.status === "paid") yield* paid.removeOrdered("all", before, byPaid)
      if (after.status === "paid" && after.paidAt !== null) yield* paid.insertOrdered("all", after, byPaid)
    })
    return {
      insert: (r) =>
        Effect.all(
          [
            rows.set(r.id, r),
            r.status === "open"
              ? openByAgent.set(r.agentId, [...(openByAgent.get(r.agentId) ?? []), r.id])
              : Effect.void,
            indexPaid(undefined, r)
          ],
          { discard: true }
        ),
      pruneOpen: Effect.fnUntraced(function* (agentId, nowIso, keep) {
        const ids = openByAgent.get(agentId) ?? []
        const open = ids
          .map((id) => rows.get(id))
          .filter((r): r is ChallengeRecord => r !== undefined && r.status === "open")
        const live = open.filter((r) => r.expiresAt > nowIso)
        const kept = live.slice(Math.max(0, live.length - keep))
        const keptIds = new Set(kept.map((r) => r.id))
        for (const r of open) if (!keptIds.has(r.id)) yield* rows.delete(r.id)
        yield* openByAgent.set(
          agentId,
          kept.map((r) => r.id)
        )
      }),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      update: (r) => Effect.suspend(() => Effect.andThen(indexPaid(rows.get(r.id), r), rows.set(r.id, r))),
      recentPaid: (limit) => Effect.sync(() => (paid.get("all") ?? []).slice(0, limit)),
      ping: Effect.void
    }
  })
)
