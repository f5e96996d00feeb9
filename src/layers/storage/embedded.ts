// Embedded storage (STORAGE=embedded, the default): PGlite — PostgreSQL compiled to WebAssembly —
// keeps its files in DATA_DIR and is served on a private Unix socket to the very same Postgres
// store, migrations and SQL as STORAGE=postgres (src/layers/storage/postgres), through @effect/sql-pg.
// One process owns a data folder (a lock file); PGlite is one session, so the client uses a single
// connection and the pool serialises statements and transactions. docs/storage.md has the design.
import { spawn } from "node:child_process"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import type { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { PGlite } from "@electric-sql/pglite"
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

/** Whether a process of that pid is alive (EPERM: alive, another user's). */
export const processAlive = (pid: number) => {
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
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid))
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
 * PostgreSQL settings PGlite starts with (after its own: single-user, fsync off, no parallel
 * workers). PGlite's initdb writes `shared_buffers = 128MB`, and the buffers, allocated inside the
 * WebAssembly memory, are touched as pages are read and never given back: 16 MB holds the working
 * set of a buy and of the catalogue's reads (docs/storage.md, "Memory"; the rest of a table is a
 * read from the OS page cache). Index builds (migrations) and VACUUM may take 16 MB instead of
 * 64 MB, as WebAssembly memory once grown stays resident. Given on the command line
 * (`-c`), so they hold for a data folder made before them too.
 */
export const ENGINE_SETTINGS: ReadonlyArray<string> = ["-c", "shared_buffers=16MB", "-c", "maintenance_work_mem=16MB"]

/**
 * A new data folder is made by PGlite's initdb, which runs a second PGlite (and the initdb
 * WebAssembly) inside the process: done here it left ~90 MB resident for the server's whole life
 * (the first start idled at 378 MB, a later one at 291). So a short-lived node process makes the
 * folder and exits; should it fail, PGlite.create makes it in process as before.
 * That process compiles the WebAssembly with V8's baseline compiler only (`--liftoff-only`): it
 * lives ~4 s, and the optimising compiler's work on initdb's hot functions never paid back there:
 * 7.2 → 4.5 s of CPU, 4.6 → 4.0 s of wall and a 1.16 GB → 0.65 GB peak (docs/storage.md).
 */
const initdbApart = (pgdata: string) =>
  Effect.callback<void>((resume) => {
    let module: string
    try {
      module = import.meta.resolve("@electric-sql/pglite")
    } catch {
      resume(Effect.void)
      return
    }
    // Made beside the folder and renamed into place whole, so a failed initdb leaves no half folder.
    const made = `${pgdata}.initdb`
    rmSync(made, { recursive: true, force: true })
    const script = `const { PGlite } = await import(${JSON.stringify(module)}); await (await PGlite.create(${JSON.stringify(made)})).close()`
    const child = spawn(process.execPath, ["--liftoff-only", "--input-type=module", "-e", script], {
      stdio: "ignore"
    })
    // A stuck child is given up on (and the folder made in process) rather than holding the start.
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    const done = (ok: boolean) => {
      clearTimeout(timer)
      try {
        if (ok && existsSync(join(made, "PG_VERSION"))) renameSync(made, pgdata)
        else rmSync(made, { recursive: true, force: true })
      } catch {
        // left to PGlite.create, which makes the folder in process
      }
      resume(Effect.void)
    }
    child.once("error", () => done(false))
    child.once("exit", (code) => done(code === 0))
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill()
    })
  })

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
    const image = yield* EmbeddedImage
    const startFrom = dataDir === undefined && image.start !== undefined ? { loadDataDir: image.start } : {}
    const pgdata = dataDir === undefined ? "memory://" : join(dataDir, PGDATA)
    if (dataDir !== undefined && !existsSync(join(pgdata, "PG_VERSION"))) yield* initdbApart(pgdata)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create(pgdata, {
            extensions: { pg_trgm },
            startParams: [...PGlite.defaultStartParams, ...ENGINE_SETTINGS],
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
        try: () => serveSession(db, socketPath),
        catch: (e) =>
          new EmbeddedStoreFailed({
            message: `cannot serve the embedded database: ${(e as Error).message}`,
            dataDir: where
          })
      }),
      (close) => Effect.promise(close).pipe(Effect.ignore)
    )
    return { socketPath, dataDir }
  })
)

