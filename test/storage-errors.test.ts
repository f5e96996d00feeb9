// Which storage failures a client is told to retry (503 StorageUnavailable) and which are bugs
// (500): by SQLSTATE and by cause, and at the unit-of-work boundary, where a connection that died
// mid-transaction makes the ROLLBACK fail and the SQL layer reports that as a defect.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { PgTypes } from "@effect/sql-pg"
import { StorageUnavailable, Conflict } from "../src/schema/platform/errors.js"
import {
  isRetryableSqlError,
  isRetryableSqlState,
  orUnavailable,
  pgClientLayer,
  PgTransactor,
  unitOfWorkOutcome
} from "../src/layers/storage/postgres/PgDb.js"
import { Transactor } from "../src/services/platform/Db.js"
import { adminDatabaseUrl, postgresSkipReason, requireAdminDatabaseUrl } from "./fixtures/db.js"

const props = (cause: unknown) => ({ cause, message: "test", operation: "query" })
const withCode = (code: string) => new SqlError.SqlError({ reason: new SqlError.UnknownError(props({ code })) })

describe("SQLSTATE → retryable (503) or a bug (500)", () => {
  const table: ReadonlyArray<readonly [string, boolean, string]> = [
    ["08000", true, "connection exception"],
    ["08003", true, "connection does not exist"],
    ["08006", true, "connection failure"],
    ["25006", true, "read-only transaction (a standby being promoted)"],
    ["25P03", true, "idle-in-transaction timeout"],
    ["25P02", false, "in failed transaction: an earlier error was swallowed"],
    ["40001", true, "serialisation failure"],
    ["40P01", true, "deadlock"],
    ["40002", false, "transaction integrity constraint violation"],
    ["53300", true, "too many connections"],
    ["53100", true, "disk full"],
    ["55P03", true, "lock not available"],
    ["57P01", true, "admin shutdown"],
    ["57P02", true, "crash shutdown"],
    ["57P03", true, "cannot connect now (starting up)"],
    ["57014", true, "statement cancelled"],
    ["23505", false, "unique violation"],
    ["23503", false, "foreign key violation"],
    ["42601", false, "syntax error"],
    ["42P01", false, "undefined table"],
    ["22P02", false, "invalid text representation"],
    ["XX000", false, "internal error"]
  ]
  for (const [code, retryable, what] of table) {
    it(`${code} (${what}) → ${retryable ? "503" : "500"}`, () => {
      expect(isRetryableSqlState(code)).toBe(retryable)
      expect(isRetryableSqlError(withCode(code))).toBe(retryable)
    })
  }

  it("by cause when there is no SQLSTATE: a refused or reset socket, a connect timeout → 503; a codec error → 500", () => {
    expect(
      isRetryableSqlError(
        new SqlError.SqlError({
          reason: new SqlError.ConnectionError(props(Object.assign(new Error("refused"), { code: "ECONNREFUSED" })))
        })
      )
    ).toBe(true)
    expect(
      isRetryableSqlError(
        new SqlError.SqlError({
          reason: new SqlError.UnknownError(props(Object.assign(new Error("reset"), { code: "ECONNRESET" })))
        })
      )
    ).toBe(true)
    expect(
      isRetryableSqlError(
        new SqlError.SqlError({ reason: new SqlError.ConnectionError(props(new Error("connect timeout"))) })
      )
    ).toBe(true)
    expect(
      isRetryableSqlError(
        new SqlError.SqlError({
          reason: new SqlError.UnknownError(props(new PgTypes.CodecError({ message: "int8 out of range" })))
        })
      )
    ).toBe(false)
    expect(
      isRetryableSqlError(new SqlError.SqlError({ reason: new SqlError.SqlSyntaxError(props(new Error("syntax"))) }))
    ).toBe(false)
  })

  it.effect("a store's statement: retryable → typed StorageUnavailable, anything else → a defect", () =>
    Effect.gen(function* () {
      const down = yield* Effect.exit(orUnavailable(Effect.fail(withCode("57P01"))))
      expect(
        Exit.isFailure(down) &&
          Cause.findErrorOption(down.cause).pipe((o) => o._tag === "Some" && o.value instanceof StorageUnavailable)
      ).toBe(true)
      const bug = yield* Effect.exit(orUnavailable(Effect.fail(withCode("42601"))))
      expect(Exit.isFailure(bug) && Cause.hasDies(bug.cause)).toBe(true)
    })
  )
})

