// Keys, passwords and session tokens are never stored or logged in plaintext: a Postgres-backed
// server logging at Debug is exercised, then every table is dumped and the logs are grepped.
import { HttpServer } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Logger, Option, Redacted, References, Scope } from "effect"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { AppLive } from "../../src/layers/app.js"
import { underContract } from "../fixtures/contract.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { createAgentKey } from "../fixtures/agents.js"
import { freshDatabase, postgresSkipReason } from "../fixtures/db.js"

if (postgresSkipReason) console.warn(`keys-secrecy: ${postgresSkipReason}`)

/** Everything logged: through the app's Effect logger (captured at Debug) and anything on console/stdout. */
const captured: Array<string> = []

interface Server {
  readonly baseUrl: string
  readonly databaseUrl: string
  readonly close: () => Promise<void>
}

/** Like test/fixtures/server.ts startServer({ storage: "postgres" }), plus a Debug logger that records every line. */
const startLoggedServer = async (): Promise<Server> => {
  const scope = Effect.runSync(Scope.make())
  const capture = Logger.map(Logger.formatLogFmt, (line) => {
    captured.push(line)
  })
  const logging = Layer.mergeAll(Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "Debug"))
  const program = Effect.gen(function* () {
    const db = yield* freshDatabase
    const server = yield* Layer.build(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    const address = Context.get(server, HttpServer.HttpServer).address
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    const baseUrl = `http://127.0.0.1:${port}`
    const config = AppConfig.test({
      baseUrl,
      storage: "postgres",
      databaseUrl: Option.some(Redacted.make(db.url)),
      logLevel: "Debug"
    })
    yield* Layer.build(AppLive.pipe(Layer.provide(config), Layer.provide(Layer.succeedContext(server))))
    return { baseUrl, databaseUrl: db.url }
  }).pipe(
    // The request fibers inherit the logger and level in force when the server layer was built.
    Effect.provide(logging)
  )
  const started = await Effect.runPromise(Scope.provide(program, scope))
  const { release } = await underContract(started.baseUrl)
  return {
    ...started,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      release()
    }
  }
}

/** A row as text; bytea columns are shown as their UTF-8 text and hex, so nothing hides in bytes. */
const rowText = (row: Record<string, unknown>) =>
  JSON.stringify(
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? `${v.toString("utf8")} \\x${v.toString("hex")}` : v])
    )
  )

