// Entry point: config → layers → server. A bad config stops startup with one readable line.
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { AppConfig, ConfigInvalid, loadConfig } from "./layers/config.js"
import { LoggerLive, ServerLive } from "./layers/app.js"

const program = Effect.gen(function* () {
  const config = yield* loadConfig
  const ConfigLive = Layer.succeed(AppConfig, config)
  return yield* Layer.launch(ServerLive(config.port).pipe(Layer.provide(ConfigLive))).pipe(
    Effect.provide(LoggerLive.pipe(Layer.provide(ConfigLive)))
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
