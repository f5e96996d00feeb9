// Migrations on Postgres: several processes starting at once on an empty database all come up (the
// advisory lock in src/layers/storage/postgres/PgDb.ts); running them again applies nothing.
import { Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { AppConfig } from "../src/services/platform/AppConfig.js"
import { MigrationsLive, PgClientLive } from "../src/layers/storage/postgres/PgDb.js"
import { freshDatabase, postgresSkipReason } from "./fixtures/db.js"
import { NodeServices } from "@effect/platform-node"

/** One "process": its own pool, then the migrations. */
const migrateWith = (url: string) =>
  Effect.scoped(
    Layer.build(
      MigrationsLive.pipe(
        Layer.provide(PgClientLive),
        Layer.provide(NodeServices.layer),
        Layer.provide(AppConfig.test({ storage: "postgres", databaseUrl: Option.some(Redacted.make(url)) }))
      )
    )
  )

describe.skipIf(postgresSkipReason !== undefined)(
  `migrations on Postgres${postgresSkipReason ? ` — ${postgresSkipReason}` : ""}`,
  () => {
    it("four processes migrating one empty database at the same moment all succeed; a fifth applies nothing", async () => {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* freshDatabase
            const results = yield* Effect.all(
              Array.from({ length: 4 }, () => Effect.result(migrateWith(db.url))),
              { concurrency: "unbounded" }
            )
            expect(results.map((r) => r._tag)).toEqual(["Success", "Success", "Success", "Success"])
            yield* migrateWith(db.url)
            const applied = yield* Effect.promise(async () => {
              const client = new pg.Client({ connectionString: db.url })
              await client.connect()
              try {
                return (await client.query<{ n: string }>("SELECT count(*) AS n FROM effect_sql_migrations")).rows[0].n
              } finally {
                await client.end()
              }
            })
            expect(Number(applied)).toBeGreaterThanOrEqual(10)
          })
        )
      )
    }, 60_000)
  }
)
