// Operator CLI for accounts, agents and API keys (`npm run keys -- create|revoke|list …`): works
// directly on the configured storage (embedded DATA_DIR or STORAGE=postgres) or over HTTP against a running server (--url).
import { Cause, Effect, Exit, Layer, Logger, References } from "effect"
import { parseArgs } from "node:util"
import type { ConfigInvalid } from "../layers/config.js"
import { type Agent, type ApiKeyView, allPermissions, type PermissionGrant } from "../schema/keys/keys.js"

const USAGE = `Usage:
  npm run keys -- create --email <e-mail> --password <password> --agent <agent name>
                         --permissions <p1,p2,…> [--expires <ISO time | Nd>] [--org <organisation>]
                         [--name <account name>] [--key-name <label>] [--url <server>] [--json]
  npm run keys -- revoke --key <key_…> [--url <server> --email <e-mail> --password <password>]
  npm run keys -- list   --email <e-mail> [--url <server> --password <password>] [--json]

Permissions: ${allPermissions.join(", ")}, or commerce:* for all four commerce ones.

Where it writes:
  --url http://localhost:3000   talks to a running server through its dashboard JSON endpoints
                                (signs up, or signs in when the account exists). Works with any storage.
  without --url                 writes straight into the configured storage: the embedded store in
                                DATA_DIR (the default; only while no server holds the folder), or
                                STORAGE=postgres with DATABASE_URL set to the server's database.
                                (STORAGE=memory lives inside one process, so a key made there would
                                vanish when this command exits.)
  The password may also come from the KEYS_PASSWORD environment variable (keeps it out of shell history).
  Without --url, revoke and list act as the operator: no password is needed.`

/** A failure the CLI reports as one line (exit code 1; 2 for usage errors). */
class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message)
  }
}

interface Options {
  readonly command: string
  readonly email?: string
  readonly password?: string
  readonly name?: string
  readonly agent?: string
  readonly org?: string
  readonly permissions: ReadonlyArray<PermissionGrant>
  readonly expiresAt: string | null
  readonly keyName: string
  readonly key?: string
  readonly url?: string
  readonly json: boolean
}

const grantNames: ReadonlyArray<string> = [...allPermissions, "commerce:*"]

const parseExpiry = (raw: string | undefined, now: number): string | null => {
  if (raw === undefined || raw === "") return null
  const days = /^(\d{1,5})d$/.exec(raw)
  if (days) return new Date(now + Number(days[1]) * 86_400_000).toISOString()
  const at = Date.parse(raw)
  if (!Number.isFinite(at)) throw new CliError(`--expires must be an ISO 8601 time (2027-01-01T00:00:00Z) or a number of days (30d), got "${raw}"`, 2)
  return new Date(at).toISOString()
}

