// In-memory store for ACP checkout sessions.
import { Effect, Layer } from "effect"
import type { AcpSessionRecord } from "../../schema/acp/sessions.js"
import { AcpSessionStore } from "../../services/acp/AcpSessionStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryAcpSessionStore = Layer.effect(
  AcpSessionStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const sessions = db.table<string, AcpSessionRecord>("acp_checkout_sessions")
    return AcpSessionStore.of({
      insert: (r) => sessions.set(r.id, r),
      get: (id) => Effect.sync(() => sessions.get(id)),
      getForUpdate: (id) => Effect.sync(() => sessions.get(id)),
      update: (r) => sessions.set(r.id, r)
    })
  })
)
