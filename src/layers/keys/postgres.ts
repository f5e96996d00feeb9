// Postgres stores for accounts, sessions, agents, keys and rate-limit counters.
import { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Queue } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Conflict, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Agent, type AccountRecord, type ApiKeyRecord, type Permission, type SessionRecord } from "../../schema/keys/keys.js"
import { KeysStore } from "../../services/keys/Keys.js"
import { RateLimitStore } from "../../services/keys/RateLimiter.js"
import { iso, isoOrNull, orUnavailable, nonEmpty } from "../storage/postgres/PgDb.js"

interface AccountRow { id: string; email: string; name: string; passwordHash: string; planId: string | null; createdAt: Date }
interface AgentRow { id: string; accountId: string; name: string; organization: string | null; createdAt: Date }
interface KeyRow {
  id: string; accountId: string; agentId: string; name: string; prefix: string; secretHash: string
  permissions: Array<string>; createdAt: Date; expiresAt: Date | null; revokedAt: Date | null; lastUsedAt: Date | null
}
interface SessionRow { tokenHash: string; accountId: string; createdAt: Date; expiresAt: Date }

const toAccount = (r: AccountRow): AccountRecord => ({ ...r, createdAt: iso(r.createdAt) })
const toAgent = (r: AgentRow) => Agent.make({ ...r, createdAt: iso(r.createdAt) })
const toKey = (r: KeyRow): ApiKeyRecord => ({
  ...r,
  permissions: r.permissions as Array<Permission>,
  createdAt: iso(r.createdAt),
  expiresAt: isoOrNull(r.expiresAt),
  revokedAt: isoOrNull(r.revokedAt),
  lastUsedAt: isoOrNull(r.lastUsedAt)
})
const toSession = (r: SessionRow): SessionRecord => ({ ...r, createdAt: iso(r.createdAt), expiresAt: iso(r.expiresAt) })

/** The channel a revocation is announced on (payload: the key id). */
export const KEY_CHANNEL = "agent_commerce_key_revoked"

