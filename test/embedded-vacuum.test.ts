// The embedded store's vacuum pass (PGlite has no autovacuum): hot rows rewritten over and over
// leave dead versions; with EMBEDDED_VACUUM_SECONDS=1 the running store vacuums that table on its
// own and the dead rows fall to none; with 0 no pass runs. The pass is a background fiber sleeping
// on the Effect clock: the TestClock moves it, and the test waits for the pass's own log line.
import { it } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { vacuumPass } from "../src/layers/storage/embedded.js"
import { EmbeddedStorageLive } from "../src/layers/stores.js"
import { AppConfig } from "../src/services/platform/AppConfig.js"
import { EmbeddedFromImage } from "./fixtures/db.js"

/** A fresh in-memory store, started from the worker's migrated image (initdb and the migrations ran once). */
const storage = (embeddedVacuumSeconds: number) =>
  EmbeddedStorageLive.pipe(
    Layer.provideMerge(AppConfig.test({ storage: "embedded", dataDir: "memory://", embeddedVacuumSeconds })),
    Layer.provide(EmbeddedFromImage)
  )

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
    for (let i = 0; i < rounds; i++)
      yield* sql`UPDATE ledger_balances SET balance = balance + 1 WHERE account LIKE 'wallet:agt_vacuum%'`
  })

/** A logger that resolves `logged` at the background pass's line ("embedded store vacuum pass"). */
const passLog = () => {
  let seen = false
  let resolve = () => {}
  const logged = new Promise<void>((r) => (resolve = r))
  const layer = Layer.mergeAll(
    Logger.layer([
      Logger.make(({ message }) => {
        if ((Array.isArray(message) ? message[0] : message) === "embedded store vacuum pass") {
          seen = true
          resolve()
        }
      })
    ]),
    Layer.succeed(References.MinimumLogLevel, "Debug")
  )
  return { layer, logged, seen: () => seen }
}

describe("embedded store vacuum pass", () => {
  it.effect(
    "with EMBEDDED_VACUUM_SECONDS=1 the store vacuums a churned table on its own: its dead rows fall to none",
    () => {
      const log = passLog()
      return Effect.gen(function* () {
        yield* churn(5)
        const before = yield* stats("ledger_balances")
        expect(before.dead, "dead row versions left by the updates").toBeGreaterThan(50)
        // One interval on the clock: the background pass runs; its log line says it is done.
        yield* TestClock.adjust("1 second")
        yield* Effect.promise(() => log.logged)
        const after = yield* stats("ledger_balances")
        expect(after.vacuums, "vacuumed by the pass").toBeGreaterThan(before.vacuums)
        expect(after.dead).toBe(0)
      }).pipe(Effect.provide(Layer.provideMerge(storage(1), log.layer)), Effect.scoped)
    },
    60_000
  )

  it.effect(
    "a pass vacuums only tables past the threshold and reports them; EMBEDDED_VACUUM_SECONDS=0 runs none",
    () => {
      const log = passLog()
      return Effect.gen(function* () {
        yield* churn(5)
        const before = yield* stats("ledger_balances")
        // A day on the clock: with 0 no background pass is scheduled, so nothing is vacuumed.
        yield* TestClock.adjust("1 day")
        const untouched = yield* stats("ledger_balances")
        expect(untouched.vacuums).toBe(before.vacuums)
        expect(untouched.dead).toBeGreaterThan(50)
        const done = yield* vacuumPass
        const again = yield* vacuumPass
        const after = yield* stats("ledger_balances")
        expect(log.seen(), "no background pass logged").toBe(false)
        expect(done.find((t) => t.table === "ledger_balances")).toMatchObject({ action: "vacuum" })
        expect(after.dead).toBe(0)
        // Nothing left to do: a second pass right after touches no table.
        expect(again.filter((t) => t.action === "vacuum")).toEqual([])
      }).pipe(Effect.provide(Layer.provideMerge(storage(0), log.layer)), Effect.scoped)
    },
    60_000
  )
})