/** Every row of every table outside the system schemas, as text. */
const dumpDatabase = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const tables = await client.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`
    )
    const parts: Array<string> = []
    for (const t of tables.rows) {
      const rows = await client.query(`SELECT * FROM "${t.schema}"."${t.name}"`)
      parts.push(`-- ${t.schema}.${t.name} (${rows.rowCount} rows)\n${rows.rows.map(rowText).join("\n")}`)
    }
    return { tables: tables.rows.map((t) => t.name), text: parts.join("\n") }
  } finally {
    await client.end()
  }
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")

/** The forms a leaked secret could take: as sent, its random part, and that part's bytes in hex/base64. */
const forms = (secret: string, prefix = "") => {
  const body = secret.slice(prefix.length)
  const bytes = Buffer.from(body, "base64url")
  return [secret, body, bytes.toString("hex"), bytes.toString("base64")].filter((s) => s.length >= 16)
}

describe.skipIf(postgresSkipReason !== undefined)(
  "API keys are never stored or logged in plaintext (Postgres, LOG_LEVEL Debug)",
  () => {
    let server: Server
    const spies: Array<{ mockRestore: () => void }> = []

    beforeAll(async () => {
      for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
        const original = console[method].bind(console)
        spies.push(
          vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
            captured.push(args.map(String).join(" "))
            original(...args)
          })
        )
      }
      const write = process.stdout.write.bind(process.stdout)
      spies.push(
        vi.spyOn(process.stdout, "write").mockImplementation(((chunk: string | Uint8Array, ...rest: Array<never>) => {
          captured.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString())
          return write(chunk, ...rest)
        }) as typeof process.stdout.write)
      )
      server = await startLoggedServer()
    }, 60_000)

    afterAll(async () => {
      await server?.close()
      for (const s of spies) s.mockRestore()
    })

    it("creates and uses keys, then finds only hashes and prefixes in the database and nothing in the logs", async () => {
      const url = (p: string) => `${server.baseUrl}${p}`
      const password = "correct horse battery" // the fixture's password
      const k = await createAgentKey(server.baseUrl, ["catalog:read", "commerce:*"])
      const sessionToken = decodeURIComponent(k.cookie.split("=")[1])

      // A second key created with an Idempotency-Key: its response must not be kept with the secret in it.
      const idem = await fetch(url(`/api/dashboard/agents/${k.agentId}/keys`), {
        method: "POST",
        headers: { "content-type": "application/json", cookie: k.cookie, "idempotency-key": "create-key-1" },
        body: JSON.stringify({ name: "idempotent", permissions: ["evaluate"] })
      })
      expect(idem.status).toBe(201)
      const second = (await idem.json()) as { secret: string; key: { id: string; prefix: string } }
      // A retry runs nothing twice and cannot replay the secret: it learns the key was made.
      const retry = await fetch(url(`/api/dashboard/agents/${k.agentId}/keys`), {
        method: "POST",
        headers: { "content-type": "application/json", cookie: k.cookie, "idempotency-key": "create-key-1" },
        body: JSON.stringify({ name: "idempotent", permissions: ["evaluate"] })
      })
      expect(retry.status).toBe(409)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      const retryText = await retry.text()
      expect(retryText).not.toContain(second.secret)
      expect(JSON.parse(retryText).message).toMatch(/one-time secret/)
      const keys = (await (
        await fetch(url("/api/dashboard/keys"), { headers: { cookie: k.cookie } })
      ).json()) as Array<{ name: string }>
      expect(keys.filter((x) => x.name === "idempotent")).toHaveLength(1)

      // Use the keys: success, permission failure, procedure path, a bad variant of the key, revocation.
      for (let i = 0; i < 3; i++) expect((await fetch(url("/api/v1/agent/me"), { headers: k.auth })).status).toBe(200)
      expect((await fetch(url("/api/v1/agent/catalog"), { headers: k.auth })).status).toBe(200)
      expect(
        (await fetch(url("/api/v1/agent/me"), { headers: { authorization: `Bearer ${second.secret}` } })).status
      ).toBe(200)
      expect(
        (await fetch(url("/api/v1/agent/catalog"), { headers: { authorization: `Bearer ${second.secret}` } })).status
      ).toBe(403)
      expect((await fetch(url("/api/trpc/portfolio.holdings"), { headers: k.auth })).status).toBeLessThan(500)
      expect((await fetch(url("/api/v1/agent/me"), { headers: { authorization: `Bearer ${k.secret}x` } })).status).toBe(
        401
      )
      expect(
        (
          await fetch(url(`/api/dashboard/keys/${second.key.id}/revoke`), {
            method: "POST",
            headers: { cookie: k.cookie, "content-type": "application/json" }
          })
        ).status
      ).toBe(200)
      expect(
        (await fetch(url("/api/v1/agent/me"), { headers: { authorization: `Bearer ${second.secret}` } })).status
      ).toBe(401)

      const dump = await dumpDatabase(server.databaseUrl)
      // The dump really covers the key tables: the hashes and display prefixes are there …
      expect(dump.tables).toEqual(expect.arrayContaining(["accounts", "sessions", "agents", "api_keys"]))
      expect(dump.text).toContain(sha256(k.secret))
      expect(dump.text).toContain(sha256(second.secret))
      expect(dump.text).toContain(k.secret.slice(0, 14))
      expect(dump.text).toContain(sha256(sessionToken))
      expect(dump.text).toContain("create-key-1") // the idempotency record of the key creation is there, without the secret
      // … and no secret in any form.
      for (const s of [
        ...forms(k.secret, "ak_live_"),
        ...forms(second.secret, "ak_live_"),
        ...forms(sessionToken),
        password
      ]) {
        expect(dump.text.includes(s), `database holds ${s.slice(0, 12)}…`).toBe(false)
      }

      // The logger was live at Debug for the app (migrations logged through it) …
      const logs = captured.join("\n")
      expect(logs).toMatch(/applied migrations/)
      // … and nothing logged carries a secret.
      for (const s of [
        ...forms(k.secret, "ak_live_"),
        ...forms(second.secret, "ak_live_"),
        ...forms(sessionToken),
        password
      ]) {
        expect(logs.includes(s), `logs hold ${s.slice(0, 12)}…`).toBe(false)
      }
    })
  }
)
