// The webhook worker: one fiber fans new outbox events out into delivery rows; another claims
// deliveries (leased, fair across endpoints: round-robin and at most MAX_IN_FLIGHT_PER_ENDPOINT per
// endpoint) while fewer than MAX_IN_FLIGHT are being sent, and sends each in its own fiber, so a slow
// or dead endpoint holds at most its share of the slots. Started by a Layer when AppConfig.workers.
import { Duration, Effect, Layer, Queue, Ref } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { DELIVERY_BATCH, FANOUT_BATCH } from "./policy.js"
import { WebhookDelivery } from "./WebhookDelivery.js"

/** How often an idle loop looks again, and how many deliveries one process sends at once. */
export const WORKER_TICK_MS = 250
export const MAX_IN_FLIGHT = 32

export interface WorkerOptions {
  readonly tickMs?: number
  readonly maxInFlight?: number
}

const logFailure = (name: string) =>
  Effect.catchCause((cause) =>
    Effect.logWarning(`webhook worker: ${name} pass failed; retrying`, cause).pipe(Effect.as(0))
  )

/**
 * Both loops, forked into the caller's scope. The claim loop sleeps a tick when it found nothing,
 * but wakes at once when a delivery finishes (its endpoint may take the next row) or a fan-out
 * queued new rows — an endpoint's backlog is not paced by the tick.
 */
export const runWebhookWorker = Effect.fnUntraced(function* (options: WorkerOptions = {}) {
  const delivery = yield* WebhookDelivery
  const tickMs = options.tickMs ?? WORKER_TICK_MS
  const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT
  const scope = yield* Effect.scope
  const inFlight = yield* Ref.make(0)
  // One pending wake-up is enough: a claim pass looks at everything claimable.
  const wake = yield* Queue.sliding<void>(1)
  const poke = Queue.offer(wake, undefined).pipe(Effect.asVoid)
  const sleep = Effect.raceFirst(Effect.sleep(Duration.millis(tickMs)), Queue.take(wake))

  const fanOut = delivery.fanOut(FANOUT_BATCH).pipe(
    logFailure("fan-out"),
    Effect.tap((n) => (n > 0 ? poke : Effect.void)),
    Effect.flatMap((n) => (n >= FANOUT_BATCH ? Effect.yieldNow : Effect.sleep(Duration.millis(tickMs)))),
    Effect.forever
  )

  const deliver = Effect.gen(function* () {
    const free = maxInFlight - (yield* Ref.get(inFlight))
    if (free <= 0) return 0
    const claimed = yield* delivery.claimDue(Math.min(free, DELIVERY_BATCH))
    for (const d of claimed) {
      yield* Ref.update(inFlight, (n) => n + 1)
      yield* Effect.forkIn(
        delivery.deliver(d).pipe(
          logFailure("delivery"),
          Effect.ensuring(
            Effect.andThen(
              Ref.update(inFlight, (n) => n - 1),
              poke
            )
          )
        ),
        scope
      )
    }
    return claimed.length
  }).pipe(
    logFailure("claim"),
    Effect.flatMap((n) => (n > 0 ? Effect.yieldNow : sleep)),
    Effect.forever
  )

  yield* Effect.forkIn(fanOut, scope)
  yield* Effect.forkIn(deliver, scope)
})

export const WebhookWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    yield* runWebhookWorker()
  })
)
