// Idempotency: the first response to a mutating request with an Idempotency-Key is stored and
// replayed for every retry with the same key and the same request; a different request → 422.
import { Clock, Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { type BeginResult, IdempotencyStore, type IdempotencyStoreService } from "./IdempotencyStore.js"

/** What the service's `begin` answers: a Started attempt carries the owner token its record was claimed with. */
export type Claim =
  { readonly _tag: "Started"; readonly owner: string } | Exclude<BeginResult, { readonly _tag: "Started" }>

/** How long a finished key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000
/**
 * How long an unfinished attempt holds its key without renewing it. The attempt renews it every
 * IDEMPOTENCY_RENEW_MS while it runs, so only an attempt that stopped (its process died) or can
 * no longer reach the database (which is also why its release failed) loses it: a retry with the
 * same key then runs within this time instead of meeting 409 (docs/idempotency.md). Shorter than
 * the 10 s a retry waits for an attempt in progress.
 */
export const IDEMPOTENCY_LEASE_MS = 5_000
export const IDEMPOTENCY_RENEW_MS = 1_500

export interface IdempotencyService {
  /** Claims the key for this attempt (a fresh owner token), or tells what an earlier attempt left. */
  readonly begin: (scope: string, key: string, requestHash: string) => Effect.Effect<Claim, StorageUnavailable>
  /** Keeps the attempt's lease alive while `effect` runs (a renewal that fails is tried again at the next beat). */
  readonly hold: <A, E, R>(
    scope: string,
    key: string,
    owner: string,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  readonly complete: IdempotencyStoreService["complete"]
  readonly release: IdempotencyStoreService["release"]
}

const make = Effect.gen(function* () {
  const store = yield* IdempotencyStore
  const begin = (scope: string, key: string, requestHash: string): Effect.Effect<Claim, StorageUnavailable> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const owner = randomBytes(9).toString("base64url")
      const input = {
        scope,
        key,
        requestHash,
        owner,
        nowMs: now,
        leaseUntilMs: now + IDEMPOTENCY_LEASE_MS,
        expiresAtMs: now + IDEMPOTENCY_TTL_MS
      }
      return Effect.map(store.begin(input), (r): Claim => (r._tag === "Started" ? { _tag: "Started", owner } : r))
    })
  const hold: IdempotencyService["hold"] = (scope, key, owner, effect) => {
    const beat = Effect.sleep(IDEMPOTENCY_RENEW_MS).pipe(
      Effect.andThen(Clock.currentTimeMillis),
      Effect.flatMap((now) => Effect.ignore(store.renew(scope, key, owner, now + IDEMPOTENCY_LEASE_MS))),
      Effect.forever
    )
    return Effect.scoped(Effect.andThen(Effect.forkScoped(beat), effect))
  }
  return Idempotency.of({ begin, hold, complete: store.complete, release: store.release })
})

export class Idempotency extends Context.Service<Idempotency, IdempotencyService>()("agent-commerce/Idempotency") {
  static readonly layer = Layer.effect(Idempotency, make)
}
