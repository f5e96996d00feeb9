// A read-mostly value kept in process for a while: the public catalogue reads (templates, plans,
// knowledge catalogue and base) change only when an operator re-seeds, and were read from storage
// on every public call. Only successes are kept (a storage failure is never served again).
import { Clock, Effect, Option, Ref } from "effect"

/** How long a public catalogue read is reused; the discovery document revalidates on the same period. */
export const PUBLIC_READ_TTL_MS = 60_000

/** `effect`, answered from memory for `ttlMs` after each success. */
export const cachedSuccess = <A, E, R>(effect: Effect.Effect<A, E, R>, ttlMs: number = PUBLIC_READ_TTL_MS) =>
  Effect.map(
    Ref.make(Option.none<{ readonly at: number; readonly value: A }>()),
    Effect.fnUntraced(function* (ref) {
      const now = yield* Clock.currentTimeMillis
      const held = yield* Ref.get(ref)
      if (Option.isSome(held) && now - held.value.at < ttlMs) return held.value.value
      const value = yield* effect
      yield* Ref.set(ref, Option.some({ at: now, value }))
      return value
    })
  )
