// The negotiation worker: the automatic seller's clock.
import { Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { Negotiations } from "./Negotiation.js"
import { NEGOTIATION_BATCH, NEGOTIATION_TICK_MS } from "./policy.js"

/**
 * Answers due negotiations every NEGOTIATION_TICK_MS (at once again after a full batch). Runs only
 * when AppConfig.workers; stops with the layer's scope.
 */
export const NegotiationWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const negotiations = yield* Negotiations
    const loop = negotiations.runDue().pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("negotiation worker: a pass failed; retrying", cause).pipe(Effect.as(0))
      ),
      Effect.flatMap((answered) =>
        answered >= NEGOTIATION_BATCH ? Effect.void : Effect.sleep(Duration.millis(NEGOTIATION_TICK_MS))
      ),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
  })
)
