// Units of work on a Postgres server: one that the server aborts to break a deadlock is run again
// from the start (PgTransactor), so both sides of the deadlock complete and each wrote once.
// Postgres only: the memory engine and the embedded store serialise units of work, so they cannot
// deadlock.
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Layer, Option, Redacted, Ref } from "effect"
import { SqlClient } from "effect/sql"
import { atomically } from "../fixtures/atomically.js"
import { PgStorageLive } from "../../src/layers/stores.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { freshDatabase, postgresCase } from "../fixtures/db.js"

describe.skipIf(postgresCase.skip !== undefined)(
  `units of work [postgres]${postgresCase.skip ? ` — ${postgresCase.skip}` : ""}`,
  () => {
    const pg = Layer.unwrap(
      Effect.map(freshDatabase, ({ url }) =>
        PgStorageLive.pipe(
          Layer.provideMerge(AppConfig.test({ storage: "postgres", databaseUrl: Option.some(Redacted.make(url)) }))
        )
      )
    )
    layer(pg, { timeout: "60 seconds" })((it) => {
      it.effect("two units of work that deadlock: the one Postgres aborts is run again, and both complete once", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE deadlock_probe (id int PRIMARY KEY, n int NOT NULL)`
          yield* sql`INSERT INTO deadlock_probe VALUES (1, 0), (2, 0)`
          const attempts = yield* Ref.make(0)
          const holds = { 1: yield* Deferred.make<void>(), 2: yield* Deferred.make<void>() }
          // Each takes one row, waits until the other holds its row (told, not timed), then asks for
          // the other's: a deadlock every time. The attempt run again finds both told and goes on.
          const unit = (first: 1 | 2, second: 1 | 2) =>
            atomically(
              Effect.gen(function* () {
                yield* Ref.update(attempts, (n) => n + 1)
                yield* sql`UPDATE deadlock_probe SET n = n + 1 WHERE id = ${first}`
                yield* Deferred.succeed(holds[first], undefined)
                yield* Deferred.await(holds[second])
                yield* sql`UPDATE deadlock_probe SET n = n + 1 WHERE id = ${second}`
              })
            )
          yield* Effect.all([unit(1, 2), unit(2, 1)], { concurrency: 2 })
          const rows = yield* sql<{ id: number; n: number }>`SELECT id, n FROM deadlock_probe ORDER BY id`
          expect(rows).toEqual([
            { id: 1, n: 2 },
            { id: 2, n: 2 }
          ])
          // Two first attempts, at least one of them aborted by the deadlock and run again. Usually that
          // is 3 in all; under load Postgres may abort a second time (CI once saw 4), and the promise —
          // each unit's writes made exactly once — is the rows above, not the count.
          expect(yield* Ref.get(attempts)).toBeGreaterThanOrEqual(3)
        })
      )
    })
  }
)
