// In-memory A2A push notification configurations: the rows by (task, id), and the open ones (not
// done) by key, so a claim pass looks at open configurations only, never at the done history.
import { Effect, Layer } from "effect"
import type { PushConfigRecord } from "../../schema/a2a/push.js"
import { PushConfigStore } from "../../services/a2a/PushConfigStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const keyOf = (taskId: string, id: string) => `${taskId}\u0000${id}`

export const MemoryPushConfigStore = Layer.effect(
  PushConfigStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, PushConfigRecord>("a2a_push_configs")
    // task → its configuration keys, oldest first.
    const byTask = db.table<string, Array<string>>("a2a_push_configs_by_task")
    // key → true while the configuration is not done.
    const open = db.table<string, true>("a2a_push_configs_open")

    const write = (r: PushConfigRecord) => {
      const k = keyOf(r.taskId, r.id)
      return Effect.all([rows.set(k, r), r.doneAt === null ? open.set(k, true) : open.delete(k)], { discard: true })
    }

    return PushConfigStore.of({
      put: (r) =>
        Effect.suspend(() => {
          const k = keyOf(r.taskId, r.id)
          const listed = rows.get(k) !== undefined ? Effect.void : byTask.append(r.taskId, k)
          return Effect.andThen(listed, write(r))
        }),
      get: (taskId, id) => Effect.sync(() => rows.get(keyOf(taskId, id))),
      listForTask: (taskId) => Effect.sync(() => (byTask.get(taskId) ?? []).flatMap((k) => rows.get(k) ?? [])),
      delete: (taskId, id) =>
        Effect.suspend(() => {
          const k = keyOf(taskId, id)
          if (rows.get(k) === undefined) return Effect.succeed(false)
          return Effect.as(
            Effect.all([rows.delete(k), open.delete(k), byTask.removeItem(taskId, k)], { discard: true }),
            true
          )
        }),
      countOpen: (agentId) =>
        Effect.sync(() => {
          let n = 0
          for (const k of open.rows.keys()) if (rows.get(k)?.agentId === agentId) n++
          return n
        }),
      claimDue: (now, leaseUntil, limit) =>
        Effect.suspend(() => {
          const due = [...open.rows.keys()]
            .flatMap((k) => rows.get(k) ?? [])
            .filter((r) => r.nextAttemptAt !== null && r.nextAttemptAt <= now)
            .sort((a, b) => (a.nextAttemptAt! < b.nextAttemptAt! ? -1 : a.nextAttemptAt! > b.nextAttemptAt! ? 1 : 0))
            .slice(0, limit)
          return Effect.as(
            Effect.forEach(due, (r) => write({ ...r, nextAttemptAt: leaseUntil }), { discard: true }),
            due
          )
        }),
      update: (r) =>
        Effect.suspend(() => {
          const current = rows.get(keyOf(r.taskId, r.id))
          if (current === undefined || current.createdAt !== r.createdAt) return Effect.succeed(false)
          return Effect.as(write(r), true)
        })
    })
  })
)
