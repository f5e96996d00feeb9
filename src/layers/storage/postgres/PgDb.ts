// Postgres storage engine: the client (numbers for int8 and numeric, codecs.ts), migrations, the Transactor.
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { PgClient, PgTypes } from "@effect/sql-pg"
import { Cause, Clock, Effect, Layer, Option, Redacted, String as Str } from "effect"
import { StorageUnavailable } from "../../../schema/platform/errors.js"
import { Transactor } from "../../../services/platform/Db.js"
import { AppConfig } from "../../../services/platform/AppConfig.js"
import { migrations } from "./migrations/index.js"
import { types } from "./codecs.js"

/**
 * SQLSTATEs a retry of the same request can get past: the server is going away or not yet ready
 * (class 08 connection, 57 operator intervention incl. 57P01-57P03 shutdowns and 57014 cancel,
 * 53 insufficient resources such as 53300 too many connections), a node that is (still) a
 * read-only standby (25006: during a failover the proxy may already route to a node that has not
 * finished its promotion), a conflict another attempt will not meet (class 40 but 40002, whose
 * integrity violation a retry repeats; 55P03 lock not available). Everything else is a bug.
 */
export const isRetryableSqlState = (code: string): boolean => {
  switch (code.slice(0, 2)) {
    case "08":
    case "53":
    case "57":
      return true
    case "40":
      return code !== "40002"
    default:
      return code === "25006" || code === "55P03" || code === "25P03" || code === "25P04"
  }
}

const isSqlError = (e: unknown): e is SqlError.SqlError =>
  typeof e === "object" &&
  e !== null &&
  (e as { _tag?: unknown })._tag === "SqlError" &&
  typeof (e as { reason?: unknown }).reason === "object"

/**
 * Whether a driver error is one a retry can fix: by SQLSTATE when the server sent one, otherwise
 * by cause (a socket closed or refused, a connect or pool timeout: no SQLSTATE, reason
 * ConnectionError or UnknownError). A statement the server refused for what it says (syntax,
 * constraint, codec) is not.
 */
export const isRetryableSqlError = (error: SqlError.SqlError): boolean => {
  const reason = error.reason
  const code = (reason.cause as { code?: unknown } | undefined)?.code
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return isRetryableSqlState(code)
  switch (reason._tag) {
    case "ConnectionError":
    case "StatementTimeoutError":
    case "DeadlockError":
    case "SerializationError":
    case "LockTimeoutError":
      return true
    case "UnknownError":
      // A codec error (a value the driver cannot encode or decode) is a bug, not an outage.
      return !(reason.cause instanceof PgTypes.CodecError)
    default:
      return false
  }
}

const unavailable = () => new StorageUnavailable({ message: "storage is unavailable, retry later" })

/**
 * The StorageUnavailable failures that stand for a deadlock or serialisation conflict: the
 * transactor runs such a unit of work again itself (a store's statement has already turned the
 * driver error into the typed 503 by then, so the instance is what is left to recognise it by).
 */
const conflicts = new WeakSet<object>()

/** Maps a driver error: one a retry can fix → typed 503, anything else (a bug) → defect. */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError.SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError> | StorageUnavailable, R> =>
  Effect.catchIf(effect, isSqlError, (e) => {
    if (!isRetryableSqlError(e)) return Effect.die(e)
    const failure = unavailable()
    if (isConflictError(e)) conflicts.add(failure)
    return Effect.fail(failure)
  }) as Effect.Effect<A, Exclude<E, SqlError.SqlError> | StorageUnavailable, R>

const tagOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && typeof (u as { _tag?: unknown })._tag === "string"
    ? (u as { _tag: string })._tag
    : undefined

/**
 * What a failed unit of work answers, from everything its cause holds. A connection that dies in
 * the middle of a transaction fails the statement and then the ROLLBACK, which the SQL layer
 * reports as a defect, turning the body's own failure into a defect beside it (a failed COMMIT
 * whose cleanup failed too, the same). Such a transaction was lost on the server, so nothing of
 * it was committed: the whole outcome is StorageUnavailable, and the client's retry decides. A
 * defect that is not a driver error or a tagged failure (a bug), or a SQLSTATE no retry can get
 * past, stays a defect (500).
 */
