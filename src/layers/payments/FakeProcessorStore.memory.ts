// In-memory FakeProcessorStore: the fake processor's sessions and signed deliveries.
import { Effect, Layer } from "effect"
import { type FakeDelivery, FakeProcessorStore, type FakeSession } from "../../services/payments/FakeProcessorStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryFakeProcessorStore = Layer.effect(
  FakeProcessorStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const sessions = db.table<string, FakeSession>("fake_checkout_sessions")
    const byKey = db.table<string, string>("fake_checkout_sessions_by_key")
    const deliveries = db.table<string, Array<FakeDelivery>>("fake_processor_deliveries")
    return {
      insertSession: (s) =>
        Effect.suspend(() =>
          byKey.get(s.idempotencyKey)
            ? Effect.void
            : Effect.andThen(sessions.set(s.id, s), byKey.set(s.idempotencyKey, s.id))
        ),
      getSession: (id) => Effect.sync(() => sessions.get(id)),
      lockSession: (id) => Effect.sync(() => sessions.get(id)),
      findSessionByIdempotencyKey: (key) =>
        Effect.sync(() => {
          const id = byKey.get(key)
          return id ? sessions.get(id) : undefined
        }),
      updateSession: (s) => sessions.set(s.id, s),
      insertDelivery: (d) => deliveries.append(d.sessionId, d),
      listDeliveries: (sessionId) => Effect.sync(() => [...(deliveries.get(sessionId) ?? [])])
    }
  })
)
