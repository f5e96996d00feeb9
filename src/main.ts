// Entry point: config → layers → server. A bad config, a port in use or an unreachable database
// stops startup with one readable line naming what to check, and a non-zero exit.
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig, type AppConfigShape } from "./services/platform/AppConfig.js"
import { ConfigInvalid, loadConfig } from "./layers/config.js"
import { LoggerLive, ServerLive } from "./layers/app.js"

/** EX_CONFIG (sysexits): the configuration is wrong. */
const EXIT_CONFIG = 78
/** EX_UNAVAILABLE (sysexits): a port or service the server needs is not available. */
const EXIT_UNAVAILABLE = 69

const errorsOf = (cause: Cause.Cause<unknown>): ReadonlyArray<unknown> =>
  cause.reasons.flatMap((r) => (Cause.isFailReason(r) ? [r.error] : Cause.isDieReason(r) ? [r.defect] : []))

/** Walks `cause` links (ServeError → Node error, SqlError → reason → driver error). */
const chainOf = (error: unknown): ReadonlyArray<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  let e: unknown = error
  for (let i = 0; i < 8 && typeof e === "object" && e !== null; i++) {
    out.push(e as Record<string, unknown>)
    e = (e as { reason?: unknown; cause?: unknown }).reason ?? (e as { cause?: unknown }).cause
  }
  return out
}

/** Where the database is, without its password. */
const databaseTarget = (config: AppConfigShape) =>
  Option.match(config.databaseUrl, {
    onNone: () => "the database",
    onSome: (url) => {
      try {
        const u = new URL(Redacted.value(url))
        return `${u.hostname}:${u.port || "5432"}${u.pathname}`
      } catch {
        return "the database"
      }
    }
  })

/** One line for a startup failure, naming what to check; undefined when it is not a known kind. */
export const startupFailure = (cause: Cause.Cause<unknown>, config: AppConfigShape): string | undefined => {
  for (const error of errorsOf(cause)) {
    const chain = chainOf(error)
    const code = chain.map((e) => e.code).find((c): c is string => typeof c === "string")
    if (chain.some((e) => e._tag === "ServeError")) {
      if (code === "EADDRINUSE")
        return `cannot listen on port ${config.port}: the address is already in use (check PORT, or stop the other server)`
      if (code === "EACCES")
        return `cannot listen on port ${config.port}: permission denied (check PORT; ports below 1024 need privileges)`
      return `cannot listen on port ${config.port}: ${String(chain.at(-1)?.message ?? code ?? "unknown error")} (check PORT)`
    }
    const embedded = chain.find((e) => e._tag === "DataDirInUse" || e._tag === "EmbeddedStoreFailed")
    if (embedded) return String(embedded.message)
    if (chain.some((e) => e._tag === "SqlError") && config.storage === "embedded") {
      const detail = String(chain.at(-1)?.message ?? "unknown error").split("\n")[0]
      return `cannot use the embedded database in DATA_DIR ${config.dataDir}: ${detail} (check the folder, or move it aside to start empty)`
    }
    if (chain.some((e) => e._tag === "SqlError")) {
      const reason = chain.find((e) => typeof e._tag === "string" && e._tag !== "SqlError")
      const detail = String(chain.at(-1)?.message ?? reason?._tag ?? "unknown error").split("\n")[0]
      return `cannot use ${databaseTarget(config)}: ${detail} (check DATABASE_URL and that PostgreSQL is running and reachable)`
    }
  }
  return undefined
}

const fail = (line: string, code: number) =>
  Effect.sync(() => {
    process.stderr.write(`${line}\n`)
    process.exit(code)
  })

const program = Effect.gen(function* () {
  const config = yield* loadConfig
  const ConfigLive = Layer.succeed(AppConfig, config)
  return yield* Layer.launch(ServerLive(config.port).pipe(Layer.provide(ConfigLive))).pipe(
    Effect.provide(LoggerLive.pipe(Layer.provide(ConfigLive))),
    // No trace exporter is configured: with the tracer off, service spans (`traced`) are skipped.
    // Plug an OpenTelemetry layer in here and drop this line to get them.
    Effect.withTracerEnabled(false),
    Effect.catchCause((cause) => {
      const line = startupFailure(cause, config)
      return line === undefined || Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : fail(line, EXIT_UNAVAILABLE)
    })
  )
})

program.pipe(
  Effect.catchIf(
    (e): e is ConfigInvalid => e instanceof ConfigInvalid,
    (e) => fail(e.message, EXIT_CONFIG)
  ),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
