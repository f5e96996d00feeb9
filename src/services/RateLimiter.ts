// Per-key request budgets in fixed windows (spec §8: 60 per minute and 1000 per day).
import { traced } from "./Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { RateLimited, type StorageUnavailable } from "../schema/errors.js"
import { AppConfig } from "./AppConfig.js"

export interface WindowSpec {
  readonly name: string
  readonly limit: number
  readonly seconds: number
}

export interface WindowStanding {
  readonly name: string
  readonly limit: number
  readonly used: number
  readonly remaining: number
  /** Seconds until this window resets. */
  readonly resetSeconds: number
  readonly windowSeconds: number
}

/**
 * Storage port: counts in fixed windows. `take` adds one to every window only if every window is
 * still under its limit (all or nothing, atomically); it returns the counts after the attempt.
 */
export class RateLimitStore extends Context.Service<
  RateLimitStore,
  {
    readonly take: (
      bucket: string,
      windows: ReadonlyArray<{ readonly name: string; readonly start: number; readonly limit: number }>
    ) => Effect.Effect<{ readonly allowed: boolean; readonly counts: ReadonlyArray<number> }, StorageUnavailable>
    readonly peek: (
      bucket: string,
      windows: ReadonlyArray<{ readonly name: string; readonly start: number }>
    ) => Effect.Effect<ReadonlyArray<number>, StorageUnavailable>
  }
>()("RateLimitStore") {}

export class RateLimiter extends Context.Service<RateLimiter>()("RateLimiter", {
  make: Effect.gen(function* () {
    const store = yield* RateLimitStore
    const config = yield* AppConfig
    const windows: ReadonlyArray<WindowSpec> = [
      { name: "minute", limit: config.rateLimitPerMinute, seconds: 60 },
      { name: "day", limit: config.rateLimitPerDay, seconds: 86_400 }
    ]
    const frame = (nowMs: number) =>
      windows.map((w) => {
        const start = Math.floor(nowMs / 1000 / w.seconds) * w.seconds
        return { ...w, start, resetSeconds: Math.max(1, start + w.seconds - Math.floor(nowMs / 1000)) }
      })
    const standing = (framed: ReturnType<typeof frame>, counts: ReadonlyArray<number>): ReadonlyArray<WindowStanding> =>
      framed.map((w, i) => ({
        name: w.name,
        limit: w.limit,
        used: Math.min(counts[i], w.limit),
        remaining: Math.max(0, w.limit - counts[i]),
        resetSeconds: w.resetSeconds,
        windowSeconds: w.seconds
      }))

    /** Spends one request of `bucket`'s budget, or fails with 429 naming the exhausted window. */
    const take = (bucket: string) =>
      Effect.gen(function* () {
        const framed = frame(yield* Clock.currentTimeMillis)
        const result = yield* store.take(bucket, framed)
        const s = standing(framed, result.counts)
        if (!result.allowed) {
          const exhausted = s.filter((w) => w.remaining === 0).sort((a, b) => b.resetSeconds - a.resetSeconds)[0] ?? s[0]
          return yield* Effect.fail(
            Object.assign(
              new RateLimited({
                message: `rate limit exceeded: ${exhausted.limit} requests per ${exhausted.name}; retry in ${exhausted.resetSeconds}s`,
                retryAfterSeconds: exhausted.resetSeconds,
                limit: exhausted.limit,
                window: exhausted.name
              }),
              { standing: s }
            )
          )
        }
        return s
      }).pipe(traced("RateLimiter.take"))

    const peek = (bucket: string) =>
      Effect.gen(function* () {
        const framed = frame(yield* Clock.currentTimeMillis)
        return standing(framed, yield* store.peek(bucket, framed))
      })

    return { take, peek, windows } as const
  })
}) {
  static readonly layer = Layer.effect(RateLimiter, RateLimiter.make)
}

/** IETF RateLimit / RateLimit-Policy header values for a standing. */
export const rateLimitHeaders = (s: ReadonlyArray<WindowStanding>): Record<string, string> => ({
  "ratelimit-policy": s.map((w) => `"${w.name}";q=${w.limit};w=${w.windowSeconds}`).join(", "),
  ratelimit: s.map((w) => `"${w.name}";r=${w.remaining};t=${w.resetSeconds}`).join(", ")
})
