// The x402 reconciliation in the background while the server runs (docs/x402.md): every few
// seconds the open payments — unknown settles, held orders that ended, refunds under way — are
// decided. Off with WORKERS=false or without x402.
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { X402 } from "../../services/x402/X402.js"

/** How often the reconciliation passes over open payments (unknown settles, held orders, refunds). */
const RECONCILE_EVERY = "5 seconds"

/** The reconciliation, in the background while the server runs (off with WORKERS=false or without x402). */
export const X402WorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers || Option.isNone(config.x402)) return
    const x402 = yield* X402
    yield* x402.reconcile.pipe(
      Effect.catchCause((cause) => Effect.logWarning("x402 reconciliation pass failed; retrying", cause)),
      Effect.andThen(Effect.sleep(RECONCILE_EVERY)),
      Effect.forever,
      Effect.forkScoped
    )
  })
)
