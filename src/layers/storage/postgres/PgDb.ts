// Postgres storage engine: the client (with number decoding for int8 and numeric), migrations, the Transactor.
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { PgClient, PgTypes } from "@effect/sql-pg"
import { Cause, Clock, Effect, Layer, Option, Redacted, Result, String as Str } from "effect"
import { StorageUnavailable } from "../../../schema/errors.js"
import { Transactor } from "../../../services/Db.js"
import { AppConfig } from "../../../services/AppConfig.js"
import { migrations } from "./migrations/index.js"

const INT8 = 20
const NUMERIC = 1700

const codecError = (message: string) => Result.fail(new PgTypes.CodecError({ message }))

/**
 * int8 (bigint, count(*)) and numeric (sum of int8) would come back from @effect/sql-pg as bigint
 * and string. Money here is integer cents far below 2^53, so both are decoded to numbers once, at
 * the driver (binary wire format), and an int8 outside the safe range is an error rather than a
 * silent rounding. Parameters bound as int8 or numeric accept numbers, bigints and numeric strings.
 */
const int8Codec: PgTypes.Codec<number | bigint | string> = {
  decode: (bytes) => {
    if (bytes.length !== 8) return codecError(`int8 of ${bytes.length} bytes`)
    const n = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0)
    return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Result.succeed(Number(n))
      : codecError(`int8 ${n} is outside the safe integer range`)
  },
  encode: (value) => {
    if (typeof value === "number" && !Number.isSafeInteger(value)) return codecError(`not an int8: ${value}`)
    let n: bigint
    try {
      n = typeof value === "bigint" ? value : BigInt(value)
    } catch {
      return codecError(`not an int8: ${String(value)}`)
    }
    const out = new Uint8Array(8)
    new DataView(out.buffer).setBigInt64(0, n)
    return Result.succeed(out)
  }
}

/** numeric, binary: ndigits, weight, sign, dscale (int16 each), then base-10000 digits. */
const numericCodec: PgTypes.Codec<number | bigint | string> = {
  decode: (bytes) => {
    if (bytes.length < 8) return codecError("numeric too short")
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
    const ndigits = view.getInt16(0)
    const weight = view.getInt16(2)
    const sign = view.getUint16(4)
    if (sign === 0xc000) return Result.succeed(Number.NaN)
    let value = 0
    for (let i = 0; i < ndigits; i++) value += view.getUint16(8 + 2 * i) * Math.pow(10000, weight - i)
    return Result.succeed(sign === 0x4000 ? -value : value)
  },
  encode: (value) => PgTypes.encode(typeof value === "string" ? value : String(value), NUMERIC) as Result.Result<Uint8Array, PgTypes.CodecError>
}

const types = PgTypes.makeRegistry()
types.register(INT8, int8Codec as PgTypes.Codec<unknown>)
types.register(NUMERIC, numericCodec as PgTypes.Codec<unknown>)

/** SQLSTATE classes that mean "the database is not reachable right now" rather than "bad query". */
const isUnavailable = (error: SqlError.SqlError): boolean => {
  const reason = error.reason
  if (reason._tag === "ConnectionError" || reason._tag === "StatementTimeoutError") return true
  const code = (reason.cause as { code?: unknown } | undefined)?.code
  if (typeof code !== "string") return reason._tag === "UnknownError" // socket errors, pool timeouts
  if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith("08") || code.startsWith("57") || code.startsWith("53")
  return true // ECONNREFUSED, ECONNRESET, …
}

/** Maps a driver error: unavailable → typed 503, anything else (a bug) → defect. */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError.SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError> | StorageUnavailable, R> =>
  Effect.catchIf(
    effect,
    (e): e is SqlError.SqlError => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "SqlError",
    (e) =>
      isUnavailable(e)
        ? Effect.fail(new StorageUnavailable({ message: "storage is unavailable, retry later" }))
        : Effect.die(e)
  ) as Effect.Effect<A, Exclude<E, SqlError.SqlError> | StorageUnavailable, R>

export const isUniqueViolation = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some(
    (r) => Cause.isFailReason(r) && (r.error as { reason?: { _tag?: unknown } })?.reason?._tag === "UniqueViolation"
  )

/**
 * The client over one Postgres: a server (`url`, a pool of 20) or the embedded one (`path` of its
 * socket, one connection: PGlite is a single session, so statements and transactions are
 * serialised by the pool itself; docs/storage.md).
 */
