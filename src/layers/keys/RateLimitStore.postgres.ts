// Postgres store for rate-limit counters: one upsert of every window per reservation. Hot (every
// authenticated request, docs/performance.md): rows are mapped by hand, pinned by a test.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { RateLimitStore, type Reservation } from "../../services/keys/RateLimitStore.js"
import { nonEmpty, orUnavailable } from "../storage/postgres/PgDb.js"

/** Each window's count after the upsert, from its RETURNING rows (in the windows' order). */
export const countsOf = (
  windows: ReadonlyArray<{ readonly name: string }>,
  rows: ReadonlyArray<{ readonly windowName: string; readonly count: number }>
): ReadonlyArray<number> => windows.map((w) => rows.find((r) => r.windowName === w.name)?.count ?? 0)

export const PgRateLimitStore = Layer.effect(
  RateLimitStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const peek = (bucket: string, windows: ReadonlyArray<{ readonly name: string; readonly start: number }>) =>
      orUnavailable(
        Effect.forEach(windows, (w) =>
          sql<{ count: number }>`SELECT count FROM rate_limit_counters
            WHERE bucket = ${bucket} AND window_name = ${w.name} AND window_start = ${w.start}`.pipe(
            Effect.map((r) => r[0]?.count ?? 0)
          )
        )
      )
    return RateLimitStore.of({
      // One statement adds n to every window; what passes the tightest limit is given back in a
      // second (a refused request does not count). Between the two, a concurrent request of the
      // same key may see the window fuller than it ends up: it is refused early, never late.
      reserve: (bucket, windows, n) =>
        orUnavailable(
          sql<{ windowName: string; count: number }>`INSERT INTO rate_limit_counters
              ${sql.insert(
                nonEmpty(windows.map((w) => ({ bucket, windowName: w.name, windowStart: w.start, count: n })))
              )}
              ON CONFLICT (bucket, window_name, window_start)
                DO UPDATE SET count = rate_limit_counters.count + ${n}
              RETURNING window_name, count`
        ).pipe(
          Effect.flatMap((rows): Effect.Effect<Reservation, StorageUnavailable> => {
            const counts = countsOf(windows, rows)
            const excess = Math.max(0, ...counts.map((count, i) => count - windows[i].limit))
            if (excess === 0) return Effect.succeed({ granted: n, counts })
            const back = Math.min(n, excess)
            return orUnavailable(
              Effect.forEach(
                windows,
                (w) =>
                  sql`UPDATE rate_limit_counters SET count = count - ${back}
                    WHERE bucket = ${bucket} AND window_name = ${w.name} AND window_start = ${w.start}`,
                { discard: true }
              )
            ).pipe(Effect.as({ granted: n - back, counts: counts.map((count) => count - back) }))
          })
        ),
      peek,
      release: (bucket, windows, n) =>
        orUnavailable(
          Effect.forEach(
            windows,
            (w) =>
              sql`UPDATE rate_limit_counters SET count = GREATEST(count - ${n}, 0)
                WHERE bucket = ${bucket} AND window_name = ${w.name} AND window_start = ${w.start}`,
            { discard: true }
          )
        )
    })
  })
)
