// Postgres outbox of domain events.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { DomainEvent, EventType } from "../../schema/events/events.js"
import { EventStore } from "../../services/events/EventStore.js"
import { orUnavailable, nonEmpty } from "../storage/postgres/PgDb.js"
import { decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

/** An outbox row as the event it holds (occurred_at as an ISO string). */
const EventRow = Schema.Struct({
  id: Schema.String,
  type: EventType,
  agentId: Schema.String,
  occurredAt: IsoTimestamp,
  data: Schema.Record(Schema.String, Schema.Unknown)
})
const eventRows = decodeRows(EventRow)

/** The CTE (for a WITH, named `ev`) that appends events; shared with the settlement's one statement. */
export const eventsCte = (sql: SqlClient.SqlClient, events: ReadonlyArray<DomainEvent>) =>
  sql`ev AS (INSERT INTO events ${sql.insert(nonEmpty(events.map((e) => ({ id: e.id, type: e.type, agentId: e.agentId, occurredAt: e.occurredAt, data: JSON.stringify(e.data) }))))})`

export const PgEventStore = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      appendMany: (events) =>
        events.length === 0
          ? Effect.void
          : orUnavailable(sql`WITH ${eventsCte(sql, events)} SELECT 1`).pipe(Effect.asVoid),
      listForAgent: (agentId, limit) =>
        orUnavailable(
          sql`SELECT id, type, agent_id, occurred_at, data FROM events
              WHERE agent_id = ${agentId} ORDER BY seq DESC LIMIT ${limit}`
        ).pipe(
          Effect.flatMap(eventRows),
          Effect.map((rows) => rows.map((r) => DomainEvent.make(r)))
        )
    }
  })
)
