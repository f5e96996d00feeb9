// Idempotency: the first response to a mutating request with an Idempotency-Key is stored and
// replayed for every retry with the same key and the same request; a different request → 422.
import { Clock, Context, Effect, Layer } from "effect"
import type { StorageUnavailable } from "../schema/errors.js"

export interface StoredResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export type BeginResult =
  | { readonly _tag: "Started" }
  | { readonly _tag: "InProgress"; readonly requestHash: string }
  | { readonly _tag: "Done"; readonly requestHash: string; readonly response: StoredResponse }

/** Storage port: one row per (scope, key). */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    /**
     * Claims the key for a new request (atomically): Started when the key is new, expired, or an
     * earlier attempt's lease ran out; otherwise the existing row's state.
     */
    readonly begin: (input: {
      readonly scope: string
      readonly key: string
      readonly requestHash: string
      readonly nowMs: number
      readonly leaseUntilMs: number
      readonly expiresAtMs: number
    }) => Effect.Effect<BeginResult, StorageUnavailable>
    readonly complete: (scope: string, key: string, response: StoredResponse) => Effect.Effect<void, StorageUnavailable>
    /** Forgets an attempt whose outcome must not be replayed (5xx, 429, 401): the client may retry. */
    readonly release: (scope: string, key: string) => Effect.Effect<void, StorageUnavailable>
  }
>()("IdempotencyStore") {}

/** The Idempotency-Key of the request being served, for services that also dedupe at the domain level. */
export const currentIdempotencyKey = Context.Reference<string | undefined>("app/currentIdempotencyKey", { defaultValue: () => undefined })
/** Who the current request's Idempotency-Key belongs to (a hash of its credential, or of its address when anonymous). */
export const currentIdempotencyScope = Context.Reference<string>("app/currentIdempotencyScope", { defaultValue: () => "" })

/** How long a finished key is remembered, and how long an unfinished attempt holds it. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000
export const IDEMPOTENCY_LEASE_MS = 60 * 1000

export class Idempotency extends Context.Service<Idempotency>()("Idempotency", {
  make: Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const begin = (scope: string, key: string, requestHash: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        store.begin({ scope, key, requestHash, nowMs: now, leaseUntilMs: now + IDEMPOTENCY_LEASE_MS, expiresAtMs: now + IDEMPOTENCY_TTL_MS })
      )
    return { begin, complete: store.complete, release: store.release } as const
  })
}) {
  static readonly layer = Layer.effect(Idempotency, Idempotency.make)
}
