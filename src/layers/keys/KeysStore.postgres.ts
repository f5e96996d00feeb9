// Postgres store for accounts, dashboard sessions, agents and API keys. Rows are decoded with their
// row schemas, except the bearer-key lookup: it runs on every authenticated request
// (docs/performance.md), so its row is mapped by hand, and a test pins that mapping.
import { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Queue, Schema } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Conflict } from "../../schema/platform/errors.js"
import { Agent, type ApiKeyRecord, Permission } from "../../schema/keys/keys.js"
import { KeysStore } from "../../services/keys/KeysStore.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

const AccountRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  passwordHash: Schema.String,
  planId: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp
})
const AgentRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  name: Schema.String,
  organization: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp
})
const KeyRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  agentId: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  secretHash: Schema.String,
  permissions: Schema.Array(Permission),
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestampOrNull,
  revokedAt: IsoTimestampOrNull,
  lastUsedAt: IsoTimestampOrNull
})
const SessionRow = Schema.Struct({
  tokenHash: Schema.String,
  accountId: Schema.String,
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestamp
})

const firstAgent = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodeFirst(AgentRow)(rows), (a) => (a ? Agent.make(a) : undefined))
const allAgents = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodeRows(AgentRow)(rows), (all) => all.map((a) => Agent.make(a)))

/** The bearer-key lookup's row: the key's columns and its agent's, as the driver returns them. */
export interface KeyWithAgentRow {
  id: string
  accountId: string
  agentId: string
  name: string
  prefix: string
  secretHash: string
  permissions: Array<string>
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
  lastUsedAt: Date | null
  agentName: string | null
  agentOrganization: string | null
  agentCreatedAt: Date | null
  agentAccountId: string | null
}

/** Maps the bearer-key lookup's row by hand (the hot path); the agent is undefined when it is gone. */
export const keyWithAgentOf = (r: KeyWithAgentRow) => {
  const { agentName, agentOrganization, agentCreatedAt, agentAccountId, ...key } = r
  const agent =
    agentName !== null && agentCreatedAt !== null && agentAccountId !== null
      ? Agent.make({
          id: key.agentId,
          accountId: agentAccountId,
          name: agentName,
          organization: agentOrganization,
          createdAt: iso(agentCreatedAt)
        })
      : undefined
  const record: ApiKeyRecord = {
    ...key,
    permissions: key.permissions as Array<Permission>,
    createdAt: iso(key.createdAt),
    expiresAt: isoOrNull(key.expiresAt),
    revokedAt: isoOrNull(key.revokedAt),
    lastUsedAt: isoOrNull(key.lastUsedAt)
  }
  return { key: record, agent }
}

/** The channel a revocation is announced on (payload: the key id). */
export const KEY_CHANNEL = "agent_commerce_key_revoked"

