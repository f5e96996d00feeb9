// Per-key request budgets in fixed windows (spec §8: 60 per minute and 1000 per day).
import { traced } from "../platform/Tracing.js"
import { Cause, Clock, Context, Deferred, Effect, Exit, Layer, Option, References } from "effect"
import { RateLimited, type StorageUnavailable } from "../../schema/platform/errors.js"
import { AppConfig } from "../platform/AppConfig.js"
import { type FramedWindow, RateLimitStore } from "./RateLimitStore.js"
import {
  type FailureCheck,
  frameOf,
  previousInside,
  slidingWait,
  standingOf as standing,
  type WindowSpec,
  type WindowStanding
} from "./rateLimitPolicy.js"

/** A reservation is at most this many requests… */
export const RESERVE_MAX = 100
/** …and at most this fraction of what the tightest window has left… */
export const RESERVE_DIVISOR = 10
/** …and about this many milliseconds of the key's recent traffic in this process. */
export const RESERVE_WINDOW_MS = 20
/** Buckets with a reservation held per process (past it, reservations are dropped: under-admission only). */
const RESERVED_MAX = 100_000

export interface RateLimiterService {
  /** Spends one request of `bucket`'s budget, or fails with 429 naming the exhausted window. */
  readonly take: (bucket: string) => Effect.Effect<ReadonlyArray<WindowStanding>, RateLimited | StorageUnavailable>
  /** One anonymous write from `address`, or 429. */
  readonly takeAnonymous: (
    address: string
  ) => Effect.Effect<ReadonlyArray<WindowStanding>, RateLimited | StorageUnavailable>
  /** The standing of `bucket` (what this process reserved and has not used yet does not count as used). */
  readonly peek: (bucket: string) => Effect.Effect<ReadonlyArray<WindowStanding>, StorageUnavailable>
  /** The windows of a key's budget. */
  readonly windows: ReadonlyArray<WindowSpec>
  /**
   * Runs `attempt` (a sign-in) under failure throttling: a slot is taken in every window of every
   * bucket first, atomically, so attempts sent at once cannot all pass one check before any failure
   * is counted; 429 (nothing run) when a window has none left. The slot stays taken when the attempt
   * fails as `isFailure` says (or is interrupted); it is given back when it succeeds or fails otherwise.
   */
  readonly throttleFailures: <A, E, R>(
    checks: ReadonlyArray<FailureCheck>,
    attempt: Effect.Effect<A, E, R>,
    isFailure: (e: E) => boolean
  ) => Effect.Effect<A, E | RateLimited | StorageUnavailable, R>
}

/** What this process holds of a bucket's reservation in the current windows. */
interface Held {
  frame: string
  tokens: number
  counts: ReadonlyArray<number>
  at: number
  served: number
  exhausted: boolean
}

