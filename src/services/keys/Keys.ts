// Keys: accounts, dashboard sessions, agents and their API keys; authenticates bearer keys.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer, type Scope } from "effect"
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto"
import { promisify } from "node:util"
import {
  Account,
  type AccountRecord,
  Agent,
  type ApiKeyRecord,
  ApiKeyView,
  expandGrants,
  KEY_PREFIX,
  type Permission,
  type PermissionGrant,
  type SessionRecord
} from "../../schema/keys/keys.js"
import { Conflict, InvalidInput, NotFound, type StorageUnavailable, Unauthorized } from "../../schema/platform/errors.js"
import type { Caller } from "./Caller.js"
import { atomically, Ids } from "../platform/Db.js"

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>

/** Storage port for accounts, sessions, agents and keys. */
export class KeysStore extends Context.Service<
  KeysStore,
  {
    /** Fails with Conflict when the e-mail is taken. */
    readonly insertAccount: (account: AccountRecord) => Effect.Effect<void, Conflict | StorageUnavailable>
    readonly findAccountByEmail: (email: string) => Effect.Effect<AccountRecord | undefined, StorageUnavailable>
    readonly getAccount: (id: string) => Effect.Effect<AccountRecord | undefined, StorageUnavailable>
    readonly setAccountPlan: (id: string, planId: string | null) => Effect.Effect<void, StorageUnavailable>
    readonly insertSession: (session: SessionRecord) => Effect.Effect<void, StorageUnavailable>
    readonly findSession: (tokenHash: string) => Effect.Effect<SessionRecord | undefined, StorageUnavailable>
    readonly deleteSession: (tokenHash: string) => Effect.Effect<void, StorageUnavailable>
    readonly insertAgent: (agent: Agent) => Effect.Effect<void, StorageUnavailable>
    readonly getAgent: (id: string) => Effect.Effect<Agent | undefined, StorageUnavailable>
    /** The agents among `ids` that exist, in one read (any order). */
    readonly getAgents: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Agent>, StorageUnavailable>
    readonly listAgents: (accountId: string) => Effect.Effect<ReadonlyArray<Agent>, StorageUnavailable>
    readonly insertKey: (key: ApiKeyRecord) => Effect.Effect<void, StorageUnavailable>
    /** The key with its agent (undefined when the agent is gone), in one read: the authentication path. */
    readonly findKeyWithAgent: (
      secretHash: string
    ) => Effect.Effect<{ readonly key: ApiKeyRecord; readonly agent: Agent | undefined } | undefined, StorageUnavailable>
    readonly getKey: (id: string) => Effect.Effect<ApiKeyRecord | undefined, StorageUnavailable>
    readonly listKeys: (accountId: string) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageUnavailable>
    readonly revokeKey: (id: string, at: string) => Effect.Effect<void, StorageUnavailable>
    readonly touchKey: (id: string, at: string) => Effect.Effect<void, StorageUnavailable>
    /**
     * Calls `onChange(keyId)` for every key revoked by another process, for as long as the scope
     * lives (Postgres: LISTEN on the channel revokeKey notifies at commit; one process: nothing).
     */
    readonly watchKeyChanges: (onChange: (keyId: string) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
  }
>()("KeysStore") {}

/**
 * Authentication reads keys from a per-process cache (docs/keys.md): an entry lives at most this
 * long, so a revocation another process made reaches this one within it even when its
 * notification is lost; a revocation made here, or notified, evicts the key at once.
 */
export const KEY_CACHE_TTL_MS = 1_000
/** Cached keys per process (the oldest entry makes room). */
export const KEY_CACHE_MAX = 10_000

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 }
export const hashPassword = (password: string) =>
  Effect.promise(async () => {
    const salt = randomBytes(16)
    const hash = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p })
    return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64url")}$${hash.toString("base64url")}`
  })
