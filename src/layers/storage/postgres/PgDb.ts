// Postgres storage engine: the client (with number parsing for int8), migrations, the Transactor.
import { Migrator, SqlClient } from "effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Layer, Option, Redacted, String as Str } from "effect"
import pg from "pg"
import { StorageUnavailable } from "../../../schema/errors.js"
import { Transactor } from "../../../services/Db.js"
import { AppConfig } from "../../../services/AppConfig.js"
import { migrations } from "./migrations/index.js"

const INT8 = 20
const NUMERIC = 1700

/**
 * int8 (bigint, count(*), sum of int8) and numeric come back from node-postgres as strings. Money
 * here is integer cents far below 2^53, so they are parsed to numbers once, at the driver, and
 * a value outside the safe range is a defect rather than a silent rounding.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8 || oid === NUMERIC) {
      return (value: string) => {
        const n = Number(value)
        if (oid === INT8 && !Number.isSafeInteger(n)) throw new Error(`int8 ${value} is outside the safe integer range`)
        return n
      }
    }
    return pg.types.getTypeParser(oid, format ?? "text")
  }) as pg.CustomTypesConfig["getTypeParser"]
}

/** SQLSTATE classes that mean "the database is not reachable right now" rather than "bad query". */
const isUnavailable = (error: SqlError): boolean => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  if (typeof code !== "string") return true // socket errors, pool timeouts
  if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith("08") || code.startsWith("57") || code.startsWith("53")
  return true // ECONNREFUSED, ECONNRESET, …
}

/** Maps a driver error: unavailable → typed 503, anything else (a bug) → defect. */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError> | StorageUnavailable, R> =>
  Effect.catchIf(
    effect,
    (e): e is SqlError => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "SqlError",
    (e) =>
      isUnavailable(e)
        ? Effect.fail(new StorageUnavailable({ message: "storage is unavailable, retry later" }))
        : Effect.die(e)
  ) as Effect.Effect<A, Exclude<E, SqlError> | StorageUnavailable, R>

export const isUniqueViolation = (cause: Cause.Cause<unknown>): boolean =>
  Cause.failures(cause).pipe((chunk) =>
    [...chunk].some((e) => (e as { cause?: { code?: unknown } })?.cause?.code === "23505")
  )

export const PgClientLive = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const url = Option.getOrThrow(config.databaseUrl)
    return PgClient.layer({
      url,
      types,
      maxConnections: 20,
      idleTimeout: "30 seconds",
      connectTimeout: "5 seconds",
      transformQueryNames: Str.camelToSnake,
      transformResultNames: Str.snakeToCamel,
      // jsonb documents keep their own field names (templates use snake_case on the wire).
      transformJson: false,
      applicationName: "agent-commerce"
    })
  })
)

const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations) })

/** Key of the advisory lock that serialises migrations across processes (any constant will do). */
const MIGRATION_LOCK = 7_246_001

/**
 * Applies pending migrations, one process at a time: a session advisory lock, held on a reserved
 * connection for the whole run, makes a second process starting at the same moment wait, then find
 * everything applied. (The migrator creates its bookkeeping table outside its own table lock, and
 * two processes racing there failed with a duplicate pg_type row.)
 */
const migrateExclusively = Effect.scoped(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lockHolder = yield* sql.reserve
    yield* lockHolder.executeRaw(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`, [])
    return yield* runMigrations.pipe(Effect.ensuring(Effect.ignore(lockHolder.executeRaw(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`, []))))
  })
)

export const MigrationsLive = Layer.effectDiscard(
  migrateExclusively.pipe(
    Effect.tap((applied) =>
      applied.length > 0 ? Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`) : Effect.void
    ),
    Effect.orDie
  )
)

/**
 * A unit of work is one transaction; a nested `atomically` joins the one already open (no
 * savepoint), exactly as the memory engine joins its outer journal, so the two engines agree on
 * what a nested failure undoes (nothing by itself: the outer unit decides) and a nested call costs
 * no round trip.
 */
export const PgTransactor = Layer.effect(
  Transactor,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    atomically: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageUnavailable, R> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open): Effect.Effect<A, E | StorageUnavailable, R> =>
        open._tag === "Some" ? effect : orUnavailable(sql.withTransaction(effect))
      )
  }))
)

/** For tests and tools: a Postgres URL as a Redacted value. */
export const redactedUrl = (url: string) => Redacted.make(url)

/** timestamptz → ISO string. */
export const iso = (d: Date | string): string => (d instanceof Date ? d.toISOString() : new Date(d).toISOString())
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d))
