// The webhook worker: one fiber fans new outbox events out into delivery rows; another claims due
// deliveries (leased) while fewer than MAX_IN_FLIGHT are being sent and sends each in its own fiber,
// so a slow endpoint holds one slot, not the queue. Started by a Layer when AppConfig.workers.
import { Duration, Effect, Layer, Ref } from "effect"
import { AppConfig } from "./AppConfig.js"
import { DELIVERY_BATCH, FANOUT_BATCH, Webhooks } from "./Webhooks.js"

/** How often an idle loop looks again, and how many deliveries one process sends at once. */
export const WORKER_TICK_MS = 250
export const MAX_IN_FLIGHT = 32

const logFailure = (name: string) =>
  Effect.catchCause((cause) => Effect.logWarning(`webhook worker: ${name} pass failed; retrying`, cause).pipe(Effect.as(0)))

const tick = Effect.sleep(Duration.millis(WORKER_TICK_MS))

export const WebhookWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const webhooks = yield* Webhooks
    const scope = yield* Effect.scope
    const inFlight = yield* Ref.make(0)

    const fanOut = webhooks.fanOut(FANOUT_BATCH).pipe(
      logFailure("fan-out"),
      Effect.flatMap((n) => (n >= FANOUT_BATCH ? Effect.yieldNow : tick)),
      Effect.forever
    )

    const deliver = Effect.gen(function* () {
      const free = MAX_IN_FLIGHT - (yield* Ref.get(inFlight))
      if (free <= 0) return 0
      const claimed = yield* webhooks.claimDue(Math.min(free, DELIVERY_BATCH))
      for (const d of claimed) {
        yield* Ref.update(inFlight, (n) => n + 1)
        yield* Effect.forkIn(webhooks.deliver(d).pipe(logFailure("delivery"), Effect.ensuring(Ref.update(inFlight, (n) => n - 1))), scope)
      }
      return claimed.length
    }).pipe(
      logFailure("claim"),
      Effect.flatMap((n) => (n >= DELIVERY_BATCH ? Effect.yieldNow : tick)),
      Effect.forever
    )

    yield* Effect.forkScoped(fanOut)
    yield* Effect.forkScoped(deliver)
  })
)