const parseOptions = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv, now: number): Options => {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        email: { type: "string" },
        password: { type: "string" },
        name: { type: "string" },
        agent: { type: "string" },
        org: { type: "string" },
        permissions: { type: "string" },
        expires: { type: "string" },
        "key-name": { type: "string" },
        key: { type: "string" },
        url: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false }
      }
    })
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n\n${USAGE}`, 2)
  }
  const { values, positionals } = parsed
  const command = positionals[0] ?? ""
  if (values.help || command === "help" || command === "") throw new CliError(USAGE, values.help || command === "help" ? 0 : 2)
  if (!["create", "revoke", "list"].includes(command)) throw new CliError(`unknown command "${command}"\n\n${USAGE}`, 2)
  const permissions = (values.permissions ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
  const unknown = permissions.filter((p) => !grantNames.includes(p))
  if (unknown.length > 0) throw new CliError(`unknown permission(s): ${unknown.join(", ")}; choose from ${grantNames.join(", ")}`, 2)
  const url = values.url?.replace(/\/+$/, "")
  if (url !== undefined && !/^https?:\/\/[^\s/]+/.test(url)) throw new CliError(`--url must be an http(s) address, got "${values.url}"`, 2)
  const options: Options = {
    command,
    email: values.email?.trim(),
    password: values.password ?? env.KEYS_PASSWORD,
    name: values.name,
    agent: values.agent?.trim(),
    org: values.org?.trim(),
    permissions: permissions as ReadonlyArray<PermissionGrant>,
    expiresAt: parseExpiry(values.expires, now),
    keyName: values["key-name"]?.trim() || "cli",
    key: values.key?.trim(),
    url,
    json: values.json ?? false
  }
  const need = (ok: unknown, what: string) => {
    if (!ok) throw new CliError(`${command} needs ${what}\n\n${USAGE}`, 2)
  }
  if (command === "create") {
    need(options.email, "--email")
    need(options.password, "--password (or KEYS_PASSWORD)")
    need(options.agent, "--agent <agent name>")
    need(options.permissions.length > 0, "--permissions (comma-separated)")
  } else if (command === "revoke") {
    need(options.key, "--key <key id>")
    if (url) {
      need(options.email, "--email (with --url, revoking signs in as the key's owner)")
      need(options.password, "--password (or KEYS_PASSWORD)")
    }
  } else {
    need(options.email, "--email")
    if (url) need(options.password, "--password (or KEYS_PASSWORD)")
  }
  return options
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

interface Created {
  readonly account: { readonly id: string; readonly email: string; readonly created: boolean }
  readonly agent: { readonly id: string; readonly name: string; readonly created: boolean }
  readonly key: ApiKeyView
  readonly secret: string
  readonly baseUrl: string
}

const out = (line = "") => process.stdout.write(`${line}\n`)

const printCreated = (c: Created, json: boolean) => {
  if (json) {
    out(JSON.stringify({ account: c.account, agent: c.agent, key: c.key, secret: c.secret, baseUrl: c.baseUrl }, null, 2))
    return
  }
  out(`${c.account.created ? "Created" : "Using"} account ${c.account.email} (${c.account.id})`)
  out(`${c.agent.created ? "Created" : "Using"} agent "${c.agent.name}" (${c.agent.id})`)
  out(`Created API key ${c.key.id} "${c.key.name}"`)
  out(`  permissions: ${c.key.permissions.join(", ")}`)
  out(`  expires:     ${c.key.expiresAt ?? "never"}`)
  out()
  out(`  ${c.secret}`)
  out()
  out("This is the only time the key is shown: only its SHA-256 hash is stored. Keep it secret.")
  out("Send it on every request to the Agent API and the commerce protocol:")
  out(`  Authorization: Bearer ${c.secret}`)
  out(`  curl -H "Authorization: Bearer ${c.secret}" ${c.baseUrl}/api/v1/agent/me`)
}

const keyState = (k: ApiKeyView, now: number) =>
  k.revokedAt ? "revoked" : k.expiresAt && Date.parse(k.expiresAt) <= now ? "expired" : "active"

const printList = (email: string, agents: ReadonlyArray<Agent>, keys: ReadonlyArray<ApiKeyView>, json: boolean) => {
  if (json) {
    out(JSON.stringify({ email, agents, keys }, null, 2))
    return
  }
  const now = Date.now()
  out(`Account ${email}: ${agents.length} agent(s), ${keys.length} key(s)`)
  for (const a of agents) {
    out()
    out(`agent "${a.name}" ${a.id}${a.organization ? ` (${a.organization})` : ""}`)
    const own = keys.filter((k) => k.agentId === a.id)
    if (own.length === 0) out("  (no keys)")
    for (const k of own) {
      out(`  ${k.id}  ${k.prefix}…  ${keyState(k, now).padEnd(7)}  "${k.name}"`)
      out(`      permissions: ${k.permissions.join(", ")}`)
      out(`      created ${k.createdAt} · last used ${k.lastUsedAt ?? "never"} · expires ${k.expiresAt ?? "never"}${k.revokedAt ? ` · revoked ${k.revokedAt}` : ""}`)
    }
  }
}

const printRevoked = (k: ApiKeyView, json: boolean) => {
  if (json) out(JSON.stringify({ key: k }, null, 2))
  else out(`Revoked ${k.id} (${k.prefix}…) at ${k.revokedAt}; requests with it now get 401.`)
}

// ---------------------------------------------------------------------------
// HTTP mode: the dashboard JSON endpoints of a running server
// ---------------------------------------------------------------------------

const httpMode = async (o: Options): Promise<void> => {
  const base = o.url!
  let cookie = ""
  const call = async <A>(method: string, path: string, body?: unknown, okStatuses: ReadonlyArray<number> = [200, 201, 204]) => {
    let res: Response
    try {
      res = await fetch(`${base}/api/dashboard${path}`, {
        method,
        // Every write is JSON, an empty one included: the server refuses cookie writes that are not (CSRF).
        headers: { accept: "application/json", ...(method !== "GET" ? { "content-type": "application/json" } : {}), ...(cookie ? { cookie } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined
      })
    } catch (e) {
      throw new CliError(`cannot reach ${base}: ${(e as Error).message} (is the server running? npm start)`)
    }
    const setCookie = res.headers.get("set-cookie")
    if (setCookie) cookie = setCookie.split(";")[0]
    const text = await res.text()
    const data = text ? (JSON.parse(text) as unknown) : undefined
    return { status: res.status, ok: okStatuses.includes(res.status), data: data as A }
  }
  const fail = (what: string, r: { status: number; data: unknown }): never => {
    const message = (r.data as { message?: string } | undefined)?.message ?? "no details"
    throw new CliError(`${what} failed: HTTP ${r.status}: ${message}`)
  }
  const signIn = async () => {
    const r = await call<{ account: { id: string; email: string } }>("POST", "/signin", { email: o.email, password: o.password })
    if (!r.ok) fail("sign-in", r)
    return r.data.account
  }

  if (o.command === "create") {
    let created = true
    const signUp = await call<{ account: { id: string; email: string } }>("POST", "/signup", {
      email: o.email,
      password: o.password,
      name: o.name ?? o.email!.split("@")[0]
    })
    let account = signUp.data?.account
    if (signUp.status === 409) {
      created = false
      account = await signIn()
    } else if (!signUp.ok) fail("sign-up", signUp)
    const agents = await call<ReadonlyArray<Agent>>("GET", "/agents")
    if (!agents.ok) fail("listing agents", agents)
    let agent = agents.data.find((a) => a.name === o.agent)
    const agentCreated = agent === undefined
    if (!agent) {
      const r = await call<Agent>("POST", "/agents", { name: o.agent, organization: o.org ?? null })
      if (!r.ok) fail("creating the agent", r)
      agent = r.data
    }
    const k = await call<{ key: ApiKeyView; secret: string }>("POST", `/agents/${encodeURIComponent(agent.id)}/keys`, {
      name: o.keyName,
      permissions: o.permissions,
      expiresAt: o.expiresAt
    })
    if (!k.ok) fail("creating the key", k)
    await call("POST", "/signout")
    printCreated(
      {
        account: { id: account!.id, email: account!.email, created },
        agent: { id: agent.id, name: agent.name, created: agentCreated },
        key: k.data.key,
        secret: k.data.secret,
        baseUrl: base
      },
      o.json
    )
  } else if (o.command === "revoke") {
    await signIn()
    const r = await call<ApiKeyView>("POST", `/keys/${encodeURIComponent(o.key!)}/revoke`)
    if (!r.ok) fail("revoking the key", r)
    await call("POST", "/signout")
    printRevoked(r.data, o.json)
  } else {
    const account = await signIn()
    const [agents, keys] = [await call<ReadonlyArray<Agent>>("GET", "/agents"), await call<ReadonlyArray<ApiKeyView>>("GET", "/keys")]
    if (!agents.ok) fail("listing agents", agents)
    if (!keys.ok) fail("listing keys", keys)
    await call("POST", "/signout")
    printList(account.email, agents.data, keys.data, o.json)
  }
}

// ---------------------------------------------------------------------------
// Direct mode: the Keys service on the configured storage (as the server builds it)
// ---------------------------------------------------------------------------

const message = (e: unknown) => {
  const text = typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
  // The embedded store is open in a running server: talk to that server instead.
  return (e as { _tag?: unknown })?._tag === "DataDirInUse"
    ? `${text}\nWhile the server runs, point the command at it:   npm run keys -- <command> --url http://localhost:<PORT> …`
    : text
}

