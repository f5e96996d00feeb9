// Rate-limit rules that need no storage: the windows a budget is counted in, the sign-in
// throttling buckets, a window's standing and the RateLimit headers that report it.

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

/** A window framed at `nowMs`: the second it started at and the seconds until it resets. */
export const frameOf = (nowMs: number, specs: ReadonlyArray<WindowSpec>) =>
  specs.map((w) => {
    const start = Math.floor(nowMs / 1000 / w.seconds) * w.seconds
    return { ...w, start, resetSeconds: Math.max(1, start + w.seconds - Math.floor(nowMs / 1000)) }
  })

/**
 * Seconds until a sliding window of failures is under its limit again (0: it is now). `current`
 * and `previous` are the failures of the framed window and of the one before it. The window that
 * reaches back `seconds` from now still covers a share (1 − elapsed / seconds) of the previous
 * one; its failures count as whole failures until that share of them has slid out:
 * `current + ceil(previous × (1 − elapsed / seconds))`. So failures spread over a window's edge
 * are held to the limit too. A window full on its own stays refused to its end and then until
 * enough of it has slid out of the next (no new failures assumed): at most 1 + (1 − (limit − 1) /
 * limit) windows.
 */
/** The previous frame's failures the sliding window reaching back from `nowMs` still counts. */
export const previousInside = (
  w: { readonly start: number; readonly seconds: number },
  previous: number,
  nowMs: number
): number => Math.ceil(previous * (1 - (nowMs / 1000 - w.start) / w.seconds) - 1e-9)

export const slidingWait = (
  w: { readonly start: number; readonly seconds: number; readonly limit: number },
  current: number,
  previous: number,
  nowMs: number
): number => {
  const elapsed = nowMs / 1000 - w.start
  if (current + previousInside(w, previous, nowMs) < w.limit) return 0
  if (current >= w.limit) {
    // To this window's end, then into the next until ceil(current × (1 − t / seconds)) ≤ limit − 1.
    const toEnd = w.seconds - elapsed
    return Math.max(1, Math.ceil(toEnd + w.seconds * (1 - (w.limit - 1) / current)))
  }
  // ceil(previous × (1 − t / seconds)) ≤ limit − current − 1  ⇔  t ≥ seconds × (1 − (limit − current − 1) / previous)
  const t = w.seconds * (1 - (w.limit - current - 1) / previous)
  return Math.max(1, Math.ceil(t - elapsed))
}

/** The standing of framed windows holding `counts`. */
export const standingOf = (
  framed: ReturnType<typeof frameOf>,
  counts: ReadonlyArray<number>
): ReadonlyArray<WindowStanding> =>
  framed.map((w, i) => ({
    name: w.name,
    limit: w.limit,
    used: Math.min(counts[i], w.limit),
    remaining: Math.max(0, w.limit - counts[i]),
    resetSeconds: w.resetSeconds,
    windowSeconds: w.seconds
  }))

/** IETF RateLimit / RateLimit-Policy header values for a standing. */
export const rateLimitHeaders = (s: ReadonlyArray<WindowStanding>): Record<string, string> => ({
  "ratelimit-policy": s.map((w) => `"${w.name}";q=${w.limit};w=${w.windowSeconds}`).join(", "),
  ratelimit: s.map((w) => `"${w.name}";r=${w.remaining};t=${w.resetSeconds}`).join(", ")
})