export const pgClientLayer = (target: { readonly url: Redacted.Redacted } | { readonly path: string }, maxConnections: number) =>
  PgClient.layer({
    ...("url" in target ? { url: target.url } : { path: target.path, username: "postgres", database: "postgres" }),
    types,
    maxConnections,
    idleTimeout: "30 seconds",
    connectTimeout: "5 seconds",
    transformQueryNames: Str.camelToSnake,
    transformResultNames: Str.snakeToCamel,
    // jsonb documents keep their own field names (templates use snake_case on the wire).
    transformJson: false,
    applicationName: "agent-commerce"
  }).pipe(
    // The pool's idle and TTL timers keep wall-clock time whatever clock the program runs under:
    // tests move a TestClock by days, and the pool must not retire its connections for that.
    Layer.provide(Layer.succeed(Clock.Clock, Clock.Clock.defaultValue()))
  )

export const PgClientLive = Layer.unwrap(
  Effect.map(AppConfig, (config) => pgClientLayer({ url: Option.getOrThrow(config.databaseUrl) }, 20))
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

const logged = <E, R>(migrate: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, E, R>) =>
  Layer.effectDiscard(
    migrate.pipe(
      Effect.tap((applied) =>
        applied.length > 0 ? Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`) : Effect.void
      ),
      Effect.orDie
    )
  )

/** Migrations on a Postgres server, one process at a time. */
export const MigrationsLive = logged(migrateExclusively)

/**
 * Migrations on the embedded store: one process owns its data folder (a lock file), so no advisory
 * lock — which would also hold the one connection the migrator itself needs.
 */
export const EmbeddedMigrationsLive = logged(runMigrations)

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
      Effect.flatMap(Effect.serviceOption(sql.transactionService), (open): Effect.Effect<A, E | StorageUnavailable, R> => {
        if (open._tag === "Some") return effect
        const attempt = (n: number): Effect.Effect<A, E | StorageUnavailable, R> =>
          orUnavailable(sql.withTransaction(effect)).pipe(
            Effect.catchCause((cause) =>
              // At once: the other side of the deadlock holds its rows until it ends, so the next
              // attempt queues behind it (and no sleep on a clock that a test may have stopped).
              n < TRANSACTION_ATTEMPTS && isRetryableConflict(cause) ? attempt(n + 1) : Effect.failCause(cause)
            )
          )
        return attempt(1)
      })
  }))
)

/**
 * A unit of work that Postgres aborted to break a deadlock (40P01) or a serialisation conflict
 * (40001) is run again from the start, up to this many times; the whole transaction was rolled
 * back, so nothing of the first attempt remains. Deadlocks are possible since a ledger entry
 * credits accounts it did not lock first (a seller and the fee account: Ledger.prepare): two agents
 * buying from each other at the same moment. Units of work hold only database work (calls to the
 * payment processor happen outside them), so running one again is safe.
 */
const TRANSACTION_ATTEMPTS = 4

const isConflictError = (e: unknown): boolean => {
  const reason = (e as { _tag?: unknown; reason?: { _tag?: unknown; cause?: { code?: unknown } } } | undefined)?.reason
  if ((e as { _tag?: unknown } | undefined)?._tag !== "SqlError" || reason === undefined) return false
  return reason._tag === "DeadlockError" || reason._tag === "SerializationError" || reason.cause?.code === "40P01" || reason.cause?.code === "40001"
}

const isRetryableConflict = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((r) => (Cause.isDieReason(r) && isConflictError(r.defect)) || (Cause.isFailReason(r) && isConflictError(r.error)))

/**
 * `sql.insert` and `sql.updateValues` take a non-empty tuple in 4.x; every caller here checks for
 * the empty case first (or builds from a non-empty input), so this only restates that to the types.
 */
export const nonEmpty = <A>(rows: ReadonlyArray<A>): readonly [A, ...Array<A>] => {
  if (rows.length === 0) throw new Error("nonEmpty: no rows")
  return rows as readonly [A, ...Array<A>]
}

/** For tests and tools: a Postgres URL as a Redacted value. */
export const redactedUrl = (url: string) => Redacted.make(url)

/** timestamptz → ISO string. */
export const iso = (d: Date | string): string => (d instanceof Date ? d.toISOString() : new Date(d).toISOString())
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d))