// The application's layers are imported only here, so the HTTP mode starts quickly.
const directProgram = async (o: Options) => {
  const { AppConfig } = await import("../services/platform/AppConfig.js")
  const { Keys, KeysStore } = await import("../services/keys/Keys.js")
  return Effect.gen(function* () {
    const keys = yield* Keys
    const store = yield* KeysStore
    const config = yield* AppConfig
    if (o.command === "create") {
      const signedUp = yield* keys.signUp({ email: o.email!, password: o.password!, name: o.name ?? o.email!.split("@")[0] }).pipe(
        Effect.map((account) => ({ account, created: true })),
        Effect.catchTag("Conflict", () =>
          // The account exists: the password must match (a session is opened and closed to check it).
          Effect.map(
            Effect.tap(keys.signIn({ email: o.email!, password: o.password! }), (s) => keys.signOut(s.token)),
            (s) => ({ account: s.account, created: false })
          )
        )
      )
      const account = signedUp.account
      const existing = (yield* keys.listAgents(account.id)).find((a) => a.name === o.agent)
      const agent = existing ?? (yield* keys.createAgent(account.id, { name: o.agent!, organization: o.org ?? null }))
      const created = yield* keys.createKey(account.id, agent.id, { name: o.keyName, permissions: o.permissions, expiresAt: o.expiresAt })
      return () =>
        printCreated(
          {
            account: { id: account.id, email: account.email, created: signedUp.created },
            agent: { id: agent.id, name: agent.name, created: existing === undefined },
            key: created.key,
            secret: created.secret,
            baseUrl: config.baseUrl
          },
          o.json
        )
    }
    if (o.command === "revoke") {
      const key = yield* store.getKey(o.key!)
      if (!key) return yield* Effect.fail(new CliError(`no key ${o.key}`))
      const revoked = yield* keys.revokeKey(key.accountId, key.id)
      return () => printRevoked(revoked, o.json)
    }
    const account = yield* store.findAccountByEmail(o.email!.toLowerCase())
    if (!account) return yield* Effect.fail(new CliError(`no account with e-mail ${o.email}`))
    const agents = yield* keys.listAgents(account.id)
    const list = yield* keys.listKeys(account.id)
    return () => printList(account.email, agents, list, o.json)
  })
}

