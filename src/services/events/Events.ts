// Events: domain events written to a durable outbox in the same unit of work as the change that
// caused them; the webhook worker delivers them (at least once, deduplicated by event id).
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { DomainEvent, type EventType } from "../../schema/events/events.js"
import { Ids } from "../platform/Db.js"
import { EventStore, type EventStoreService } from "./EventStore.js"

export interface EventItem {
  readonly agentId: string
  readonly type: EventType
  readonly data: Record<string, unknown>
}

export interface EventsService {
  /**
   * Builds events (ids, time) without recording them: for a store that writes them with the change
   * (SettlementStore).
   */
  readonly make: (items: ReadonlyArray<EventItem>) => Effect.Effect<Array<DomainEvent>>
  /** Records an event (same rules as `emitMany`). */
  readonly emit: (
    agentId: string,
    type: EventType,
    data: Record<string, unknown>
  ) => Effect.Effect<DomainEvent, StorageUnavailable>
  /**
   * Records several events at once, in order. Call it inside the same unit of work (the caller's
   * `atomically`) as the change they report.
   */
  readonly emitMany: (items: ReadonlyArray<EventItem>) => Effect.Effect<Array<DomainEvent>, StorageUnavailable>
  readonly listForAgent: EventStoreService["listForAgent"]
}

const make = Effect.gen(function* () {
  const store = yield* EventStore
  const ids = yield* Ids
  const make = Effect.fnUntraced(function* (items: ReadonlyArray<EventItem>) {
    const occurredAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    const made: Array<DomainEvent> = []
    for (const item of items) {
      const id = yield* ids.make("evt")
      made.push(DomainEvent.make({ id, type: item.type, agentId: item.agentId, occurredAt, data: item.data }))
    }
    return made
  })
  const emitMany = (items: ReadonlyArray<EventItem>) =>
    Effect.tap(make(items), (made) => (made.length > 0 ? store.appendMany(made) : Effect.void))
  const emit = (agentId: string, type: EventType, data: Record<string, unknown>) =>
    emitMany([{ agentId, type, data }]).pipe(
      Effect.map((made) => made[0]),
      traced("Events.emit", { attributes: { type } })
    )
  return Events.of({ make, emit, emitMany, listForAgent: store.listForAgent })
})

export class Events extends Context.Service<Events, EventsService>()("agent-commerce/Events") {
  static readonly layer = Layer.effect(Events, make)
}
