// The events' storage port: the outbox. Adapters: src/layers/events/EventStore.memory.ts and
// EventStore.postgres.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { DomainEvent } from "../../schema/events/events.js"

export interface EventStoreService {
  /**
   * Appends events in order (one statement on Postgres) inside the caller's unit of work
   * (atomically), so an event exists iff the change it reports does.
   */
  readonly appendMany: (events: ReadonlyArray<DomainEvent>) => Effect.Effect<void, StorageUnavailable>
  /** Events for an agent, newest first (for polling and tests). */
  readonly listForAgent: (
    agentId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<DomainEvent>, StorageUnavailable>
}

export class EventStore extends Context.Service<EventStore, EventStoreService>()("agent-commerce/EventStore") {}
