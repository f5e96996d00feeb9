// The keys domain's storage port: accounts, dashboard sessions, agents and their API keys.
import { Context, type Effect, type Scope } from "effect"
import type { AccountRecord, Agent, ApiKeyRecord, SessionRecord } from "../../schema/keys/keys.js"
import type { Conflict, StorageUnavailable } from "../../schema/platform/errors.js"

/** A key with its agent (undefined when the agent is gone). */
export interface KeyWithAgent {
  readonly key: ApiKeyRecord
  readonly agent: Agent | undefined
}

export interface KeysStoreService {
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
  /** The key with its agent, in one read: the authentication path. */
  readonly findKeyWithAgent: (secretHash: string) => Effect.Effect<KeyWithAgent | undefined, StorageUnavailable>
  readonly getKey: (id: string) => Effect.Effect<ApiKeyRecord | undefined, StorageUnavailable>
  readonly listKeys: (accountId: string) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageUnavailable>
  readonly revokeKey: (id: string, at: string) => Effect.Effect<void, StorageUnavailable>
  readonly touchKey: (id: string, at: string) => Effect.Effect<void, StorageUnavailable>
  /**
   * Calls `onChange(keyId)` for every key revoked by another process, for as long as the scope
   * lives (Postgres: LISTEN on the channel revokeKey notifies at commit; one process: nothing).
   */
  readonly watchKeyChanges: (
    onChange: (keyId: string) => Effect.Effect<void>
  ) => Effect.Effect<void, never, Scope.Scope>
}

export class KeysStore extends Context.Service<KeysStore, KeysStoreService>()("agent-commerce/KeysStore") {}
