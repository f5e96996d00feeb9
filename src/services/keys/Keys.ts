// Keys: accounts and dashboard sessions (sign-up, sign-in with a scrypt-checked password, session
// tokens), agents and their API keys; authenticates bearer keys through a per-process cache.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import {
  Account,
  type AccountRecord,
  Agent,
  type ApiKeyRecord,
  ApiKeyView,
  expandGrants,
  KEY_PREFIX,
  type Permission,
  type PermissionGrant
} from "../../schema/keys/keys.js"
import {
  type Conflict,
  InvalidInput,
  NotFound,
  type StorageUnavailable,
  Unauthorized
} from "../../schema/platform/errors.js"
import type { Caller } from "./Caller.js"
import { DUMMY_HASH, hashPassword, sha256, verifyPassword } from "./credentials.js"
import { KeysStore, type KeyWithAgent } from "./KeysStore.js"
import { Ids, Transactor } from "../platform/Db.js"

/** Only touch last-used when it is older than this, so a busy key does not write on every call. */
const TOUCH_EVERY_MS = 60_000

const SESSION_TTL_MS = 7 * 24 * 3600 * 1000

/**
 * Authentication reads keys from a per-process cache (docs/keys.md): an entry lives at most this
 * long, so a revocation another process made reaches this one within it even when its
 * notification is lost; a revocation made here, or notified, evicts the key at once.
 */
export const KEY_CACHE_TTL_MS = 1_000
/** Cached keys per process (the oldest entry makes room). */
const KEY_CACHE_MAX = 10_000

interface CachedKey {
  found: KeyWithAgent
  readonly until: number
  /** The caller the key authenticates as, made on the entry's first use (its permission set included). */
  caller?: Caller
}

/**
 * The authentication cache: secret hash → the key and its agent, with the key id's hash kept
 * beside it so a revocation can evict the entry.
 */
class KeyCache {
  private readonly byHash = new Map<string, CachedKey>()
  private readonly hashOfKey = new Map<string, string>()

  get(hash: string): CachedKey | undefined {
    return this.byHash.get(hash)
  }

  remember(hash: string, entry: CachedKey): void {
    this.byHash.delete(hash)
    if (this.byHash.size >= KEY_CACHE_MAX) {
      const oldest = this.byHash.keys().next().value
      if (oldest !== undefined) {
        const evicted = this.byHash.get(oldest)
        this.byHash.delete(oldest)
        if (evicted) this.hashOfKey.delete(evicted.found.key.id)
      }
    }
    this.byHash.set(hash, entry)
    this.hashOfKey.set(entry.found.key.id, hash)
  }

  forget(keyId: string): void {
    const hash = this.hashOfKey.get(keyId)
    if (hash !== undefined) this.byHash.delete(hash)
    this.hashOfKey.delete(keyId)
  }

  /** The entry of a key id, whatever its age. */
  ofKey(keyId: string): CachedKey | undefined {
    const hash = this.hashOfKey.get(keyId)
    return hash !== undefined ? this.byHash.get(hash) : undefined
  }
}

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

const toAccount = (a: AccountRecord) =>
  Account.make({ id: a.id, email: a.email, name: a.name, planId: a.planId, createdAt: a.createdAt })

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

export interface AuthenticatedKey {
  readonly caller: Caller
  readonly key: ApiKeyRecord
  readonly agent: Agent
}

/** A dashboard session's bearer token and when it expires. */
export interface StartedSession {
  readonly token: string
  readonly expiresAt: string
}

