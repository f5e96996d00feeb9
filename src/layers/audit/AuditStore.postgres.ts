// Postgres AuditStore: one row per entry in audit_entries (migration "audit"), read newest first by
// the order of writing (`seq`), so entries of the same millisecond keep their order.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { AuditAction, AuditFields } from "../../schema/audit/audit.js"
import { AuditStore } from "../../services/audit/AuditStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

const AuditRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  action: AuditAction,
  actorKind: Schema.Literals(["owner", "agent_key"]),
  actorId: Schema.NullOr(Schema.String),
  subjectId: Schema.NullOr(Schema.String),
  before: Schema.NullOr(AuditFields),
  after: Schema.NullOr(AuditFields),
  createdAt: IsoTimestamp
})
const rows = decodeRows(AuditRow)

const json = (value: unknown) => (value === null ? null : JSON.stringify(value))

export const PgAuditStore = Layer.effect(
  AuditStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      insert: (r) =>
        orUnavailable(
          sql`INSERT INTO audit_entries (id, agent_id, action, actor_kind, actor_id, subject_id, before, after, created_at)
              VALUES (${r.id}, ${r.agentId}, ${r.action}, ${r.actor.kind}, ${r.actor.id}, ${r.subjectId},
                ${json(r.before)}::jsonb, ${json(r.after)}::jsonb, ${r.createdAt})`
        ).pipe(Effect.asVoid),
      page: (agentId, { before, limit }) =>
        orUnavailable(
          (before === undefined
            ? sql`SELECT id, agent_id, action, actor_kind, actor_id, subject_id, before, after, created_at
                  FROM audit_entries WHERE agent_id = ${agentId} ORDER BY seq DESC LIMIT ${limit}`
            : sql`SELECT id, agent_id, action, actor_kind, actor_id, subject_id, before, after, created_at
                  FROM audit_entries WHERE agent_id = ${agentId}
                    AND seq < COALESCE((SELECT seq FROM audit_entries WHERE id = ${before.id} AND agent_id = ${agentId}), 0)
                  ORDER BY seq DESC LIMIT ${limit}`
          ).pipe(Effect.flatMap(rows))
        ).pipe(
          Effect.map((list) =>
            list.map(({ actorKind, actorId, ...r }) => ({ ...r, actor: { kind: actorKind, id: actorId } }))
          )
        )
    }
  })
)
