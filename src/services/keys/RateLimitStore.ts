// The rate limiter's storage port: request counts in fixed windows.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

/** A window as the store sees it: its name, the second it started at, its length and its limit. */
export interface FramedWindow {
  readonly name: string
  readonly start: number
  readonly seconds: number
  readonly limit: number
}

export interface Reservation {
  readonly granted: number
  readonly counts: ReadonlyArray<number>
}

/**
 * `reserve` grants up to `n` requests at once, as many as every window still has room for
 * (atomically, never past a limit), adds the grant to every window and returns it with the counts
 * after it; a grant of 0 is a refusal.
 */
export interface RateLimitStoreService {
  readonly reserve: (
    bucket: string,
    windows: ReadonlyArray<FramedWindow>,
    n: number
  ) => Effect.Effect<Reservation, StorageUnavailable>
  readonly peek: (
    bucket: string,
    windows: ReadonlyArray<Omit<FramedWindow, "limit">>
  ) => Effect.Effect<ReadonlyArray<number>, StorageUnavailable>
  /** Gives back `n` of a grant to every window (never below 0): an attempt held a slot and did not use it. */
  readonly release: (
    bucket: string,
    windows: ReadonlyArray<Omit<FramedWindow, "limit">>,
    n: number
  ) => Effect.Effect<void, StorageUnavailable>
}

export class RateLimitStore extends Context.Service<RateLimitStore, RateLimitStoreService>()(
  "agent-commerce/RateLimitStore"
) {}
