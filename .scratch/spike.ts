import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
const t0 = Date.now()
const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), "pgl-"))
const db = await PGlite.create(dir)
console.log("create", Date.now() - t0, "ms", dir)
const sockDir = mkdtempSync(join(tmpdir(), "pgs-"))
const path = join(sockDir, ".s.PGSQL.5432")
const server = new PGLiteSocketServer({ db, path, maxConnections: 100 })
await server.start()
console.log("listening", Date.now() - t0)
const { PgClient } = await import("@effect/sql-pg")
const { Effect, Layer } = await import("effect")
const { SqlClient } = await import("effect/unstable/sql".replace("unstable/", "")).catch(() => import("effect/sql"))
const prog = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS t (id int8 primary key, v text)`
  yield* sql`INSERT INTO t VALUES (${Date.now()}, 'x')`
  const rows = yield* sql`SELECT count(*) AS n FROM t`
  console.log(rows)
  const s = Date.now()
  for (let i = 0; i < 1000; i++) yield* sql`SELECT ${i}::int AS x`
  console.log("1000 queries", Date.now() - s, "ms")
  const s2 = Date.now()
  yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) => sql.withTransaction(Effect.gen(function* () {
    yield* sql`SELECT pg_advisory_xact_lock(1)`
    yield* sql`INSERT INTO t VALUES (${Date.now() * 1000 + i}, 'y')`
  })), { concurrency: 20 })
  console.log("200 tx conc 20", Date.now() - s2, "ms")
})
await Effect.runPromise(prog.pipe(Effect.provide(PgClient.layer({ path, maxConnections: 1, username: "postgres", database: "postgres" } as any))))
await server.stop(); await db.close()
console.log("closed", Date.now() - t0)
