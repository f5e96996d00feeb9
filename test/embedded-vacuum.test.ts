// The embedded store's vacuum pass (PGlite has no autovacuum): hot rows rewritten over and over
// leave dead versions; with EMBEDDED_VACUUM_SECONDS=1 the running store vacuums that table on its
// own and the dead rows fall to none; with 0 no pass runs. Real time (no TestClock): the pass is a
// background fiber on the wall clock, as in production.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { EmbeddedStorageLive, vacuumPass } from "../src/layers/storage/embedded.js"
import { AppConfig } from "../src/services/AppConfig.js"

const storage = (embeddedVacuumSeconds: number) =>
  EmbeddedStorageLive.pipe(Layer.provideMerge(AppConfig.test({ storage: "embedded", dataDir: "memory://", embeddedVacuumSeconds })))

/** The table's statistics as of now (the session flushes them on request). */
const stats = (table: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT pg_stat_force_next_flush()`
    const [row] = yield* sql<{ dead: number; vacuums: number }>`
      SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums FROM pg_stat_user_tables WHERE relname = ${table}`
    return row
  })

/** 400 wallet balances rewritten `rounds` times, as purchases rewrite hot balance rows. */
const churn = (rounds: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO ledger_balances (account, balance) SELECT 'wallet:agt_vacuum' || i, 0 FROM generate_series(1, 400) i ON CONFLICT (account) DO NOTHING`
    for (let i = 0; i < rounds; i++) yield* sql`UPDATE ledger_balances SET balance = balance + 1 WHERE account LIKE 'wallet:agt_vacuum%'`
  })

const wallSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

describe("embedded store vacuum pass", () => {
  it("with EMBEDDED_VACUUM_SECONDS=1 the store vacuums a churned table on its own: its dead rows fall to none", async () => {
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* churn(5)
          const before = yield* stats("ledger_balances")
          // Then wait (up to 20 s) for the background pass to have vacuumed it.
          let after = before
          for (let i = 0; i < 80 && after.vacuums === before.vacuums; i++) {
            yield* wallSleep(250)
            after = yield* stats("ledger_balances")
          }
          return { before, after }
        }).pipe(Effect.provide(storage(1)))
      )
    )
    expect(result.before.dead, "dead row versions left by the updates").toBeGreaterThan(50)
    expect(result.after.vacuums, "vacuumed by the pass").toBeGreaterThan(result.before.vacuums)
    expect(result.after.dead).toBe(0)
  }, 60_000)

  it("a pass vacuums only tables past the threshold and reports them; EMBEDDED_VACUUM_SECONDS=0 runs none", async () => {
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* churn(5)
          const before = yield* stats("ledger_balances")
          yield* wallSleep(2_500)
          const untouched = yield* stats("ledger_balances")
          const done = yield* vacuumPass
          const again = yield* vacuumPass
          return { before, untouched, done, again, after: yield* stats("ledger_balances") }
        }).pipe(Effect.provide(storage(0)))
      )
    )
    // No background pass with 0: the dead rows stay until a pass runs.
    expect(result.untouched.vacuums).toBe(result.before.vacuums)
    expect(result.untouched.dead).toBeGreaterThan(50)
    expect(result.done.find((t) => t.table === "ledger_balances")).toMatchObject({ action: "vacuum" })
    expect(result.after.dead).toBe(0)
    // Nothing left to do: a second pass right after touches no table.
    expect(result.again.filter((t) => t.action === "vacuum")).toEqual([])
  }, 60_000)
})