/** Runs an effect, turning any failure or defect into a CliError. */
const run = async <A>(effect: Effect.Effect<A, unknown>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") throw failure.value instanceof CliError ? failure.value : new CliError(message(failure.value))
  throw new CliError(Cause.pretty(exit.cause))
}

/** Logs as logfmt lines on stderr, so stdout carries only the command's answer. */
const StderrLogger = Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)])

const directMode = async (o: Options): Promise<void> => {
  const { loadConfig } = await import("../layers/config.js")
  const { AppConfig } = await import("../services/platform/AppConfig.js")
  const { CoreLive } = await import("../layers/app.js")
  const config = await run(loadConfig.pipe(Effect.mapError((e: ConfigInvalid) => new CliError(e.message))))
  if (config.storage === "memory") {
    throw new CliError(
      "STORAGE is memory: the data lives inside one process, so a key made by this command would vanish when it exits.\n" +
        "Either point the command at a running server:   npm run keys -- " +
        `${o.command} --url http://localhost:${config.port} …\n` +
        "or at the server's database:                   STORAGE=embedded (DATA_DIR=…) or STORAGE=postgres DATABASE_URL=postgres://… npm run keys -- …",
      2
    )
  }
  const program = await directProgram(o)
  // The same layers as the server (CoreLive), without its background workers; logs go to stderr.
  const layer: Layer.Layer<Effect.Services<typeof program>, unknown> = CoreLive.pipe(
    Layer.provideMerge(Layer.succeed(AppConfig, { ...config, workers: false })),
    Layer.provide(StderrLogger)
  )
  const print = await run(
    program.pipe(
      Effect.provide(layer),
      Effect.provide(StderrLogger),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  )
  print()
}

const main = async () => {
  try {
    const options = parseOptions(process.argv.slice(2), process.env, Date.now())
    await (options.url ? httpMode(options) : directMode(options))
    process.exitCode = 0
  } catch (e) {
    const error = e instanceof CliError ? e : new CliError(message(e))
    ;(error.exitCode === 0 ? process.stdout : process.stderr).write(`${error.exitCode === 0 ? "" : "error: "}${error.message}\n`)
    process.exitCode = error.exitCode
  }
}

void main()