const make = Effect.gen(function* () {
  const store = yield* RateLimitStore
  const config = yield* AppConfig
  const windows: ReadonlyArray<WindowSpec> = [
    { name: "minute", limit: config.rateLimitPerMinute, seconds: 60 },
    { name: "day", limit: config.rateLimitPerDay, seconds: 86_400 }
  ]
  const frame = (nowMs: number) => frameOf(nowMs, windows)

  /**
   * Anonymous writes (docs/keys.md): sign-ups, knowledge checkouts and checkouts started from a
   * dashboard session, counted together per client address.
   */
  const anonymousWindows: ReadonlyArray<WindowSpec> = [
    { name: "minute", limit: config.anonymousWritesPerMinute, seconds: 60 },
    { name: "day", limit: config.anonymousWritesPerDay, seconds: 86_400 }
  ]

  /**
   * Requests reserved ahead by this process (docs/keys.md "Rate limits across processes"): a busy
   * key's budget is taken from the shared store several requests at a time — about
   * RESERVE_WINDOW_MS of its recent traffic, at most 1/RESERVE_DIVISOR of what the tightest window
   * has left, at most RESERVE_MAX — so most of its requests write nothing. A reservation never passes a limit; near the limit, and for a
   * key that is not busy, it is one request, so counting is exact there. What a process reserved
   * and did not use before its window ends is lost: a client spread over processes may be
   * refused a little early, never late. One reservation per bucket at a time (the others wait).
   */
  const reserved = new Map<string, Held>()
  const inflight = new Map<string, Deferred.Deferred<void>>()
  /** Requests of a key waiting for its reservation in flight: demand the next one covers. */
  const waiting = new Map<string, number>()
  const reserveAhead = (
    bucket: string,
    framed: ReadonlyArray<{ readonly limit: number }>,
    mine: Held | undefined,
    wall: number
  ) => {
    if (mine === undefined) return 1
    const remaining = Math.min(...framed.map((w, i) => w.limit - mine.counts[i]))
    const perSecond = (mine.served * 1000) / Math.max(1, wall - mine.at)
    const demand = Math.max(Math.floor((perSecond * RESERVE_WINDOW_MS) / 1000), (waiting.get(bucket) ?? 0) + 1)
    return Math.max(1, Math.min(RESERVE_MAX, Math.floor(remaining / RESERVE_DIVISOR), demand))
  }

  /**
   * The windows of `specs` framed at `wall`, and their key. A frame depends only on the second
   * (frameOf), so the last one made is kept: a busy second frames its windows once, not per request.
   */
  let lastFrame:
    { specs: ReadonlyArray<WindowSpec>; second: number; framed: ReturnType<typeof frameOf>; key: string } | undefined
  const framing = (wall: number, specs: ReadonlyArray<WindowSpec>) => {
    const second = Math.floor(wall / 1000)
    if (lastFrame === undefined || lastFrame.second !== second || lastFrame.specs !== specs) {
      const framed = frameOf(wall, specs)
      lastFrame = { specs, second, framed, key: framed.map((w) => w.start).join(",") }
    }
    return lastFrame
  }

  /**
   * Spends one request of `bucket`'s budget, or fails with 429 naming the exhausted window. Most
   * requests of a busy key spend a token this process already holds: that is answered at once, from
   * the fiber's clock, without a step of the run loop (while tracing is off: with it on, every take
   * runs in its span).
   */
  const take = (bucket: string): Effect.Effect<ReadonlyArray<WindowStanding>, RateLimited | StorageUnavailable> =>
    Effect.withFiber((fiber) => {
      if (!fiber.getRef(References.TracerEnabled)) {
        const { framed, key } = framing(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe(), windows)
        const held = reserved.get(bucket)
        if (held !== undefined && held.frame === key && held.tokens > 0) return Effect.succeed(spend(held, framed))
      }
      return takeIn(bucket, windows, true)
    })

  /** Spends one of the tokens `held` for the windows `framed`: the standing after it. */
  const spend = (held: Held, framed: ReturnType<typeof frameOf>) => {
    held.tokens--
    held.served++
    return standing(
      framed,
      held.counts.map((c) => c - held.tokens)
    )
  }

  /** One anonymous write from `address`, or 429 (counted one at a time: they are writes anyway). */
  const takeAnonymous = (address: string) => takeIn(`anon:${address}`, anonymousWindows, false)

  const takeIn: (
    bucket: string,
    specs: ReadonlyArray<WindowSpec>,
    ahead: boolean
  ) => Effect.Effect<ReadonlyArray<WindowStanding>, RateLimited | StorageUnavailable> = Effect.fnUntraced(function* (
    bucket: string,
    specs: ReadonlyArray<WindowSpec>,
    ahead: boolean
  ) {
    // One clock read frames the windows and dates the reservation (its traffic rate).
    const wall = yield* Clock.currentTimeMillis
    const { framed, key: frameKey } = framing(wall, specs)
    const mine = ahead ? reserved.get(bucket) : undefined
    const current = mine !== undefined && mine.frame === frameKey ? mine : undefined
    if (current !== undefined && current.tokens > 0) return spend(current, framed)
    // Refused once in these windows: counts only grow until a window turns, so a flood of
    // over-limit requests is refused here without a write.
    if (current !== undefined && current.exhausted) return yield* refuse(standing(framed, current.counts))
    if (ahead) {
      const pending = inflight.get(bucket)
      if (pending !== undefined) {
        // Another request of this key is reserving: use what it brings back.
        waiting.set(bucket, (waiting.get(bucket) ?? 0) + 1)
        yield* Deferred.await(pending).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              const n = (waiting.get(bucket) ?? 1) - 1
              if (n <= 0) waiting.delete(bucket)
              else waiting.set(bucket, n)
            })
          )
        )
        return yield* takeIn(bucket, specs, ahead)
      }
    }
    const n = ahead ? reserveAhead(bucket, framed, current, wall) : 1
    // Registered before the first yield, so no other request of this key starts a reservation too.
    const done = ahead ? Deferred.makeUnsafe<void>() : undefined
    if (done !== undefined) inflight.set(bucket, done)
    const result = yield* store.reserve(bucket, framed, n).pipe(
      // Recorded before the waiters are woken, so they find the tokens.
      Effect.tap((r) =>
        Effect.sync(() => {
          if (!ahead) return
          if (reserved.size >= RESERVED_MAX && !reserved.has(bucket)) reserved.clear()
          // Tokens still held for these windows are kept (added to), never dropped.
          const held = reserved.get(bucket)
          const keep = held !== undefined && held.frame === frameKey ? held.tokens : 0
          reserved.set(bucket, {
            frame: frameKey,
            tokens: keep + Math.max(0, r.granted - 1),
            counts: r.counts,
            at: wall,
            served: r.granted > 0 ? 1 : 0,
            exhausted: r.granted === 0 && keep === 0
          })
        })
      ),
      Effect.ensuring(
        Effect.suspend(() => {
          if (done === undefined) return Effect.void
          inflight.delete(bucket)
          return Deferred.succeed(done, undefined)
        })
      )
    )
    const held = ahead ? reserved.get(bucket) : undefined
    if (result.granted === 0 && held !== undefined && held.tokens > 0) {
      // Nothing more to reserve, but this process still holds some: spend one.
      held.tokens--
      return standing(
        framed,
        result.counts.map((c) => c - held.tokens)
      )
    }
    const s = standing(
      framed,
      result.counts.map((c) => c - (held?.tokens ?? 0))
    )
    if (result.granted === 0) return yield* refuse(s)
    return s
  }, traced("RateLimiter.take"))

  /** 429 naming the exhausted window that resets last. */
  const refuse = (s: ReadonlyArray<WindowStanding>) => {
    const exhausted = s.filter((w) => w.remaining === 0).sort((a, b) => b.resetSeconds - a.resetSeconds)[0] ?? s[0]
    return Effect.fail(
      Object.assign(
        new RateLimited({
          message:
            `rate limit exceeded: ${exhausted.limit} requests per ${exhausted.name}; ` +
            `retry in ${exhausted.resetSeconds}s`,
          retryAfterSeconds: exhausted.resetSeconds,
          limit: exhausted.limit,
          window: exhausted.name
        }),
        { standing: s }
      )
    )
  }

  /** The standing of `bucket` (what this process reserved and has not used yet does not count as used). */
  const peek = Effect.fnUntraced(function* (bucket: string) {
    const framed = frame(yield* Clock.currentTimeMillis)
    const mine = reserved.get(bucket)
    const unused = mine !== undefined && mine.frame === framed.map((w) => w.start).join(",") ? mine.tokens : 0
    return standing(
      framed,
      (yield* store.peek(bucket, framed)).map((c) => c - unused)
    )
  })

  /**
   * Failure throttling (sign-in guessing). Windows slide (slidingWait): the previous frame's failures
   * count too, as many as the window reaching back from now still covers, so the current frame may
   * hold `limit − previousInside` of them. Every attempt reserves one there before it runs (the
   * store's reserve is atomic: parallel guesses each get their own count, never past the limit) and
   * gives it back unless it failed: check and count are one step (docs/keys.md).
   */
  const throttleFailures = Effect.fnUntraced(function* <A, E, R>(
    checks: ReadonlyArray<FailureCheck>,
    attempt: Effect.Effect<A, E, R>,
    isFailure: (e: E) => boolean
  ): Effect.fn.Return<A, E | RateLimited | StorageUnavailable, R> {
    const now = yield* Clock.currentTimeMillis
    const held: Array<{ readonly bucket: string; readonly windows: ReadonlyArray<FramedWindow> }> = []
    const giveBack = Effect.suspend(() =>
      Effect.forEach(held, (h) => store.release(h.bucket, h.windows, 1), { discard: true })
    )
    let blocked: { readonly window: WindowSpec; readonly resetSeconds: number } | undefined
    for (const check of checks) {
      const framed = frameOf(now, check.windows)
      const previous = yield* store.peek(
        check.bucket,
        framed.map((w) => ({ ...w, start: w.start - w.seconds }))
      )
      const windows = framed.map((w, i) => ({
        name: w.name,
        start: w.start,
        seconds: w.seconds,
        limit: Math.max(0, w.limit - previousInside(w, previous[i], now))
      }))
      const reservation = yield* store.reserve(check.bucket, windows, 1)
      if (reservation.granted > 0) {
        held.push({ bucket: check.bucket, windows })
        continue
      }
      framed.forEach((w, i) => {
        if (reservation.counts[i] < windows[i].limit) return
        const wait = Math.max(1, slidingWait(w, reservation.counts[i], previous[i], now))
        if (!blocked || wait > blocked.resetSeconds) blocked = { window: w, resetSeconds: wait }
      })
      blocked ??= { window: framed[0], resetSeconds: 1 }
      break
    }
    if (blocked) {
      yield* giveBack
      return yield* Effect.fail(
        new RateLimited({
          message:
            `too many failed attempts: at most ${blocked.window.limit} per ${blocked.window.name}; ` +
            `retry in ${blocked.resetSeconds}s`,
          retryAfterSeconds: blocked.resetSeconds,
          limit: blocked.window.limit,
          window: blocked.window.name
        })
      )
    }
    return yield* attempt.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) || Option.exists(Cause.findErrorOption(exit.cause), (e) => !isFailure(e))
          ? Effect.ignore(giveBack)
          : Effect.void
      )
    )
  })

  return RateLimiter.of({ take, takeAnonymous, peek, windows, throttleFailures })
})

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterService>()("agent-commerce/RateLimiter") {
  static readonly make = make
  static readonly layer = Layer.effect(RateLimiter, make)
}