export const unitOfWorkOutcome = (cause: Cause.Cause<unknown>): Cause.Cause<unknown> => {
  if (Cause.hasInterruptsOnly(cause)) return cause
  let outage = false
  for (const r of cause.reasons) {
    const e = Cause.isDieReason(r) ? r.defect : Cause.isFailReason(r) ? r.error : undefined
    if (isSqlError(e)) {
      if (!isRetryableSqlError(e)) return Cause.isFailReason(r) ? Cause.die(e) : cause
      outage = true
    } else if (tagOf(e) === "StorageUnavailable") outage = true
    else if (Cause.isDieReason(r) && tagOf(e) === undefined) return cause
  }
  return outage ? Cause.fail(unavailable()) : cause
}

export const isUniqueViolation = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some(
    (r) => Cause.isFailReason(r) && (r.error as { reason?: { _tag?: unknown } })?.reason?._tag === "UniqueViolation"
  )

/**
 * The client over one Postgres: a server (`url`, a pool of 20) or the embedded one (`path` of its
 * socket, one connection: PGlite is a single session, so statements and transactions are
 * serialised by the pool itself; docs/storage.md).
 */
export const pgClientLayer = (
  target: { readonly url: Redacted.Redacted } | { readonly path: string },
  maxConnections: number
) =>
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
    return yield* runMigrations.pipe(
      Effect.ensuring(Effect.ignore(lockHolder.executeRaw(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`, [])))
    )
  })
)

const logged = <E, R>(migrate: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, E, R>) =>
  Layer.effectDiscard(
    migrate.pipe(
      Effect.tap((applied) =>
        applied.length > 0
          ? Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
          : Effect.void
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
      Effect.flatMap(
        Effect.serviceOption(sql.transactionService),
        (open): Effect.Effect<A, E | StorageUnavailable, R> => {
          if (open._tag === "Some") return effect
          const attempt = (n: number): Effect.Effect<A, unknown, R> =>
            sql.withTransaction(effect).pipe(
              Effect.catchCause((cause) =>
                // At once: the other side of the deadlock holds its rows until it ends, so the next
                // attempt queues behind it (and no sleep on a clock that a test may have stopped).
                n < TRANSACTION_ATTEMPTS && isRetryableConflict(cause) ? attempt(n + 1) : Effect.failCause(cause)
              )
            )
          return attempt(1).pipe(
            Effect.catchCause((cause) => Effect.failCause(unitOfWorkOutcome(cause)))
          ) as Effect.Effect<A, E | StorageUnavailable, R>
        }
      )
  }))
)

/**
 * A unit of work that Postgres aborted to break a deadlock (40P01) or a serialisation conflict
 * (40001) is run again from the start, up to this many times; the whole transaction was rolled
 * back, so nothing of the first attempt remains. Deadlocks are possible since a ledger entry
 * credits accounts it did not lock first (a seller and the fee account: Ledger.prepare): two agents
 * buying from each other at the same moment. Units of work hold only database work (calls to the
 * payment processor happen outside them), so running one again is safe. Past the last attempt the
 * conflict is a 503 (unitOfWorkOutcome): the client's retry is one more attempt.
 */
const TRANSACTION_ATTEMPTS = 4

function isConflictError(e: unknown): boolean {
  if (typeof e === "object" && e !== null && conflicts.has(e)) return true
  if (!isSqlError(e)) return false
  const reason = e.reason
  const code = (reason.cause as { code?: unknown } | undefined)?.code
  return reason._tag === "DeadlockError" || reason._tag === "SerializationError" || code === "40P01" || code === "40001"
}

const isRetryableConflict = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some(
    (r) => (Cause.isDieReason(r) && isConflictError(r.defect)) || (Cause.isFailReason(r) && isConflictError(r.error))
  )

/**
 * `sql.insert` and `sql.updateValues` take a non-empty tuple in 4.x; every caller here checks for
 * the empty case first (or builds from a non-empty input), so this only restates that to the types.
 */
export const nonEmpty = <A>(rows: ReadonlyArray<A>): readonly [A, ...Array<A>] => {
  if (rows.length === 0) throw new Error("nonEmpty: no rows")
  return rows as readonly [A, ...Array<A>]
}

/** timestamptz → ISO string. */
export const iso = (d: Date | string): string => (d instanceof Date ? d.toISOString() : new Date(d).toISOString())
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d))