interface Connection {
  readonly socket: Socket
  /** Bytes of a message not complete yet. */
  pending: Buffer
  /** The StartupMessage is read: typed messages from here on. */
  greeted: boolean
}

/**
 * Serves the one PGlite session on a Unix socket, a read at a time: every complete message that
 * arrived together (a statement's Bind/Execute/Sync, or Parse/Bind/Describe/Execute/Sync) goes to
 * PGlite in one call and its answer back in one write. pglite-socket's server, used before, passed
 * each message on its own, each through its queue, PGlite's lock and a socket write of its own —
 * three of each per statement; a buy cost ~3 % more server CPU and its garbage ~60 MB more peak
 * RSS (docs/storage.md, "Memory"). Connections share the session as they did there: while one holds
 * an open transaction only its messages run, and one that closes inside its transaction has it
 * rolled back.
 */
const serveSession = async (db: PGlite, path: string): Promise<() => Promise<void>> => {
  const { createServer } = await import("node:net")
  // The start-up packets' codes, as pglite-socket defines them.
  const { SSL_REQUEST_CODE, CANCEL_REQUEST_CODE } = await import("@electric-sql/pglite-socket")
  const queue: Array<{ readonly conn: Connection; readonly bytes: Uint8Array }> = []
  let running = false
  let owner: Connection | undefined
  const run = async () => {
    if (running) return
    running = true
    try {
      // Once the database is closed (the store's scope ended) nothing more is run: the sockets are going.
      while (queue.length > 0 && !db.closed) {
        const next = db.isInTransaction() && owner !== undefined ? queue.findIndex((q) => q.conn === owner) : 0
        if (next === -1) break
        const { conn, bytes } = queue.splice(next, 1)[0]!
        const out: Array<Buffer> = []
        try {
          await db.runExclusive(() =>
            db.execProtocolRawStream(bytes, { onRawData: (chunk) => void out.push(Buffer.from(chunk)) })
          )
        } catch (e) {
          conn.socket.destroy(e as Error)
          continue
        }
        owner = conn
        if (out.length > 0 && conn.socket.writable) conn.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out))
      }
    } finally {
      running = false
    }
  }
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    const conn: Connection = { socket, pending: Buffer.alloc(0), greeted: false }
    socket.on("data", (data) => {
      let bytes = conn.pending.length === 0 ? data : Buffer.concat([conn.pending, data])
      let end = 0
      // Untyped packets first: SSLRequest (answered "no"), CancelRequest (ignored), then the
      // StartupMessage, which PGlite answers like any other message.
      while (!conn.greeted && bytes.length >= 8 && bytes.length >= bytes.readInt32BE(0)) {
        const size = bytes.readInt32BE(0)
        const code = bytes.readInt32BE(4)
        if (code === SSL_REQUEST_CODE || code === CANCEL_REQUEST_CODE) {
          if (code === SSL_REQUEST_CODE) socket.write("N")
          bytes = bytes.subarray(size)
          continue
        }
        conn.greeted = true
        end = size
      }
      while (conn.greeted && bytes.length - end >= 5) {
        const size = 1 + bytes.readInt32BE(end + 1)
        if (bytes.length - end < size) break
        end += size
      }
      conn.pending = bytes.subarray(end)
      if (end === 0) return
      queue.push({ conn, bytes: new Uint8Array(bytes.subarray(0, end)) })
      void run()
    })
    socket.on("error", () => socket.destroy())
    socket.on("close", () => {
      sockets.delete(socket)
      for (let i = queue.length - 1; i >= 0; i--) if (queue[i]!.conn === conn) queue.splice(i, 1)
      if (owner !== conn) return
      // A connection closing after the database did (the scope's release runs the server's close
      // and the database's close back to back; sockets report closing a tick later) has nothing to undo.
      if (db.closed || !db.isInTransaction()) owner = undefined
      else
        void db.exec("ROLLBACK").finally(() => {
          owner = undefined
          void run()
        })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(path, () => resolve())
  })
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const socket of sockets) socket.destroy()
    })
}

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
