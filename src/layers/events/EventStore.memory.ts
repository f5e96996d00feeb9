// In-memory outbox of domain events.
import { Effect, Layer } from "effect"
import type { DomainEvent } from "../../schema/events/events.js"
import { EventStore } from "../../services/events/EventStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryEventStore = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const events = db.table<string, DomainEvent>("events")
    const byAgent = db.table<string, Array<string>>("events_by_agent")
    const append = (e: DomainEvent) => Effect.andThen(events.set(e.id, e), byAgent.append(e.agentId, e.id))
    return {
      appendMany: (list) => Effect.forEach(list, append, { discard: true }),
      listForAgent: (agentId, limit) =>
        Effect.sync(() => {
          const list = byAgent.get(agentId) ?? []
          return list
            .slice(-limit)
            .reverse()
            .map((id) => events.get(id)!)
        })
    }
  })
)
