// In-memory store for agent sessions.
import { Effect, Layer } from "effect"
import type { SessionRecord } from "../../schema/sessions/sessions.js"
import { SessionStore } from "../../services/sessions/SessionStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemorySessionStore = Layer.effect(
  SessionStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const sessions = db.table<string, SessionRecord>("agent_sessions")
    return {
      insert: (r) => sessions.set(r.id, r),
      get: (id) => Effect.sync(() => sessions.get(id)),
      getForUpdate: (id) => Effect.sync(() => sessions.get(id)),
      update: (r) => sessions.set(r.id, r)
    }
  })
)
