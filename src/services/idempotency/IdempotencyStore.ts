// The idempotency records' storage port: one row per (scope, key), held by one attempt (`owner`)
// while it runs. Adapters: src/layers/idempotency/IdempotencyStore.memory.ts and .postgres.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface StoredResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export type BeginResult =
  | { readonly _tag: "Started" }
  | { readonly _tag: "InProgress"; readonly requestHash: string }
  | { readonly _tag: "Done"; readonly requestHash: string; readonly response: StoredResponse }

export interface IdempotencyStoreService {
  /**
   * Claims the key for a new attempt (atomically): Started when the key is new, expired, or an
   * earlier attempt's lease ran out; otherwise the existing row's state.
   */
  readonly begin: (input: {
    readonly scope: string
    readonly key: string
    readonly requestHash: string
    readonly owner: string
    readonly nowMs: number
    readonly leaseUntilMs: number
    readonly expiresAtMs: number
  }) => Effect.Effect<BeginResult, StorageUnavailable>
  /** Extends the lease of a record this attempt still holds (no-op when another attempt took it over). */
  readonly renew: (
    scope: string,
    key: string,
    owner: string,
    leaseUntilMs: number
  ) => Effect.Effect<void, StorageUnavailable>
  /** Stores the answer, when this attempt still holds the record. */
  readonly complete: (
    scope: string,
    key: string,
    owner: string,
    response: StoredResponse
  ) => Effect.Effect<void, StorageUnavailable>
  /**
   * Forgets an attempt whose outcome must not be replayed (5xx, 429, 401), when this attempt still
   * holds it: the client may retry.
   */
  readonly release: (scope: string, key: string, owner: string) => Effect.Effect<void, StorageUnavailable>
}

export class IdempotencyStore extends Context.Service<IdempotencyStore, IdempotencyStoreService>()(
  "agent-commerce/IdempotencyStore"
) {}