export const verifyPassword = (password: string, stored: string) =>
  Effect.promise(async () => {
    const [scheme, n, r, p, salt, hash] = stored.split("$")
    if (scheme !== "scrypt" || !salt || !hash) return false
    const expected = Buffer.from(hash, "base64url")
    const actual = await scrypt(password, Buffer.from(salt, "base64url"), expected.length, { N: Number(n), r: Number(r), p: Number(p) })
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  })

const SESSION_TTL_MS = 7 * 24 * 3600 * 1000
/** Only touch last-used when it is older than this, so a busy key does not write on every call. */
const TOUCH_EVERY_MS = 60_000

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

export const toView = (k: ApiKeyRecord): ApiKeyView =>
  ApiKeyView.make({
    id: k.id,
    agentId: k.agentId,
    name: k.name,
    prefix: k.prefix,
    permissions: [...k.permissions],
    createdAt: k.createdAt,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
    lastUsedAt: k.lastUsedAt
  })

const toAccount = (a: AccountRecord) =>
  Account.make({ id: a.id, email: a.email, name: a.name, planId: a.planId, createdAt: a.createdAt })

export interface AuthenticatedKey {
  readonly caller: Caller
  readonly key: ApiKeyRecord
  readonly agent: Agent
}

export class Keys extends Context.Service<Keys>()("Keys", {
  make: Effect.gen(function* () {
    const store = yield* KeysStore

    // The authentication cache: secret hash → key and agent, with the key id's hash for eviction.
    const cache = new Map<string, { found: { readonly key: ApiKeyRecord; readonly agent: Agent | undefined }; readonly until: number }>()
    const hashOfKey = new Map<string, string>()
    const remember = (hash: string, entry: { found: { readonly key: ApiKeyRecord; readonly agent: Agent | undefined }; readonly until: number }) => {
      cache.delete(hash)
      if (cache.size >= KEY_CACHE_MAX) {
        const oldest = cache.keys().next().value
        if (oldest !== undefined) {
          const evicted = cache.get(oldest)
          cache.delete(oldest)
          if (evicted) hashOfKey.delete(evicted.found.key.id)
        }
      }
      cache.set(hash, entry)
      hashOfKey.set(entry.found.key.id, hash)
    }
    const forget = (keyId: string) => {
      const hash = hashOfKey.get(keyId)
      if (hash !== undefined) cache.delete(hash)
      hashOfKey.delete(keyId)
    }
    // Revocations made by other processes (Postgres), as they commit.
    yield* store.watchKeyChanges((keyId) => Effect.sync(() => forget(keyId)))
    const ids = yield* Ids

    const signUp = Effect.fnUntraced(function* (input: { email: string; password: string; name: string }) {
      if (input.password.length < 10) {
        return yield* Effect.fail(new InvalidInput({ message: "password must have at least 10 characters", field: "password" }))
      }
      const email = input.email.trim().toLowerCase()
      const record: AccountRecord = {
        id: yield* ids.make("acct"),
        email,
        name: input.name,
        passwordHash: yield* hashPassword(input.password),
        planId: null,
        createdAt: yield* nowIso
      }
      yield* store.insertAccount(record)
      return toAccount(record)
    }, traced("Keys.signUp"))

    const startSession = Effect.fnUntraced(function* (accountId: string) {
      const token = yield* ids.secret(32)
      const now = yield* Clock.currentTimeMillis
      yield* store.insertSession({
        tokenHash: sha256(token),
        accountId,
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + SESSION_TTL_MS).toISOString()
      })
      return { token, expiresAt: new Date(now + SESSION_TTL_MS).toISOString() }
    })

    const signIn = Effect.fnUntraced(function* (input: { email: string; password: string }) {
      const account = yield* store.findAccountByEmail(input.email.trim().toLowerCase())
      // Verify against a dummy hash when the account is unknown, so timing does not reveal it.
      const ok = yield* verifyPassword(input.password, account?.passwordHash ?? DUMMY_HASH)
      if (!account || !ok) return yield* Effect.fail(new Unauthorized({ message: "wrong e-mail or password" }))
      const session = yield* startSession(account.id)
      return { account: toAccount(account), ...session }
    }, traced("Keys.signIn"))

    const sessionAccount = Effect.fnUntraced(function* (token: string) {
      const session = token ? yield* store.findSession(sha256(token)) : undefined
      const now = yield* Clock.currentTimeMillis
      if (!session || Date.parse(session.expiresAt) <= now) {
        return yield* Effect.fail(new Unauthorized({ message: "not signed in, or the session expired" }))
      }
      const account = yield* store.getAccount(session.accountId)
      if (!account) return yield* Effect.fail(new Unauthorized({ message: "account no longer exists" }))
      return toAccount(account)
    })

    const signOut = (token: string) => store.deleteSession(sha256(token))

    const ownedAgent = (accountId: string, agentId: string) =>
      Effect.flatMap(store.getAgent(agentId), (agent) =>
        agent && agent.accountId === accountId
          ? Effect.succeed(agent)
          : Effect.fail(new NotFound({ message: `agent ${agentId} not found`, resource: "agent", id: agentId }))
      )

    const createAgent = Effect.fnUntraced(function* (accountId: string, input: { name: string; organization?: string | null }) {
      const agent = Agent.make({
        id: yield* ids.make("agt"),
        accountId,
        name: input.name,
        organization: input.organization ?? null,
        createdAt: yield* nowIso
      })
      yield* store.insertAgent(agent)
      return agent
    }, traced("Keys.createAgent"))

    const createKey = Effect.fnUntraced(function* (accountId: string, agentId: string, input: { name: string; permissions: ReadonlyArray<PermissionGrant>; expiresAt?: string | null }) {
      yield* ownedAgent(accountId, agentId)
      const now = yield* Clock.currentTimeMillis
      if (input.expiresAt != null) {
        const at = Date.parse(input.expiresAt)
        if (!Number.isFinite(at) || at <= now) {
          return yield* Effect.fail(new InvalidInput({ message: "expiresAt must be a future ISO 8601 time", field: "expiresAt" }))
        }
      }
      const permissions = expandGrants(input.permissions)
      if (permissions.length === 0) {
        return yield* Effect.fail(new InvalidInput({ message: "a key needs at least one permission", field: "permissions" }))
      }
      const secret = `${KEY_PREFIX}${yield* ids.secret(32)}`
      const record: ApiKeyRecord = {
        id: yield* ids.make("key"),
        accountId,
        agentId,
        name: input.name,
        prefix: secret.slice(0, KEY_PREFIX.length + 6),
        secretHash: sha256(secret),
        permissions,
        createdAt: new Date(now).toISOString(),
        expiresAt: input.expiresAt != null ? new Date(Date.parse(input.expiresAt)).toISOString() : null,
        revokedAt: null,
        lastUsedAt: null
      }
      yield* store.insertKey(record)
      return { key: toView(record), secret }
    }, traced("Keys.createKey"))

    const listKeys = (accountId: string) => Effect.map(store.listKeys(accountId), (keys) => keys.map(toView))

    const revokeKey = (accountId: string, keyId: string) =>
      Effect.ensuring(revokeKeyOnce(accountId, keyId), Effect.sync(() => forget(keyId))).pipe(traced("Keys.revokeKey"))

    const revokeKeyOnce = Effect.fnUntraced(function* (accountId: string, keyId: string) {
        const key = yield* store.getKey(keyId)
        if (!key || key.accountId !== accountId) {
          return yield* Effect.fail(new NotFound({ message: `key ${keyId} not found`, resource: "key", id: keyId }))
        }
        if (key.revokedAt === null) yield* store.revokeKey(keyId, yield* nowIso)
        forget(keyId)
        return toView({ ...key, revokedAt: key.revokedAt ?? (yield* nowIso) })
      }, atomically)

    /** Resolves a bearer secret into the caller; 401 for unknown, revoked or expired keys. */
    const authenticate = Effect.fnUntraced(function* (secret: string) {
      if (!secret.startsWith(KEY_PREFIX) || secret.length < KEY_PREFIX.length + 40 || secret.length > 200) {
        return yield* Effect.fail(new Unauthorized({ message: "malformed API key" }))
      }
      const hash = sha256(secret)
      // One clock read serves the cache's lifetime and the key's expiry.
      const now = yield* Clock.currentTimeMillis
      let cached = cache.get(hash)
      if (cached === undefined || cached.until <= now) {
        // Unknown keys are not cached: a key created a moment ago works at once.
        const found = yield* store.findKeyWithAgent(hash)
        if (!found) return yield* Effect.fail(new Unauthorized({ message: "unknown API key" }))
        cached = { found, until: now + KEY_CACHE_TTL_MS }
        remember(hash, cached)
      }
      const { key, agent } = cached.found
      if (key.revokedAt !== null) return yield* Effect.fail(new Unauthorized({ message: "this API key was revoked" }))
      if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) {
        return yield* Effect.fail(new Unauthorized({ message: "this API key expired" }))
      }
      if (!agent) return yield* Effect.fail(new Unauthorized({ message: "the key's agent no longer exists" }))
      if (key.lastUsedAt === null || now - Date.parse(key.lastUsedAt) > TOUCH_EVERY_MS) {
        const at = new Date(now).toISOString()
        yield* store.touchKey(key.id, at)
        cached.found = { key: { ...key, lastUsedAt: at }, agent }
      }
      const caller: Caller = {
        accountId: key.accountId,
        agentId: key.agentId,
        keyId: key.id,
        permissions: new Set<Permission>(key.permissions),
        via: "key"
      }
      return { caller, key, agent } satisfies AuthenticatedKey
    })

    /** A key and its agent as authentication saw them (from the cache when there), for /me. */
    const describeKey = Effect.fnUntraced(function* (keyId: string) {
      const hash = hashOfKey.get(keyId)
      const cached = hash !== undefined ? cache.get(hash) : undefined
      if (cached !== undefined && cached.until > (yield* Clock.currentTimeMillis) && cached.found.agent !== undefined) return { key: toView(cached.found.key), agent: cached.found.agent }
      const key = yield* getKey(keyId)
      return { key, agent: yield* getAgent(key.agentId) }
    })

    const getAgent = (agentId: string) =>
      Effect.flatMap(store.getAgent(agentId), (agent) =>
        agent ? Effect.succeed(agent) : Effect.fail(new NotFound({ message: `agent ${agentId} not found`, resource: "agent", id: agentId }))
      )

    /**
     * The agents among `ids` that exist, by id: one store read per 1,000 ids (reputations of many
     * sellers at once; the leaderboard's every agent stays under a statement's parameter limit).
     */
    const agentsById = (agentIds: ReadonlyArray<string>) => {
      const unique = [...new Set(agentIds)]
      const chunks = Array.from({ length: Math.ceil(unique.length / 1_000) }, (_, i) => unique.slice(i * 1_000, (i + 1) * 1_000))
      return Effect.map(Effect.forEach(chunks, store.getAgents), (found) => new Map(found.flat().map((a) => [a.id, a] as const)))
    }

    const getAccount = (accountId: string) =>
      Effect.flatMap(store.getAccount(accountId), (a) =>
        a ? Effect.succeed(toAccount(a)) : Effect.fail(new NotFound({ message: `account ${accountId} not found`, resource: "account", id: accountId }))
      )

    const getKey = (keyId: string) =>
      Effect.flatMap(store.getKey(keyId), (k) =>
        k ? Effect.succeed(toView(k)) : Effect.fail(new NotFound({ message: `key ${keyId} not found`, resource: "key", id: keyId }))
      )

    return {
      signUp,
      signIn,
      signOut,
      sessionAccount,
      startSession,
      createAgent,
      listAgents: store.listAgents,
      ownedAgent,
      createKey,
      listKeys,
      revokeKey,
      authenticate,
      describeKey,
      getAgent,
      agentsById,
      getAccount,
      getKey,
      setAccountPlan: store.setAccountPlan
    } as const
  })
}) {
  static readonly layer = Layer.effect(Keys, Keys.make)
}

const DUMMY_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
