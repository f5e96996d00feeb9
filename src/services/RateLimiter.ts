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

/** A bucket of failures and the windows it is limited in. */
export interface FailureCheck {
  readonly bucket: string
  readonly windows: ReadonlyArray<WindowSpec>
}

/**
 * Sign-in throttling (docs/keys.md): per e-mail and client address, 5 failures in 15 minutes, then
 * 20 in a day (the wait grows from ≤ 15 min to ≤ 24 h); per client address, 30 failures in 15
 * minutes whatever the e-mail. The owner signing in from another address is not held back, and an
 * unknown e-mail is throttled exactly like a known one, so the answers never tell which exist.
 */
export const signInChecks = (emailHash: string, address: string): ReadonlyArray<FailureCheck> => [
  {
    bucket: `signin:${emailHash}:${address}`,
    windows: [
      { name: "15 minutes", limit: 5, seconds: 900 },
      { name: "day", limit: 20, seconds: 86_400 }
    ]
  },
  { bucket: `signin-address:${address}`, windows: [{ name: "15 minutes", limit: 30, seconds: 900 }] }
]

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
    const frame = (nowMs: number) => frameOf(nowMs, windows)
    const frameOf = (nowMs: number, specs: ReadonlyArray<WindowSpec>) =>
      specs.map((w) => {
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

    /**
     * Anonymous writes (docs/keys.md): sign-ups, knowledge checkouts and checkouts started from a
     * dashboard session, counted together per client address.
     */
    const anonymousWindows: ReadonlyArray<WindowSpec> = [
      { name: "minute", limit: config.anonymousWritesPerMinute, seconds: 60 },
      { name: "day", limit: config.anonymousWritesPerDay, seconds: 86_400 }
    ]

    /** Spends one request of `bucket`'s budget, or fails with 429 naming the exhausted window. */
    const take = (bucket: string) => takeIn(bucket, windows)

    /** One anonymous write from `address`, or 429. */
    const takeAnonymous = (address: string) => takeIn(`anon:${address}`, anonymousWindows)

    const takeIn = (bucket: string, specs: ReadonlyArray<WindowSpec>) =>
      Effect.gen(function* () {
        const framed = frameOf(yield* Clock.currentTimeMillis, specs)
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

    /**
     * Failure throttling (sign-in guessing): refuses with 429 while any window of any bucket already
     * holds its limit of failures, before the attempt does any work; Retry-After is the longest wait.
     */
    const failuresAllowed = (checks: ReadonlyArray<FailureCheck>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        let blocked: { readonly window: WindowSpec; readonly resetSeconds: number } | undefined
        for (const check of checks) {
          const framed = frameOf(now, check.windows)
          const counts = yield* store.peek(check.bucket, framed)
          framed.forEach((w, i) => {
            if (counts[i] >= w.limit && (!blocked || w.resetSeconds > blocked.resetSeconds)) blocked = { window: w, resetSeconds: w.resetSeconds }
          })
        }
        if (blocked) {
          return yield* Effect.fail(
            new RateLimited({
              message: `too many failed attempts: at most ${blocked.window.limit} per ${blocked.window.name}; retry in ${blocked.resetSeconds}s`,
              retryAfterSeconds: blocked.resetSeconds,
              limit: blocked.window.limit,
              window: blocked.window.name
            })
          )
        }
      })

    /** Counts one failure in every window of every bucket. */
    const recordFailure = (checks: ReadonlyArray<FailureCheck>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const check of checks) {
          // A window already full stays full; `take` adds only where every window has room, so
          // each window is counted on its own.
          for (const w of frameOf(now, check.windows)) yield* store.take(check.bucket, [w])
        }
      })

    return { take, takeAnonymous, peek, windows, failuresAllowed, recordFailure } as const
  })
}) {
  static readonly layer = Layer.effect(RateLimiter, RateLimiter.make)
}

/** IETF RateLimit / RateLimit-Policy header values for a standing. */
export const rateLimitHeaders = (s: ReadonlyArray<WindowStanding>): Record<string, string> => ({
  "ratelimit-policy": s.map((w) => `"${w.name}";q=${w.limit};w=${w.windowSeconds}`).join(", "),
  ratelimit: s.map((w) => `"${w.name}";r=${w.remaining};t=${w.resetSeconds}`).join(", ")
})
