// Rate-limit suite, on every storage (docs/keys.md "Rate limits across processes"): a busy key's
// requests are reserved from the shared store several at a time (far fewer writes than requests),
// never past the limit — not under concurrency, not across two limiters sharing one store (two
// processes) — and a key that is not busy is counted one request at a time.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { RateLimiter } from "../../src/services/keys/RateLimiter.js"
import { RateLimitStore } from "../../src/services/keys/RateLimitStore.js"
import { forEachStorage } from "../fixtures/suite.js"

/** A second limiter on the same store: another process's view of the shared counters. */
const otherProcess = Layer.fresh(RateLimiter.layer)

forEachStorage(
  "rate limits",
  (storage) => {
    // Counts the store's reservations (its writes).
    const counted = Layer.effect(
      RateLimitStore,
      Effect.gen(function* () {
        const store = yield* RateLimitStore
        return RateLimitStore.of({
          ...store,
          reserve: (bucket, windows, n) =>
            Effect.tap(store.reserve(bucket, windows, n), () =>
              Effect.sync(() => writes.set(bucket, (writes.get(bucket) ?? 0) + 1))
            )
        })
      })
    )
    return RateLimiter.layer.pipe(Layer.provideMerge(counted), Layer.provideMerge(storage))
  },
  (it) => {
    it.effect(
      "a busy key: 5,000 requests against a limit of 1,000 cost under 100 writes, and exactly 1,000 are admitted",
      () =>
        Effect.gen(function* () {
          const limiter = yield* RateLimiter
          const bucket = `key:busy-${Math.random()}`
          let admitted = 0
          for (let i = 0; i < 5_000; i++) {
            const r = yield* Effect.result(limiter.take(bucket))
            if (r._tag === "Success") admitted++
          }
          expect(admitted).toBe(1_000)
          // Reservations shrink as the window fills (the last ones are of one request), and the
          // 4,000 refusals after it cost one write (the refusal is remembered until the window turns).
          expect(writes.get(bucket)!).toBeLessThan(100)
        })
    )

    it.effect(
      "2,000 concurrent requests against a limit of 1,000: exactly 1,000 admitted; the standing after them is exact",
      () =>
        Effect.gen(function* () {
          const limiter = yield* RateLimiter
          const bucket = `key:burst-${Math.random()}`
          const results = yield* Effect.forEach(
            Array.from({ length: 2_000 }),
            () => Effect.result(limiter.take(bucket)),
            { concurrency: "unbounded" }
          )
          expect(results.filter((r) => r._tag === "Success")).toHaveLength(1_000)
          // One reservation at a time, sized by the requests waiting for it: not one write per request.
          expect(writes.get(bucket)!).toBeLessThan(200)
          const [minute] = yield* limiter.peek(bucket)
          expect(minute).toMatchObject({ used: 1_000, remaining: 0 })
        })
    )

    it.effect("two limiters on one store (two processes), alternating: 1,000 admitted in all, none past it", () =>
      Effect.gen(function* () {
        const a = yield* RateLimiter
        const b = yield* Effect.provide(
          Effect.gen(function* () {
            return yield* RateLimiter
          }),
          otherProcess
        )
        const bucket = `key:shared-${Math.random()}`
        let admitted = 0
        for (let i = 0; i < 1_500; i++) {
          const r = yield* Effect.result((i % 2 === 0 ? a : b).take(bucket))
          if (r._tag === "Success") admitted++
        }
        expect(admitted).toBe(1_000)
      })
    )

    it.effect(
      "with the tracer off, as the server runs: the standing after each request is exact, and a new minute counts from zero",
      () =>
        Effect.gen(function* () {
          const limiter = yield* RateLimiter
          const bucket = `key:untraced-${Math.random()}`
          const remaining: Array<number> = []
          for (let i = 0; i < 500; i++) remaining.push((yield* limiter.take(bucket))[0]!.remaining)
          expect(remaining).toEqual(Array.from({ length: 500 }, (_, i) => 999 - i))
          expect(writes.get(bucket)!).toBeLessThan(50)
          // Tokens this process still holds for this minute are not spent in the next one.
          yield* TestClock.adjust("1 minute")
          const [minute] = yield* limiter.take(bucket)
          expect(minute).toMatchObject({ used: 1, remaining: 999 })
        }).pipe(Effect.withTracerEnabled(false))
    )

    it.effect("a key that is not busy is counted one request at a time (a write each)", () =>
      Effect.gen(function* () {
        const limiter = yield* RateLimiter
        const bucket = `key:calm-${Math.random()}`
        // Requests 100 ms apart on the service's clock (TestClock), far slower than a busy key's:
        // every reservation is of one.
        for (let i = 0; i < 3; i++) {
          yield* limiter.take(bucket)
          yield* TestClock.adjust("100 millis")
        }
        expect(writes.get(bucket)).toBe(3)
        const [minute] = yield* limiter.peek(bucket)
        expect(minute).toMatchObject({ used: 3, remaining: 997 })
      })
    )
  },
  // One window of 1,000 a minute (the day's is larger).
  { rateLimitPerMinute: 1_000, rateLimitPerDay: 1_000_000 }
)

const writes = new Map<string, number>()