export interface KeysService {
  readonly signUp: (input: {
    email: string
    password: string
    name: string
  }) => Effect.Effect<Account, InvalidInput | Conflict | StorageUnavailable>
  readonly signIn: (input: {
    email: string
    password: string
  }) => Effect.Effect<StartedSession & { readonly account: Account }, Unauthorized | StorageUnavailable>
  readonly signOut: (token: string) => Effect.Effect<void, StorageUnavailable>
  readonly sessionAccount: (token: string) => Effect.Effect<Account, Unauthorized | StorageUnavailable>
  readonly startSession: (accountId: string) => Effect.Effect<StartedSession, StorageUnavailable>
  readonly createAgent: (
    accountId: string,
    input: { name: string; organization?: string | null }
  ) => Effect.Effect<Agent, StorageUnavailable>
  readonly listAgents: (accountId: string) => Effect.Effect<ReadonlyArray<Agent>, StorageUnavailable>
  /** The agent when the account owns it; 404 otherwise. */
  readonly ownedAgent: (accountId: string, agentId: string) => Effect.Effect<Agent, NotFound | StorageUnavailable>
  readonly createKey: (
    accountId: string,
    agentId: string,
    input: { name: string; permissions: ReadonlyArray<PermissionGrant>; expiresAt?: string | null }
  ) => Effect.Effect<{ key: ApiKeyView; secret: string }, NotFound | InvalidInput | StorageUnavailable>
  readonly listKeys: (accountId: string) => Effect.Effect<Array<ApiKeyView>, StorageUnavailable>
  readonly revokeKey: (accountId: string, keyId: string) => Effect.Effect<ApiKeyView, NotFound | StorageUnavailable>
  /** Resolves a bearer secret into the caller; 401 for unknown, revoked or expired keys. */
  readonly authenticate: (secret: string) => Effect.Effect<AuthenticatedKey, Unauthorized | StorageUnavailable>
  /** A key and its agent as authentication saw them (from the cache when there), for /me. */
  readonly describeKey: (
    keyId: string
  ) => Effect.Effect<{ key: ApiKeyView; agent: Agent }, NotFound | StorageUnavailable>
  readonly getAgent: (agentId: string) => Effect.Effect<Agent, NotFound | StorageUnavailable>
  /** The agents among `ids` that exist, by id. */
  readonly agentsById: (agentIds: ReadonlyArray<string>) => Effect.Effect<Map<string, Agent>, StorageUnavailable>
  readonly getAccount: (accountId: string) => Effect.Effect<Account, NotFound | StorageUnavailable>
  readonly getKey: (keyId: string) => Effect.Effect<ApiKeyView, NotFound | StorageUnavailable>
  readonly setAccountPlan: (id: string, planId: string | null) => Effect.Effect<void, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* KeysStore
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const cache = new KeyCache()
  // Revocations made by other processes (Postgres), as they commit.
  yield* store.watchKeyChanges((keyId) => Effect.sync(() => cache.forget(keyId)))

