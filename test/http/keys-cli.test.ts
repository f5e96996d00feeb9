// The operator CLI (src/cli/keys.ts), spawned as a user would: over HTTP against a running server
// (--url), and directly on the server's Postgres database (STORAGE=postgres).
import { Option, Redacted } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundled } from "../fixtures/bundle.js"
import { adminDatabaseUrl, postgresSkipReason } from "../fixtures/db.js"
import { startServer, type TestServer } from "../fixtures/server.js"

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  for (const name of ["STORAGE", "DATABASE_URL", "KEYS_PASSWORD", "BASE_URL", "PORT"])
    if (!(name in extra)) delete env[name]
  return env
}

/**
 * src/cli/keys.ts compiled as `npm run build` compiles it (dist/keys.js), run with node: `npm run keys`
 * runs the same source through tsx, which cost ~1 s more CPU a spawn (test/fixtures/bundle.ts). With
 * viaNpm, `npm run keys -- …` itself, tsx and npm's own start-up included.
 */
const cli = async (
  args: ReadonlyArray<string>,
  extraEnv: Record<string, string> = {},
  viaNpm = false
): Promise<Run> => {
  const script = viaNpm ? "" : await bundled("src/cli/keys.ts")
  return new Promise((resolve) => {
    const [cmd, argv] = viaNpm
      ? ["npm", ["run", "--silent", "keys", "--", ...args]]
      : [process.execPath, [script, ...args]]
    execFile(cmd, argv, { env: cleanEnv(extraEnv), timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

const secretIn = (text: string) => {
  const m = /^ {2}(ak_live_[A-Za-z0-9_-]{43})$/m.exec(text)
  if (!m) throw new Error(`no key printed in:\n${text}`)
  return m[1]
}

const me = (baseUrl: string, secret: string) =>
  fetch(`${baseUrl}/api/v1/agent/me`, { headers: { authorization: `Bearer ${secret}` } })

// Each spawn starts node and the CLI (tsx too, via npm): generous timeouts.
describe("keys CLI over HTTP (--url)", { timeout: 90_000 }, () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(async () => {
    await server?.close()
  })

  const email = `cli-${randomBytes(4).toString("hex")}@example.com`
  const password = "cli password 123"

  it("creates account, agent and key; prints the key once; the key works on /me", async () => {
    const expires = "2031-01-01T00:00:00Z"
    const r = await cli([
      "create",
      "--url",
      server.baseUrl,
      "--email",
      email,
      "--password",
      password,
      "--agent",
      "cli scout",
      "--org",
      "Acme",
      "--permissions",
      "catalog:read,commerce:*",
      "--expires",
      expires
    ])
    expect(r.stderr.replace(/npm warn[^\n]*\n/g, "")).toBe("")
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`Created account ${email}`)
    expect(r.stdout).toContain('Created agent "cli scout"')
    expect(r.stdout).toContain("only time the key is shown")
    const secret = secretIn(r.stdout)
    expect(r.stdout).toContain(`curl -H "Authorization: Bearer ${secret}" ${server.baseUrl}/api/v1/agent/me`)

    const res = await me(server.baseUrl, secret)
    expect(res.status).toBe(200)
    const body = (await res.json()) as {
      key: { permissions: Array<string>; expiresAt: string; name: string }
      agent: { name: string; organization: string }
    }
    expect(body.key.permissions).toEqual([
      "catalog:read",
      "commerce:read",
      "commerce:buy",
      "commerce:sell",
      "commerce:negotiate"
    ])
    expect(body.key.expiresAt).toBe("2031-01-01T00:00:00.000Z")
    expect(body.key.name).toBe("cli")
    expect(body.agent).toMatchObject({ name: "cli scout", organization: "Acme" })
  })

  it("a second run reuses the account and agent (signs in), and list shows both keys; revoke makes /me 401", async () => {
    const r = await cli(
      [
        "create",
        "--url",
        server.baseUrl,
        "--email",
        email,
        "--agent",
        "cli scout",
        "--permissions",
        "evaluate",
        "--key-name",
        "second",
        "--json"
      ],
      {
        KEYS_PASSWORD: password
      }
    )
    expect(r.code).toBe(0)
    const created = JSON.parse(r.stdout) as {
      account: { created: boolean }
      agent: { created: boolean; id: string }
      key: { id: string; permissions: Array<string> }
      secret: string
    }
    expect(created.account.created).toBe(false)
    expect(created.agent.created).toBe(false)
    expect(created.key.permissions).toEqual(["evaluate"])
    expect((await me(server.baseUrl, created.secret)).status).toBe(200)

    const list = await cli(["list", "--url", server.baseUrl, "--email", email, "--password", password, "--json"])
    expect(list.code).toBe(0)
    const listed = JSON.parse(list.stdout) as {
      agents: Array<{ id: string }>
      keys: Array<{ id: string; name: string }>
    }
    expect(listed.agents.map((a) => a.id)).toEqual([created.agent.id])
    expect(listed.keys.map((k) => k.name).sort()).toEqual(["cli", "second"])
    expect(list.stdout).not.toContain("ak_live_" + created.secret.slice(8, 20))

    const revoke = await cli([
      "revoke",
      "--url",
      server.baseUrl,
      "--key",
      created.key.id,
      "--email",
      email,
      "--password",
      password
    ])
    expect(revoke.code).toBe(0)
    expect(revoke.stdout).toContain(`Revoked ${created.key.id}`)
    const after = await me(server.baseUrl, created.secret)
    expect(after.status).toBe(401)
  })

  it("a wrong password for an existing account fails with exit code 1 and no key", async () => {
    const r = await cli([
      "create",
      "--url",
      server.baseUrl,
      "--email",
      email,
      "--password",
      "not the password",
      "--agent",
      "x",
      "--permissions",
      "evaluate"
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("wrong e-mail or password")
    expect(r.stdout).not.toContain("ak_live_")
  })

  it("`npm run keys -- create --url …` works as the README shows", async () => {
    const r = await cli(
      [
        "create",
        "--url",
        server.baseUrl,
        "--email",
        `npm-${email}`,
        "--password",
        password,
        "--agent",
        "readme agent",
        "--permissions",
        "catalog:read"
      ],
      {},
      true
    )
    expect(r.code).toBe(0)
    expect((await me(server.baseUrl, secretIn(r.stdout))).status).toBe(200)
  })

  it("usage mistakes exit 2 with a reason", async () => {
    const unknown = await cli([
      "create",
      "--url",
      server.baseUrl,
      "--email",
      email,
      "--password",
      password,
      "--agent",
      "a",
      "--permissions",
      "catalog:write"
    ])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown permission(s): catalog:write")
    const missing = await cli([
      "create",
      "--url",
      server.baseUrl,
      "--email",
      email,
      "--password",
      password,
      "--permissions",
      "evaluate"
    ])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("--agent")
    const badExpiry = await cli([
      "create",
      "--url",
      server.baseUrl,
      "--email",
      email,
      "--password",
      password,
      "--agent",
      "a",
      "--permissions",
      "evaluate",
      "--expires",
      "soon"
    ])
    expect(badExpiry.code).toBe(2)
    expect(badExpiry.stderr).toContain("--expires")
  })

  it("without --url on memory storage it refuses and explains (the key would vanish with the process)", async () => {
    const r = await cli(
      ["create", "--email", email, "--password", password, "--agent", "a", "--permissions", "evaluate"],
      { STORAGE: "memory" }
    )
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--url http://localhost:")
    expect(r.stdout).not.toContain("ak_live_")
  })
})

const adminQuery = async (text: string) => {
  const client = new pg.Client({ connectionString: adminDatabaseUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

describe.skipIf(postgresSkipReason !== undefined)(
  "keys CLI directly on Postgres (STORAGE=postgres)",
  { timeout: 120_000 },
  () => {
    const name = `t_cli_${randomBytes(5).toString("hex")}`
    let url = ""
    let server: TestServer | undefined
    beforeAll(async () => {
      await adminQuery(`CREATE DATABASE ${name}`)
      const u = new URL(adminDatabaseUrl!)
      u.pathname = `/${name}`
      url = u.toString()
    })
    afterAll(async () => {
      await server?.close()
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    })

    it("writes into the database the server uses: create, list and revoke as the operator", async () => {
      const env = { STORAGE: "postgres", DATABASE_URL: url }
      const asked = Date.now()
      const r = await cli(
        [
          "create",
          "--email",
          "ops@example.com",
          "--password",
          "operator pass 1",
          "--agent",
          "db agent",
          "--permissions",
          "catalog:read,invest",
          "--expires",
          "30d"
        ],
        env
      )
      const answered = Date.now()
      expect(r.code, `stderr: ${r.stderr}\nstdout: ${r.stdout}`).toBe(0)
      expect(r.stderr.replace(/npm warn[^\n]*\n/g, "")).toBe("")
      const secret = secretIn(r.stdout)

      server = await startServer({ config: { storage: "postgres", databaseUrl: Option.some(Redacted.make(url)) } })
      const res = await me(server.baseUrl, secret)
      expect(res.status).toBe(200)
      const body = (await res.json()) as { key: { id: string; permissions: Array<string>; expiresAt: string } }
      expect(body.key.permissions).toEqual(["catalog:read", "invest"])
      // 30 days from when the CLI made it: between the command's start and its end.
      expect(Date.parse(body.key.expiresAt)).toBeGreaterThanOrEqual(asked + 30 * 86_400_000)
      expect(Date.parse(body.key.expiresAt)).toBeLessThanOrEqual(answered + 30 * 86_400_000)

      const list = await cli(["list", "--email", "OPS@example.com", "--json"], env)
      expect(list.code, list.stderr).toBe(0)
      const listed = JSON.parse(list.stdout) as { keys: Array<{ id: string; lastUsedAt: string | null }> }
      expect(listed.keys.map((k) => k.id)).toEqual([body.key.id])
      expect(listed.keys[0].lastUsedAt).not.toBeNull()

      const revoke = await cli(["revoke", "--key", body.key.id], env)
      expect(revoke.code, revoke.stderr).toBe(0)
      expect((await me(server.baseUrl, secret)).status).toBe(401)
    })
  }
)

describe("keys CLI directly on the embedded store (STORAGE=embedded, DATA_DIR)", { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agent-commerce-cli-"))
  let server: TestServer | undefined
  afterAll(async () => {
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("writes into the folder the server then opens; while a server holds the folder it refuses and names --url", async () => {
    const env = { STORAGE: "embedded", DATA_DIR: dataDir }
    const r = await cli(
      [
        "create",
        "--email",
        "solo@example.com",
        "--password",
        "operator pass 1",
        "--agent",
        "local agent",
        "--permissions",
        "catalog:read"
      ],
      env
    )
    expect(r.code, `stderr: ${r.stderr}\nstdout: ${r.stdout}`).toBe(0)
    const secret = secretIn(r.stdout)

    server = await startServer({ config: { storage: "embedded", dataDir } })
    expect((await me(server.baseUrl, secret)).status).toBe(200)
    const busy = await cli(["list", "--email", "solo@example.com", "--password", "operator pass 1"], env)
    expect(busy.code).not.toBe(0)
    expect(busy.stderr).toContain(`DATA_DIR ${dataDir} is in use by process ${process.pid}`)
    expect(busy.stderr).toContain("--url http://localhost:")
  })
})
