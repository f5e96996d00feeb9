// Embedded storage (STORAGE=embedded, the default): PGlite — PostgreSQL compiled to WebAssembly —
// keeps its files in DATA_DIR and is served on a private Unix socket to the very same Postgres
// store, migrations and SQL as STORAGE=postgres (src/layers/storage/postgres), through @effect/sql-pg.
// One process owns a data folder (a lock file); PGlite is one session, so the client uses a single
// connection and the pool serialises statements and transactions. docs/storage.md has the design.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/platform/AppConfig.js"

/** DATA_DIR is held by another live process (or by this one, opened twice). */
export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  message: Schema.String,
  dataDir: Schema.String,
  pid: Schema.Number
}) {}

/** The embedded database could not be opened (unreadable folder, not a PGlite data folder, …). */
export class EmbeddedStoreFailed extends Schema.TaggedError<EmbeddedStoreFailed>()("EmbeddedStoreFailed", {
  message: Schema.String,
  dataDir: Schema.String
}) {}

/** The running embedded database: where its socket is, and its data folder (undefined: in memory). */
export class EmbeddedPostgres extends Context.Service<
  EmbeddedPostgres,
  { readonly socketPath: string; readonly dataDir: string | undefined }
>()("agent-commerce/EmbeddedPostgres") {}

/**
 * For tests (nothing in the app sets it): an in-memory store may start from an image of a data
 * folder (PGlite's `dumpDataDir`) instead of an empty cluster, and `keep` receives a way to take
 * such an image of the store just opened. A fresh cluster (initdb) plus the migrations cost ~2 s
 * of CPU per store; starting from an image of a migrated one ~0.4 s (docs/testing.md).
 */
export const EmbeddedImage = Context.Reference<{
  readonly start?: Blob | undefined
  readonly keep?: ((image: () => Promise<Blob>) => void) | undefined
}>("agent-commerce/EmbeddedImage", { defaultValue: () => ({}) })

/** The lock file in a data folder: the owning process's pid. */
export const LOCK_FILE = "agent-commerce.lock"
/** PGlite's own files live in a subfolder, so the lock and future siblings never mix with them. */
export const PGDATA = "pgdata"

/** Data folders opened by this process (a second open of the same folder is refused too). */
const openHere = new Set<string>()

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const inUse = (dataDir: string, pid: number) =>
  new DataDirInUse({
    message: `DATA_DIR ${dataDir} is in use by process ${pid}: stop it, or set DATA_DIR to another folder (a stale ${LOCK_FILE} left by a dead process is taken over by itself)`,
    dataDir,
    pid
  })

/** Takes the folder's lock file (a dead owner's is taken over), released with the scope. */
const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.suspend((): Effect.Effect<string, DataDirInUse | EmbeddedStoreFailed> => {
      if (openHere.has(dataDir)) return Effect.fail(inUse(dataDir, process.pid))
      try {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 })
      } catch (e) {
        return Effect.fail(
          new EmbeddedStoreFailed({ message: `cannot create DATA_DIR ${dataDir}: ${(e as Error).message}`, dataDir })
        )
      }
      const file = join(dataDir, LOCK_FILE)
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
          openHere.add(dataDir)
          return Effect.succeed(file)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
            return Effect.fail(
              new EmbeddedStoreFailed({ message: `cannot write ${file}: ${(e as Error).message}`, dataDir })
            )
          }
        }
        let pid = Number.NaN
        try {
          pid = Number(readFileSync(file, "utf8").trim())
        } catch {
          // removed meanwhile: try again
        }
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
          return Effect.fail(inUse(dataDir, pid))
        try {
          unlinkSync(file)
        } catch {
          // another process took it over first: the next attempt finds its pid
        }
      }
      return Effect.fail(new EmbeddedStoreFailed({ message: `cannot take the lock ${file}`, dataDir }))
    }),
    (file) =>
      Effect.sync(() => {
        openHere.delete(dataDir)
        try {
          unlinkSync(file)
        } catch {
          // already gone
        }
      })
  )

/**
 * Opens PGlite (in `dataDir`, or in memory when it is "memory://") and serves it on a Unix socket
 * in a fresh 0700 folder, so only this user can connect; closed cleanly with the scope (SIGTERM).
 */