  const signUp = Effect.fnUntraced(function* (input: { email: string; password: string; name: string }) {
    if (input.password.length < 10) {
      return yield* Effect.fail(
        new InvalidInput({ message: "password must have at least 10 characters", field: "password" })
      )
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

  const getAccount = (accountId: string) =>
    Effect.flatMap(store.getAccount(accountId), (a) =>
      a
        ? Effect.succeed(toAccount(a))
        : Effect.fail(new NotFound({ message: `account ${accountId} not found`, resource: "account", id: accountId }))
    )

  const agentNotFound = (agentId: string) =>
    new NotFound({ message: `agent ${agentId} not found`, resource: "agent", id: agentId })
  const keyNotFound = (keyId: string) => new NotFound({ message: `key ${keyId} not found`, resource: "key", id: keyId })

  const ownedAgent = (accountId: string, agentId: string) =>
    Effect.flatMap(store.getAgent(agentId), (agent) =>
      agent && agent.accountId === accountId ? Effect.succeed(agent) : Effect.fail(agentNotFound(agentId))
    )

  const createAgent = Effect.fnUntraced(function* (
    accountId: string,
    input: { name: string; organization?: string | null }
  ) {
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

  const createKey = Effect.fnUntraced(function* (
    accountId: string,
    agentId: string,
    input: { name: string; permissions: ReadonlyArray<PermissionGrant>; expiresAt?: string | null }
  ) {
    yield* ownedAgent(accountId, agentId)
    const now = yield* Clock.currentTimeMillis
    if (input.expiresAt != null) {
      const at = Date.parse(input.expiresAt)
      if (!Number.isFinite(at) || at <= now) {
        return yield* Effect.fail(
          new InvalidInput({ message: "expiresAt must be a future ISO 8601 time", field: "expiresAt" })
        )
      }
    }
    const permissions = expandGrants(input.permissions)
    if (permissions.length === 0) {
      return yield* Effect.fail(
        new InvalidInput({ message: "a key needs at least one permission", field: "permissions" })
      )
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

  const revokeKeyOnce = Effect.fnUntraced(function* (accountId: string, keyId: string) {
    const key = yield* store.getKey(keyId)
    if (!key || key.accountId !== accountId) return yield* Effect.fail(keyNotFound(keyId))
    if (key.revokedAt === null) yield* store.revokeKey(keyId, yield* nowIso)
    cache.forget(keyId)
    return toView({ ...key, revokedAt: key.revokedAt ?? (yield* nowIso) })
  }, atomically)

  const revokeKey = (accountId: string, keyId: string) =>
    Effect.ensuring(
      revokeKeyOnce(accountId, keyId),
      Effect.sync(() => cache.forget(keyId))
    ).pipe(traced("Keys.revokeKey"))

  /** Why a cached key is refused at `now`, or undefined when it is good. */
  const refusal = (cached: CachedKey, now: number): Unauthorized | undefined => {
    const { key, agent } = cached.found
    if (key.revokedAt !== null) return new Unauthorized({ message: "this API key was revoked" })
    if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) {
      return new Unauthorized({ message: "this API key expired" })
    }
    if (!agent) return new Unauthorized({ message: "the key's agent no longer exists" })
    return undefined
  }
  /** Whether the key's last use is old enough to be written (at most once a minute per key). */
  const touchDue = (cached: CachedKey, now: number) => {
    const { lastUsedAt } = cached.found.key
    return lastUsedAt === null || now - Date.parse(lastUsedAt) > TOUCH_EVERY_MS
  }
  const authenticated = (cached: CachedKey): AuthenticatedKey => {
    const { key, agent } = cached.found
    // Made once per cache entry, not per request: the key's permissions do not change while cached.
    cached.caller ??= {
      accountId: key.accountId,
      agentId: key.agentId,
      keyId: key.id,
      permissions: new Set<Permission>(key.permissions),
      via: "key"
    } satisfies Caller
    // `refusal` has checked that the agent exists.
    return { caller: cached.caller, key, agent: agent! }
  }

  /**
   * A live cache entry with no last use to write answers at once, from the fiber's clock, without a
   * step of the run loop: nearly every request of a key in use. Otherwise the store is asked.
   */
  const authenticate = (secret: string): Effect.Effect<AuthenticatedKey, Unauthorized | StorageUnavailable> => {
    if (!secret.startsWith(KEY_PREFIX) || secret.length < KEY_PREFIX.length + 40 || secret.length > 200) {
      return Effect.fail(new Unauthorized({ message: "malformed API key" }))
    }
    const hash = sha256(secret)
    return Effect.withFiber((fiber) => {
      // One clock read serves the cache's lifetime and the key's expiry.
      const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
      const cached = cache.get(hash)
      if (cached === undefined || cached.until <= now) return authenticateFromStore(hash, now)
      const refused = refusal(cached, now)
      if (refused !== undefined) return Effect.fail(refused)
      return touchDue(cached, now) ? authenticateFromStore(hash, now) : Effect.succeed(authenticated(cached))
    })
  }

  const authenticateFromStore = Effect.fnUntraced(function* (hash: string, now: number) {
    let cached = cache.get(hash)
    if (cached === undefined || cached.until <= now) {
      // Unknown keys are not cached: a key created a moment ago works at once.
      const found = yield* store.findKeyWithAgent(hash)
      if (!found) return yield* Effect.fail(new Unauthorized({ message: "unknown API key" }))
      cached = { found, until: now + KEY_CACHE_TTL_MS }
      cache.remember(hash, cached)
    }
    const refused = refusal(cached, now)
    if (refused !== undefined) return yield* Effect.fail(refused)
    const answer = authenticated(cached)
    if (touchDue(cached, now)) {
      const at = new Date(now).toISOString()
      yield* store.touchKey(answer.key.id, at)
      cached.found = { key: { ...answer.key, lastUsedAt: at }, agent: answer.agent }
    }
    return answer
  })

  /**
   * The views of cached key records, made once per record: a record is replaced, never changed, when
   * its last use is written, so a view never outlives what it shows.
   */
  const views = new WeakMap<ApiKeyRecord, ApiKeyView>()
  const viewOf = (record: ApiKeyRecord) => {
    let view = views.get(record)
    if (view === undefined) views.set(record, (view = toView(record)))
    return view
  }

  const describeKey = Effect.fnUntraced(function* (keyId: string) {
    const cached = cache.ofKey(keyId)
    if (cached !== undefined && cached.until > (yield* Clock.currentTimeMillis) && cached.found.agent !== undefined) {
      return { key: viewOf(cached.found.key), agent: cached.found.agent }
    }
    const key = yield* getKey(keyId)
    return { key, agent: yield* getAgent(key.agentId) }
  })

  const getAgent = (agentId: string) =>
    Effect.flatMap(store.getAgent(agentId), (agent) =>
      agent ? Effect.succeed(agent) : Effect.fail(agentNotFound(agentId))
    )

  /**
   * The agents among `ids` that exist, by id: one store read per 1,000 ids (reputations of many
   * sellers at once; the leaderboard's every agent stays under a statement's parameter limit).
   */
  const agentsById = (agentIds: ReadonlyArray<string>) => {
    const unique = [...new Set(agentIds)]
    const chunks = Array.from({ length: Math.ceil(unique.length / 1_000) }, (_, i) =>
      unique.slice(i * 1_000, (i + 1) * 1_000)
    )
    return Effect.map(
      Effect.forEach(chunks, store.getAgents),
      (found) => new Map(found.flat().map((a) => [a.id, a] as const))
    )
  }

  const getKey = (keyId: string) =>
    Effect.flatMap(store.getKey(keyId), (k) => (k ? Effect.succeed(toView(k)) : Effect.fail(keyNotFound(keyId))))

  return Keys.of({
    signUp,
    signIn,
    signOut: (token) => store.deleteSession(sha256(token)),
    sessionAccount,
    startSession,
    getAccount,
    setAccountPlan: store.setAccountPlan,
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
    getKey
  })
})

export class Keys extends Context.Service<Keys, KeysService>()("agent-commerce/Keys") {
  static readonly make = make
  static readonly layer = Layer.effect(Keys, make)
}