describe("the unit-of-work boundary", () => {
  const connectionLost = new SqlError.SqlError({
    reason: new SqlError.ConnectionError(props(new Error("Connection terminated")))
  })
  const failedWith = (cause: Cause.Cause<unknown>) => {
    const found = Cause.findErrorOption(cause)
    return found._tag === "Some" ? found.value : undefined
  }

  it("the statement failed (503) and the ROLLBACK died with the connection: StorageUnavailable, not a 500", () => {
    const cause = Cause.combine(
      Cause.fail(new StorageUnavailable({ message: "storage is unavailable, retry later" })),
      Cause.die(connectionLost)
    )
    const out = unitOfWorkOutcome(cause)
    expect(Cause.hasDies(out)).toBe(false)
    expect(failedWith(out)).toBeInstanceOf(StorageUnavailable)
  })

  it("a rollback defect alone (the COMMIT's cleanup failed) is StorageUnavailable", () => {
    expect(failedWith(unitOfWorkOutcome(Cause.die(connectionLost)))).toBeInstanceOf(StorageUnavailable)
  })

  it("the body's own failure, turned into a defect by the failed ROLLBACK, is StorageUnavailable too: the transaction was lost", () => {
    const refusal = new Conflict({ message: "already decided" })
    expect(failedWith(unitOfWorkOutcome(Cause.combine(Cause.die(refusal), Cause.die(connectionLost))))).toBeInstanceOf(
      StorageUnavailable
    )
    expect(failedWith(unitOfWorkOutcome(Cause.combine(Cause.fail(refusal), Cause.die(connectionLost))))).toBeInstanceOf(
      StorageUnavailable
    )
  })

  it("a typed refusal alone, or a tagged defect thrown on purpose, is left as it is", () => {
    const refusal = new Conflict({ message: "already decided" })
    expect(failedWith(unitOfWorkOutcome(Cause.fail(refusal)))).toBe(refusal)
    expect(Cause.hasDies(unitOfWorkOutcome(Cause.die(refusal)))).toBe(true)
  })

  it("a bug stays a bug: a defect that is not a retryable driver error, or a non-retryable SQLSTATE", () => {
    const bug = new Error("boom")
    expect(Cause.hasDies(unitOfWorkOutcome(Cause.combine(Cause.die(bug), Cause.die(connectionLost))))).toBe(true)
    expect(Cause.hasDies(unitOfWorkOutcome(Cause.fail(withCode("23505"))))).toBe(true)
  })
})

describe.skipIf(postgresSkipReason !== undefined)("on a real PostgreSQL", () => {
  const layer = () => {
    const client = pgClientLayer({ url: Redacted.make(adminDatabaseUrl ?? requireAdminDatabaseUrl()) }, 2)
    return Layer.merge(PgTransactor.pipe(Layer.provide(client)), client)
  }

  it.live(
    "the backend killed inside a transaction: the raw SQL layer dies (rollback failed), the transactor answers 503",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transactor
        const killOwnBackend = sql`SELECT pg_terminate_backend(pg_backend_pid())`.pipe(Effect.andThen(sql`SELECT 1`))
        // What the SQL layer itself does: the dead connection's ROLLBACK is a defect.
        const raw = yield* Effect.exit(sql.withTransaction(killOwnBackend))
        expect(
          Exit.isFailure(raw) && Cause.hasDies(raw.cause),
          "the scenario: rollback failure reported as a defect"
        ).toBe(true)
        // Through the unit of work: a typed, retryable failure.
        const mapped = yield* Effect.exit(tx.atomically(orUnavailable(killOwnBackend)))
        expect(Exit.isFailure(mapped)).toBe(true)
        if (Exit.isFailure(mapped)) {
          expect(Cause.hasDies(mapped.cause), String(Cause.pretty(mapped.cause))).toBe(false)
          expect(
            Cause.findErrorOption(mapped.cause).pipe((o) => (o._tag === "Some" ? o.value : undefined))
          ).toBeInstanceOf(StorageUnavailable)
        }
        // The pool recovers: the next unit of work runs.
        expect(yield* tx.atomically(orUnavailable(sql<{ one: number }>`SELECT 1 AS one`))).toEqual([{ one: 1 }])
      }).pipe(Effect.provide(layer()))
  )

  it.live("a read-only transaction (what a standby answers, 25006) is a 503", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tx = yield* Transactor
      const write = sql`SET TRANSACTION READ ONLY`.pipe(Effect.andThen(sql`CREATE TEMP TABLE ro_probe (x int)`))
      const exit = yield* Effect.exit(tx.atomically(orUnavailable(write)))
      expect(
        Exit.isFailure(exit) &&
          Cause.findErrorOption(exit.cause).pipe((o) => o._tag === "Some" && o.value instanceof StorageUnavailable)
      ).toBe(true)
    }).pipe(Effect.provide(layer()))
  )
})
