// In-memory A2A push notification configurations: the rows by (task, id), and the open ones (not
// done) by key and by agent, so a claim pass and a count look at open configurations only, never at
// the done history.
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
    // key → true while the configuration is not done; agent → its keys not done (countOpen reads one agent's).
    const open = db.table<string, true>("a2a_push_configs_open")
    const openByAgent = db.table<string, Array<string>>("a2a_push_configs_open_by_agent")

    const setOpen = (r: PushConfigRecord, k: string) => {
      const was = open.get(k) !== undefined
      const is = r.doneAt === null
      if (was === is) return Effect.void
      return is
        ? Effect.all([open.set(k, true), openByAgent.append(r.agentId, k)], { discard: true })
        : Effect.all([open.delete(k), openByAgent.removeItem(r.agentId, k)], { discard: true })
    }
    const write = (r: PushConfigRecord) => {
      const k = keyOf(r.taskId, r.id)
      return Effect.all([setOpen(r, k), rows.set(k, r)], { discard: true })
    }

    return PushConfigStore.of({
      // Units of work on the memory store already run one at a time.
      lockAgent: () => Effect.void,
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
          const r = rows.get(k)!
          return Effect.as(
            Effect.all(
              [setOpen({ ...r, doneAt: r.doneAt ?? "deleted" }, k), rows.delete(k), byTask.removeItem(taskId, k)],
              {
                discard: true
              }
            ),
            true
          )
        }),
      countOpen: (agentId) => Effect.sync(() => openByAgent.get(agentId)?.length ?? 0),
      claimDue: (now, leaseUntil, limit) =>
        Effect.suspend(() => {
          const due = [...open.rows.keys()]
            .flatMap((k) => rows.get(k) ?? [])
            .filter((r) => r.nextAttemptAt !== null && r.nextAttemptAt <= now)
            .sort((a, b) => (a.nextAttemptAt! < b.nextAttemptAt! ? -1 : a.nextAttemptAt! > b.nextAttemptAt! ? 1 : 0))
            .slice(0, limit)
          const leased = due.map((r) => ({ ...r, nextAttemptAt: leaseUntil }))
          return Effect.as(Effect.forEach(leased, write, { discard: true }), leased)
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
