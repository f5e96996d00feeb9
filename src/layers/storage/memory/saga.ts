// In-memory stores for purchase sagas (claimed with a lease, like Postgres) and MPP payment challenges.
import { Effect, Layer } from "effect"
import type { ChallengeRecord } from "../../../schema/mpp.js"
import type { SagaRecord } from "../../../schema/saga.js"
import { MppStore } from "../../../services/Mpp.js"
import { SagaStore } from "../../../services/Saga.js"
import { MemoryDb } from "./MemoryDb.js"

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const MemorySagaStore = Layer.effect(
  SagaStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, SagaRecord>("sagas")
    return {
      insert: (r) => rows.set(r.id, r),
      get: (id) => Effect.sync(() => rows.get(id)),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      update: (r) => rows.set(r.id, r),
      claimDue: (now, leaseUntil, limit) =>
        Effect.gen(function* () {
          const at = Date.parse(now)
          const due = [...rows.values()]
            .filter((r) => r.nextRunAt !== null && Date.parse(r.nextRunAt) <= at)
            .sort((a, b) => Date.parse(a.nextRunAt!) - Date.parse(b.nextRunAt!) || cmpStr(a.id, b.id))
            .slice(0, limit)
          for (const r of due) yield* rows.set(r.id, { ...r, nextRunAt: leaseUntil })
          return due.map((r) => r.id)
        })
    }
  })
)

export const MemoryMppStore = Layer.effect(
  MppStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, ChallengeRecord>("mpp_challenges")
    return {
      insert: (r) => rows.set(r.id, r),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      update: (r) => rows.set(r.id, r),
      recentPaid: (limit) =>
        Effect.sync(() =>
          [...rows.values()]
            .filter((r) => r.status === "paid")
            .sort((a, b) => Date.parse(b.paidAt!) - Date.parse(a.paidAt!) || cmpStr(a.id, b.id))
            .slice(0, limit)
        ),
      ping: Effect.void
    }
  })
)