export const PgKeysStore = Layer.effect(
  KeysStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pgClient = yield* PgClient.PgClient
    const config = yield* AppConfig
    return KeysStore.of({
      insertAccount: (a) =>
        orUnavailable(
          sql<{ id: string }>`INSERT INTO accounts (id, email, name, password_hash, plan_id, created_at)
              VALUES (${a.id}, ${a.email}, ${a.name}, ${a.passwordHash}, ${a.planId}, ${a.createdAt})
              ON CONFLICT DO NOTHING RETURNING id`
        ).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0
              ? Effect.fail(new Conflict({ message: `an account with e-mail ${a.email} exists` }))
              : Effect.void
          )
        ),
      findAccountByEmail: (email) =>
        orUnavailable(sql`SELECT * FROM accounts WHERE email = ${email}`).pipe(Effect.flatMap(decodeFirst(AccountRow))),
      getAccount: (id) =>
        orUnavailable(sql`SELECT * FROM accounts WHERE id = ${id}`).pipe(Effect.flatMap(decodeFirst(AccountRow))),
      setAccountPlan: (id, planId) =>
        orUnavailable(sql`UPDATE accounts SET plan_id = ${planId} WHERE id = ${id}`).pipe(Effect.asVoid),
      insertSession: (s) =>
        orUnavailable(
          sql`INSERT INTO sessions (token_hash, account_id, created_at, expires_at)
              VALUES (${s.tokenHash}, ${s.accountId}, ${s.createdAt}, ${s.expiresAt})`
        ).pipe(Effect.asVoid),
      findSession: (h) =>
        orUnavailable(sql`SELECT * FROM sessions WHERE token_hash = ${h}`).pipe(
          Effect.flatMap(decodeFirst(SessionRow))
        ),
      deleteSession: (h) => orUnavailable(sql`DELETE FROM sessions WHERE token_hash = ${h}`).pipe(Effect.asVoid),
      insertAgent: (a) =>
        orUnavailable(
          sql`INSERT INTO agents (id, account_id, name, organization, created_at)
              VALUES (${a.id}, ${a.accountId}, ${a.name}, ${a.organization}, ${a.createdAt})
              ON CONFLICT (id) DO NOTHING`
        ).pipe(Effect.asVoid),
      getAgent: (id) => orUnavailable(sql`SELECT * FROM agents WHERE id = ${id}`).pipe(Effect.flatMap(firstAgent)),
      getAgents: (ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : orUnavailable(sql`SELECT * FROM agents WHERE id IN ${sql.in([...ids])}`).pipe(Effect.flatMap(allAgents)),
      listAgents: (accountId) =>
        orUnavailable(sql`SELECT * FROM agents WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(
          Effect.flatMap(allAgents)
        ),
      insertKey: (k) =>
        orUnavailable(
          sql`INSERT INTO api_keys (id, account_id, agent_id, name, prefix, secret_hash, permissions, created_at,
                expires_at, revoked_at, last_used_at)
              VALUES (${k.id}, ${k.accountId}, ${k.agentId}, ${k.name}, ${k.prefix}, ${k.secretHash},
                      ${JSON.stringify(k.permissions)}::jsonb, ${k.createdAt}, ${k.expiresAt}, ${k.revokedAt},
                      ${k.lastUsedAt})`
        ).pipe(Effect.asVoid),
      findKeyWithAgent: (h) =>
        orUnavailable(
          sql<KeyWithAgentRow>`
            SELECT k.*, a.name AS agent_name, a.organization AS agent_organization,
              a.created_at AS agent_created_at, a.account_id AS agent_account_id
            FROM api_keys k LEFT JOIN agents a ON a.id = k.agent_id WHERE k.secret_hash = ${h}`
        ).pipe(Effect.map(([r]) => (r ? keyWithAgentOf(r) : undefined))),
      getKey: (id) =>
        orUnavailable(sql`SELECT * FROM api_keys WHERE id = ${id}`).pipe(Effect.flatMap(decodeFirst(KeyRow))),
      listKeys: (accountId) =>
        orUnavailable(sql`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(
          Effect.flatMap(decodeRows(KeyRow))
        ),
      // The notification is delivered when the revoking transaction commits, to every listening process.
      revokeKey: (id, at) =>
        orUnavailable(
          sql`WITH revoked AS (
                UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL RETURNING id
              )
              SELECT pg_notify(${KEY_CHANNEL}, id) FROM revoked`
        ).pipe(Effect.asVoid),
      touchKey: (id, at) =>
        orUnavailable(sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`).pipe(Effect.asVoid),
      watchKeyChanges: (onChange) =>
        // A Postgres server: LISTEN on a connection of its own, re-established after a failure (the
        // cache's TTL covers the gap). The embedded store is one process and has one connection: nothing.
        config.storage !== "postgres"
          ? Effect.void
          : Effect.forkScoped(
              Effect.gen(function* () {
                const pg = yield* PgClient.PgClient
                const notifications = yield* pg.listen(KEY_CHANNEL)
                for (;;) {
                  const n = yield* Queue.take(notifications)
                  yield* onChange(n.payload)
                }
              }).pipe(
                Effect.scoped,
                Effect.catchCause((cause) =>
                  Effect.logWarning("key revocation listener stopped; restarting in 1 s", cause)
                ),
                Effect.andThen(Effect.sleep("1 second")),
                Effect.forever
              )
            ).pipe(Effect.asVoid, Effect.provideService(PgClient.PgClient, pgClient))
    })
  })
)
