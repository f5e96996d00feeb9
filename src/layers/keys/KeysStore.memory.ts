// In-memory store for accounts, dashboard sessions, agents and API keys.
import { Effect, Layer } from "effect"
import { Conflict } from "../../schema/platform/errors.js"
import type { AccountRecord, Agent, ApiKeyRecord, SessionRecord } from "../../schema/keys/keys.js"
import { KeysStore } from "../../services/keys/KeysStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

/** (createdAt, id) order: true when `a` sorts before `b`. */
type Dated = { readonly createdAt: string; readonly id: string }
const older = (a: Dated, b: Dated) => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)

export const MemoryKeysStore = Layer.effect(
  KeysStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const accounts = db.table<string, AccountRecord>("accounts")
    const emails = db.table<string, string>("account_emails")
    const sessions = db.table<string, SessionRecord>("sessions")
    const agents = db.table<string, Agent>("agents")
    const keys = db.table<string, ApiKeyRecord>("api_keys")
    const keyHashes = db.table<string, string>("api_key_hashes")
    /**
     * Account → its agents' / keys' ids by (createdAt, id), as the Postgres store orders them (its
     * account_id indexes).
     */
    const agentsByAccount = db.table<string, Array<string>>("agents_by_account")
    const keysByAccount = db.table<string, Array<string>>("api_keys_by_account")
    return KeysStore.of({
      // Read when it runs, not when it is built: two inserts built before either runs see each other.
      insertAccount: (a) =>
        db.atomically(
          Effect.suspend(() =>
            emails.get(a.email) !== undefined || accounts.get(a.id) !== undefined
              ? Effect.fail(new Conflict({ message: `an account with e-mail ${a.email} exists` }))
              : Effect.andThen(emails.set(a.email, a.id), accounts.set(a.id, a))
          )
        ),
      findAccountByEmail: (email) =>
        Effect.sync(() => {
          const id = emails.get(email)
          return id ? accounts.get(id) : undefined
        }),
      getAccount: (id) => Effect.sync(() => accounts.get(id)),
      setAccountPlan: (id, planId) =>
        Effect.suspend(() => {
          const a = accounts.get(id)
          return a ? accounts.set(id, { ...a, planId }) : Effect.void
        }),
      insertSession: (s) => sessions.set(s.tokenHash, s),
      findSession: (h) => Effect.sync(() => sessions.get(h)),
      deleteSession: (h) => sessions.delete(h),
      insertAgent: (a) =>
        Effect.andThen(
          agents.set(a.id, a),
          agentsByAccount.insertSorted(a.accountId, a.id, (x, y) =>
            older(x === a.id ? a : agents.get(x)!, y === a.id ? a : agents.get(y)!)
          )
        ),
      getAgent: (id) => Effect.sync(() => agents.get(id)),
      getAgents: (ids) => Effect.sync(() => ids.flatMap((id) => agents.get(id) ?? [])),
      listAgents: (accountId) => Effect.sync(() => (agentsByAccount.get(accountId) ?? []).map((id) => agents.get(id)!)),
      insertKey: (k) =>
        Effect.all(
          [
            keyHashes.set(k.secretHash, k.id),
            keys.set(k.id, k),
            keysByAccount.insertSorted(k.accountId, k.id, (x, y) =>
              older(x === k.id ? k : keys.get(x)!, y === k.id ? k : keys.get(y)!)
            )
          ],
          { discard: true }
        ),
      findKeyWithAgent: (h) =>
        Effect.sync(() => {
          const id = keyHashes.get(h)
          const key = id ? keys.get(id) : undefined
          return key ? { key, agent: agents.get(key.agentId) } : undefined
        }),
      getKey: (id) => Effect.sync(() => keys.get(id)),
      listKeys: (accountId) => Effect.sync(() => (keysByAccount.get(accountId) ?? []).map((id) => keys.get(id)!)),
      revokeKey: (id, at) =>
        Effect.suspend(() => {
          const k = keys.get(id)
          return k && k.revokedAt === null ? keys.set(id, { ...k, revokedAt: at }) : Effect.void
        }),
      touchKey: (id, at) =>
        Effect.suspend(() => {
          const k = keys.get(id)
          return k ? keys.set(id, { ...k, lastUsedAt: at }) : Effect.void
        }),
      // One process holds the data: its own revocations evict its cache directly.
      watchKeyChanges: () => Effect.void
    })
  })
)
