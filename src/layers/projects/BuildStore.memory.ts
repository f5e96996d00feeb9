// In-memory store for builder projects, their build state included.
import { Effect, Layer } from "effect"
import type { ProjectRecord } from "../../schema/projects/builder.js"
import { BuildStore } from "../../services/projects/BuildStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

/** Byte-order string comparison (Postgres compares ids with COLLATE "C"). */
const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const MemoryBuildStore = Layer.effect(
  BuildStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const projects = db.table<string, ProjectRecord>("projects")
    /** Account → its project ids (Postgres: projects_account_idx). */
    const byAccount = db.table<string, Array<string>>("projects_by_account")
    return {
      // The memory engine's write lock already serialises units of work.
      lockAccount: () => Effect.void,
      countActive: (accountId) =>
        Effect.sync(
          () => (byAccount.get(accountId) ?? []).filter((id) => projects.get(id)!.status !== "failed").length
        ),
      insert: (r) => Effect.andThen(projects.set(r.id, r), byAccount.append(r.accountId, r.id)),
      get: (id) => Effect.sync(() => projects.get(id)),
      getForUpdate: (id) => Effect.sync(() => projects.get(id)),
      update: (r) => projects.set(r.id, r),
      claimDue: (now, limit) =>
        Effect.sync(() => {
          const at = Date.parse(now)
          return [...projects.values()]
            .filter((p) => p.nextRunAt !== null && Date.parse(p.nextRunAt) <= at)
            .sort((a, b) => Date.parse(a.nextRunAt!) - Date.parse(b.nextRunAt!) || cmpStr(a.id, b.id))
            .slice(0, limit)
        })
    }
  })
)
