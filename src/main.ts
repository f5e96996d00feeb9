// Entry point: config → layers → server. A bad config stops startup with one readable line.
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { AppConfig } from "./services/AppConfig.js"
import { ConfigInvalid, loadConfig } from "./layers/config.js"
import { LoggerLive, ServerLive } from "./layers/app.js"

const program = Effect.gen(function* () {
  const config = yield* loadConfig
  const ConfigLive = Layer.succeed(AppConfig, config)
  return yield* Layer.launch(ServerLive(config.port).pipe(Layer.provide(ConfigLive))).pipe(
    Effect.provide(LoggerLive.pipe(Layer.provide(ConfigLive))),
    // No trace exporter is configured: with the tracer off, service spans (`traced`) are skipped
    // instead of copying the service context for spans nobody receives. Plug an OpenTelemetry
    // layer in here and drop this line to get them.
    Effect.withTracerEnabled(false)
  )
})

program.pipe(
  Effect.catchIf(
    (e): e is ConfigInvalid => e instanceof ConfigInvalid,
    (e) =>
      Effect.sync(() => {
        process.stderr.write(`${e.message}\n`)
        process.exit(78)
      })
  ),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