export const PgKeysStore = Layer.effect(
  KeysStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pgClient = yield* PgClient.PgClient
    const config = yield* AppConfig
    return {
      insertAccount: (a) =>
        orUnavailable(
          sql<{ id: string }>`INSERT INTO accounts (id, email, name, password_hash, plan_id, created_at)
              VALUES (${a.id}, ${a.email}, ${a.name}, ${a.passwordHash}, ${a.planId}, ${a.createdAt})
              ON CONFLICT (email) DO NOTHING RETURNING id`
        ).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(new Conflict({ message: `an account with e-mail ${a.email} exists` })) : Effect.void
          )
        ),
      findAccountByEmail: (email) =>
        orUnavailable(sql<AccountRow>`SELECT * FROM accounts WHERE email = ${email}`).pipe(Effect.map((r) => (r[0] ? toAccount(r[0]) : undefined))),
      getAccount: (id) =>
        orUnavailable(sql<AccountRow>`SELECT * FROM accounts WHERE id = ${id}`).pipe(Effect.map((r) => (r[0] ? toAccount(r[0]) : undefined))),
      setAccountPlan: (id, planId) => orUnavailable(sql`UPDATE accounts SET plan_id = ${planId} WHERE id = ${id}`).pipe(Effect.asVoid),
      insertSession: (s) =>
        orUnavailable(
          sql`INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (${s.tokenHash}, ${s.accountId}, ${s.createdAt}, ${s.expiresAt})`
        ).pipe(Effect.asVoid),
      findSession: (h) =>
        orUnavailable(sql<SessionRow>`SELECT * FROM sessions WHERE token_hash = ${h}`).pipe(Effect.map((r) => (r[0] ? toSession(r[0]) : undefined))),
      deleteSession: (h) => orUnavailable(sql`DELETE FROM sessions WHERE token_hash = ${h}`).pipe(Effect.asVoid),
      insertAgent: (a) =>
        orUnavailable(
          sql`INSERT INTO agents (id, account_id, name, organization, created_at) VALUES (${a.id}, ${a.accountId}, ${a.name}, ${a.organization}, ${a.createdAt})
              ON CONFLICT (id) DO NOTHING`
        ).pipe(Effect.asVoid),
      getAgent: (id) => orUnavailable(sql<AgentRow>`SELECT * FROM agents WHERE id = ${id}`).pipe(Effect.map((r) => (r[0] ? toAgent(r[0]) : undefined))),
      getAgents: (ids) =>
        ids.length === 0 ? Effect.succeed([]) : orUnavailable(sql<AgentRow>`SELECT * FROM agents WHERE id IN ${sql.in([...ids])}`).pipe(Effect.map((r) => r.map(toAgent))),
      listAgents: (accountId) =>
        orUnavailable(sql<AgentRow>`SELECT * FROM agents WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(Effect.map((r) => r.map(toAgent))),
      insertKey: (k) =>
        orUnavailable(
          sql`INSERT INTO api_keys (id, account_id, agent_id, name, prefix, secret_hash, permissions, created_at, expires_at, revoked_at, last_used_at)
              VALUES (${k.id}, ${k.accountId}, ${k.agentId}, ${k.name}, ${k.prefix}, ${k.secretHash}, ${JSON.stringify(k.permissions)}::jsonb,
                      ${k.createdAt}, ${k.expiresAt}, ${k.revokedAt}, ${k.lastUsedAt})`
        ).pipe(Effect.asVoid),
      findKeyWithAgent: (h) =>
        orUnavailable(
          sql<KeyRow & { agentName: string | null; agentOrganization: string | null; agentCreatedAt: Date | null; agentAccountId: string | null }>`
            SELECT k.*, a.name AS agent_name, a.organization AS agent_organization, a.created_at AS agent_created_at, a.account_id AS agent_account_id
            FROM api_keys k LEFT JOIN agents a ON a.id = k.agent_id WHERE k.secret_hash = ${h}`
        ).pipe(
          Effect.map(([r]) => {
            if (!r) return undefined
            const { agentName, agentOrganization, agentCreatedAt, agentAccountId, ...key } = r
            const agent =
              agentName !== null && agentCreatedAt !== null && agentAccountId !== null
                ? toAgent({ id: key.agentId, accountId: agentAccountId, name: agentName, organization: agentOrganization, createdAt: agentCreatedAt })
                : undefined
            return { key: toKey(key), agent }
          })
        ),
      getKey: (id) => orUnavailable(sql<KeyRow>`SELECT * FROM api_keys WHERE id = ${id}`).pipe(Effect.map((r) => (r[0] ? toKey(r[0]) : undefined))),
      listKeys: (accountId) =>
        orUnavailable(sql<KeyRow>`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(Effect.map((r) => r.map(toKey))),
      // The notification is delivered when the revoking transaction commits, to every listening process.
      revokeKey: (id, at) =>
        orUnavailable(
          sql`WITH revoked AS (UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL RETURNING id)
              SELECT pg_notify(${KEY_CHANNEL}, id) FROM revoked`
        ).pipe(Effect.asVoid),
      touchKey: (id, at) => orUnavailable(sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`).pipe(Effect.asVoid),
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
                Effect.catchCause((cause) => Effect.logWarning("key revocation listener stopped; restarting in 1 s", cause)),
                Effect.andThen(Effect.sleep("1 second")),
                Effect.forever
              )
            ).pipe(Effect.asVoid, Effect.provideService(PgClient.PgClient, pgClient))
    }
  })
)

export const PgRateLimitStore = Layer.effect(
  RateLimitStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const peek = (bucket: string, windows: ReadonlyArray<{ readonly name: string; readonly start: number }>) =>
      orUnavailable(
        Effect.forEach(windows, (w) =>
          sql<{ count: number }>`SELECT count FROM rate_limit_counters WHERE bucket = ${bucket} AND window_name = ${w.name} AND window_start = ${w.start}`.pipe(
            Effect.map((r) => r[0]?.count ?? 0)
          )
        )
      )
    return {
      // One statement adds n to every window; what passes the tightest limit is given back in a
      // second (a refused request does not count). Between the two, a concurrent request of the
      // same key may see the window fuller than it ends up: it is refused early, never late.
      reserve: (bucket, windows, n) =>
        orUnavailable(
          sql<{ windowName: string; count: number }>`INSERT INTO rate_limit_counters
              ${sql.insert(nonEmpty(windows.map((w) => ({ bucket, windowName: w.name, windowStart: w.start, count: n }))))}
              ON CONFLICT (bucket, window_name, window_start) DO UPDATE SET count = rate_limit_counters.count + ${n}
              RETURNING window_name, count`
        ).pipe(
          Effect.flatMap((rows): Effect.Effect<{ readonly granted: number; readonly counts: ReadonlyArray<number> }, StorageUnavailable> => {
            const counts = windows.map((w) => rows.find((r) => r.windowName === w.name)?.count ?? 0)
            const excess = Math.max(0, ...counts.map((count, i) => count - windows[i].limit))
            if (excess === 0) return Effect.succeed({ granted: n, counts })
            const back = Math.min(n, excess)
            return orUnavailable(
              Effect.forEach(
                windows,
                (w) => sql`UPDATE rate_limit_counters SET count = count - ${back} WHERE bucket = ${bucket} AND window_name = ${w.name} AND window_start = ${w.start}`,
                { discard: true }
              )
            ).pipe(Effect.as({ granted: n - back, counts: counts.map((count) => count - back) }))
          })
        ),
      peek
    }
  })
)
