// Postgres stores for accounts, sessions, agents, keys and rate-limit counters.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Conflict } from "../../../schema/errors.js"
import { Agent, type AccountRecord, type ApiKeyRecord, type Permission, type SessionRecord } from "../../../schema/keys.js"
import { KeysStore } from "../../../services/Keys.js"
import { RateLimitStore } from "../../../services/RateLimiter.js"
import { iso, isoOrNull, orUnavailable } from "./PgDb.js"

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

export const PgKeysStore = Layer.effect(
  KeysStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
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
      listAgents: (accountId) =>
        orUnavailable(sql<AgentRow>`SELECT * FROM agents WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(Effect.map((r) => r.map(toAgent))),
      insertKey: (k) =>
        orUnavailable(
          sql`INSERT INTO api_keys (id, account_id, agent_id, name, prefix, secret_hash, permissions, created_at, expires_at, revoked_at, last_used_at)
              VALUES (${k.id}, ${k.accountId}, ${k.agentId}, ${k.name}, ${k.prefix}, ${k.secretHash}, ${JSON.stringify(k.permissions)}::jsonb,
                      ${k.createdAt}, ${k.expiresAt}, ${k.revokedAt}, ${k.lastUsedAt})`
        ).pipe(Effect.asVoid),
      findKeyByHash: (h) =>
        orUnavailable(sql<KeyRow>`SELECT * FROM api_keys WHERE secret_hash = ${h}`).pipe(Effect.map((r) => (r[0] ? toKey(r[0]) : undefined))),
      getKey: (id) => orUnavailable(sql<KeyRow>`SELECT * FROM api_keys WHERE id = ${id}`).pipe(Effect.map((r) => (r[0] ? toKey(r[0]) : undefined))),
      listKeys: (accountId) =>
        orUnavailable(sql<KeyRow>`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(Effect.map((r) => r.map(toKey))),
      revokeKey: (id, at) => orUnavailable(sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`).pipe(Effect.asVoid),
      touchKey: (id, at) => orUnavailable(sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`).pipe(Effect.asVoid)
    }
  })
)

class OverLimit {
  readonly _tag = "OverLimit"
}

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
      // Increment every window in one transaction; if any passes its limit, roll all back.
      take: (bucket, windows) =>
        orUnavailable(
          sql.withTransaction(
            Effect.forEach(windows, (w) =>
              sql<{ count: number }>`INSERT INTO rate_limit_counters (bucket, window_name, window_start, count)
                  VALUES (${bucket}, ${w.name}, ${w.start}, 1)
                  ON CONFLICT (bucket, window_name, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
                  RETURNING count`.pipe(
                Effect.flatMap((r) => (r[0].count > w.limit ? Effect.fail(new OverLimit()) : Effect.succeed(r[0].count)))
              )
            )
          )
        ).pipe(
          Effect.map((counts) => ({ allowed: true, counts })),
          Effect.catchTag("OverLimit", () => Effect.map(peek(bucket, windows), (counts) => ({ allowed: false, counts })))
        ),
      peek
    }
  })
)
