// The saga worker: resumes sagas whose driver died or whose timer is due.
import { Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { Sagas } from "./Saga.js"
import { SAGA_BATCH, SAGA_TICK_MS } from "./policy.js"

/** Resumes due sagas every SAGA_TICK_MS. Runs only when AppConfig.workers; stops with the layer's scope. */
export const SagaWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const sagas = yield* Sagas
    const loop = sagas.runDue().pipe(
      Effect.catchCause((cause) => Effect.logWarning("saga worker: a pass failed; retrying", cause).pipe(Effect.as(0))),
      Effect.flatMap((claimed) => (claimed >= SAGA_BATCH ? Effect.void : Effect.sleep(Duration.millis(SAGA_TICK_MS)))),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
  })
)
