// Postgres store of refusals: one INSERT that resolves the agent's account and the service's name,
// keyset pages newest first, and each agent's newest refusal through the account's agents (one
// index probe per agent, bounded by the account's agent limit).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { Cents } from "../../schema/platform/common.js"
import { RefusalPath, RefusalReason } from "../../schema/refusals/refusals.js"
import { RefusalsStore } from "../../services/refusals/RefusalsStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

const RefusalRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  serviceId: Schema.NullOr(Schema.String),
  serviceName: Schema.NullOr(Schema.String),
  tierId: Schema.NullOr(Schema.String),
  priceCents: Cents,
  reason: RefusalReason,
  message: Schema.String,
  path: RefusalPath,
  createdAt: IsoTimestamp
})

const COLUMNS = "id, agent_id, service_id, service_name, tier_id, price_cents, reason, message, path, created_at"

export const PgRefusalsStore = Layer.effect(
  RefusalsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(RefusalRow)
    const columns = sql.literal(COLUMNS)
    return RefusalsStore.of({
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO refusals (id, account_id, agent_id, service_id, service_name, tier_id, price_cents, reason,
            message, path, created_at)
          VALUES (${r.id}, (SELECT account_id FROM agents WHERE id = ${r.agentId}), ${r.agentId}, ${r.serviceId},
            COALESCE(${r.serviceName}::text, (SELECT name FROM commerce_services WHERE id = ${r.serviceId})),
            ${r.tierId}, ${r.priceCents}, ${r.reason}, ${r.message}, ${r.path}, ${r.createdAt})`).pipe(Effect.asVoid),
      page: (accountId, { agentId, before, limit }) =>
        orUnavailable(sql`
          SELECT ${columns} FROM refusals
          WHERE account_id = ${accountId}
            ${agentId === undefined ? sql`` : sql`AND agent_id = ${agentId}`}
            ${before === undefined ? sql`` : sql`AND (created_at, id) < (${before.createdAt}::timestamptz, ${before.id})`}
          ORDER BY created_at DESC, id DESC
          LIMIT ${limit}`).pipe(Effect.flatMap(rows)),
      latestByAgent: (accountId) =>
        orUnavailable(sql`
          SELECT r.* FROM agents a
          CROSS JOIN LATERAL (
            SELECT ${columns} FROM refusals WHERE agent_id = a.id ORDER BY created_at DESC, id DESC LIMIT 1
          ) r
          WHERE a.account_id = ${accountId}`).pipe(Effect.flatMap(rows))
    })
  })
)
