// Operator CLI for accounts, agents and API keys (`npm run keys -- create|revoke|list …`): works
// directly on the configured storage (embedded DATA_DIR or STORAGE=postgres) or over HTTP against
// a running server (--url).
import { Cause, Effect, Exit, Layer, Logger, References } from "effect"
import type { ConfigInvalid } from "../layers/config.js"
import { CliError, type Options, parseOptions } from "./keys/options.js"
import { httpMode } from "./keys/http.js"
import { printCreated, printList, printRevoked } from "./keys/output.js"

// ---------------------------------------------------------------------------
// Direct mode: the Keys service on the configured storage (as the server builds it)
// ---------------------------------------------------------------------------

const message = (e: unknown) => {
  const text =
    typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
  // The embedded store is open in a running server: talk to that server instead.
  return (e as { _tag?: unknown })?._tag === "DataDirInUse"
    ? `${text}\nWhile the server runs, point the command at it:   ` +
        "npm run keys -- <command> --url http://localhost:<PORT> …"
    : text
}

// The application's layers are imported only here, so the HTTP mode starts quickly.
const directProgram = async (o: Options) => {
  const { AppConfig } = await import("../services/platform/AppConfig.js")
  const { Keys } = await import("../services/keys/Keys.js")
  const { KeysStore } = await import("../services/keys/KeysStore.js")
  return Effect.gen(function* () {
    const keys = yield* Keys
    const store = yield* KeysStore
    const config = yield* AppConfig
    if (o.command === "create") {
      const signedUp = yield* keys
        .signUp({ email: o.email!, password: o.password!, name: o.name ?? o.email!.split("@")[0] })
        .pipe(
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
      const created = yield* keys.createKey(account.id, agent.id, {
        name: o.keyName,
        permissions: o.permissions,
        expiresAt: o.expiresAt
      })
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
  if (failure._tag === "Some")
    throw failure.value instanceof CliError ? failure.value : new CliError(message(failure.value))
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
      "STORAGE is memory: the data lives inside one process, " +
        "so a key made by this command would vanish when it exits.\n" +
        "Either point the command at a running server:   npm run keys -- " +
        `${o.command} --url http://localhost:${config.port} …\n` +
        "or at the server's database:                   " +
        "STORAGE=embedded (DATA_DIR=…) or STORAGE=postgres DATABASE_URL=postgres://… npm run keys -- …",
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
      Effect.provide(Layer.provideMerge(layer, StderrLogger)),
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
    ;(error.exitCode === 0 ? process.stdout : process.stderr).write(
      `${error.exitCode === 0 ? "" : "error: "}${error.message}\n`
    )
    process.exitCode = error.exitCode
  }
}

void main()
