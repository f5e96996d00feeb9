// Events: domain events written to a durable outbox in the same unit of work as the change that
// caused them; the webhook worker delivers them (at least once, deduplicated by event id).
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { DomainEvent, type EventType } from "../../schema/events/events.js"
import { Ids } from "../platform/Db.js"

/** Storage port: the outbox. */
export class EventStore extends Context.Service<
  EventStore,
  {
    /**
     * Appends events in order (one statement on Postgres) inside the caller's unit of work
     * (atomically), so an event exists iff the change it reports does.
     */
    readonly appendMany: (events: ReadonlyArray<DomainEvent>) => Effect.Effect<void, StorageUnavailable>
    /** Events for an agent, newest first (for polling and tests). */
    readonly listForAgent: (agentId: string, limit: number) => Effect.Effect<ReadonlyArray<DomainEvent>, StorageUnavailable>
  }
>()("EventStore") {}

export class Events extends Context.Service<Events>()("Events", {
  make: Effect.gen(function* () {
    const store = yield* EventStore
    const ids = yield* Ids
    /** Builds events (ids, time) without recording them: for a store that writes them with the change (SettlementStore). */
    const make = Effect.fnUntraced(function* (items: ReadonlyArray<{ readonly agentId: string; readonly type: EventType; readonly data: Record<string, unknown> }>) {
      const occurredAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const made: Array<DomainEvent> = []
      for (const item of items) made.push(DomainEvent.make({ id: yield* ids.make("evt"), type: item.type, agentId: item.agentId, occurredAt, data: item.data }))
      return made
    })
    /** Records several events at once, in order. Call it inside the same `atomically` as the change they report. */
    const emitMany = (items: ReadonlyArray<{ readonly agentId: string; readonly type: EventType; readonly data: Record<string, unknown> }>) =>
      Effect.tap(make(items), (made) => (made.length > 0 ? store.appendMany(made) : Effect.void))
    /** Records an event (same rules as `emitMany`). */
    const emit = (agentId: string, type: EventType, data: Record<string, unknown>) =>
      emitMany([{ agentId, type, data }]).pipe(
        Effect.map((made) => made[0]),
        traced("Events.emit", { attributes: { type } })
      )
    return { make, emit, emitMany, listForAgent: store.listForAgent } as const
  })
}) {
  static readonly layer = Layer.effect(Events, Events.make)
}