export const EmbeddedPostgresLive = Layer.effect(
  EmbeddedPostgres,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const inMemory = config.dataDir === "memory://"
    const dataDir = inMemory ? undefined : resolve(config.dataDir)
    if (dataDir !== undefined) yield* lockDataDir(dataDir)
    const where = dataDir ?? "memory://"
    // Loaded only when this storage is chosen (the WebAssembly build is ~27 MB).
    const { PGlite } = yield* Effect.promise(() => import("@electric-sql/pglite"))
    // pg_trgm (PGlite ships it as a contrib module, loaded only on request): the catalogue's `q`
    // search is served by a trigram index, as on Postgres (migration 0018).
    const { pg_trgm } = yield* Effect.promise(() => import("@electric-sql/pglite/contrib/pg_trgm"))
    const { PGLiteSocketServer } = yield* Effect.promise(() => import("@electric-sql/pglite-socket"))
    const image = yield* EmbeddedImage
    const startFrom = dataDir === undefined && image.start !== undefined ? { loadDataDir: image.start } : {}
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create(dataDir === undefined ? "memory://" : join(dataDir, PGDATA), {
            extensions: { pg_trgm },
            ...startFrom
          }),
        catch: (e) =>
          new EmbeddedStoreFailed({
            message: `cannot open the embedded database in ${where}: ${String((e as Error)?.message ?? e).split("\n")[0]}`,
            dataDir: where
          })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    image.keep?.(() => db.dumpDataDir("none"))
    const socketDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "agent-commerce-pg-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const socketPath = join(socketDir, ".s.PGSQL.5432")
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 8 })
          await server.start()
          return server
        },
        catch: (e) =>
          new EmbeddedStoreFailed({
            message: `cannot serve the embedded database: ${(e as Error).message}`,
            dataDir: where
          })
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    return { socketPath, dataDir }
  })
)

/** What one vacuum pass did to one table. */
export interface VacuumedTable {
  readonly table: string
  readonly action: "vacuum" | "analyze"
  readonly deadRows: number
  readonly ms: number
}

/**
 * One pass of what autovacuum would do (PGlite runs none): the tables whose dead row versions pass
 * autovacuum's default threshold (50 + 20 % of their rows) get `VACUUM (ANALYZE)`, those changed
 * past its analyze threshold (50 + 10 %) get `ANALYZE`. Hot rows — counters, spend and usage days,
 * ledger balances, rate-limit windows — are rewritten by every purchase or request, and their dead
 * versions otherwise pile up until reads slow down (docs/performance.md). Each table is its own
 * statement through the pool's one connection, so requests queued behind it run between tables:
 * the longest a request waits is one table's vacuum, not the pass.
 */
export const vacuumPass = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Table statistics reach the views when the session flushes them, at most once a second
  // otherwise; the pass asks for the flush so it sees the writes up to now.
  yield* sql`SELECT pg_stat_force_next_flush()`
  const tables = yield* sql<{ table: string; dead: number; modified: number; rows: number }>`
    SELECT s.relname AS table, s.n_dead_tup::float8 AS dead, s.n_mod_since_analyze::float8 AS modified, greatest(c.reltuples, 0)::float8 AS rows
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = 'public' ORDER BY s.relname`
  const done: Array<VacuumedTable> = []
  for (const t of tables) {
    const action = t.dead > 50 + 0.2 * t.rows ? "vacuum" : t.modified > 50 + 0.1 * t.rows ? "analyze" : undefined
    if (action === undefined) continue
    const start = performance.now()
    const name = `"${t.table.replace(/"/g, '""')}"`
    yield* sql.unsafe(action === "vacuum" ? `VACUUM (ANALYZE) ${name}` : `ANALYZE ${name}`)
    done.push({ table: t.table, action, deadRows: t.dead, ms: Math.round(performance.now() - start) })
  }
  return done
})

/**
 * Runs vacuumPass every EMBEDDED_VACUUM_SECONDS (after the first interval) for as long as the
 * store is open; a failed pass is logged and the next one tried.
 */
export const EmbeddedVacuumLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const { embeddedVacuumSeconds } = yield* AppConfig
    if (embeddedVacuumSeconds <= 0) return
    const sql = yield* SqlClient.SqlClient
    const pass = vacuumPass.pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.tap((done) =>
        done.length === 0 ? Effect.void : Effect.logDebug("embedded store vacuum pass", { tables: done })
      ),
      Effect.catchCause((cause) => Effect.logWarning("embedded store vacuum pass failed", cause))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(`${embeddedVacuumSeconds} seconds`), pass)))
  })
)
