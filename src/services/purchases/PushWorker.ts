// The push dispatcher: one fiber takes due pushes from the store seller by seller (round robin, at
// most PUSH_PER_SELLER of one seller's in flight, PUSH_MAX_IN_FLIGHT in all) and sends each in its
// own fiber, so a slow or dead endpoint holds only its own seller's slots. It wakes when an order is
// placed, when a push ends (its seller may take the next), and every tick for retries that fall due
// and orders placed by other processes. Started by a Layer when AppConfig.workers.
import { Clock, Duration, Effect, Layer, Queue, Ref } from "effect"
import type { Order } from "../../schema/orders/orders.js"
import { Offers } from "./Offers.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Transactor } from "../platform/Db.js"
import { WebhookTransport } from "../webhooks/WebhookTransport.js"
import { Orders } from "./Orders.js"
import { OrderStore, type OrderStoreService } from "./OrderStore.js"
import { makePush, PUSH_MAX_IN_FLIGHT, PUSH_PER_SELLER } from "./push.js"

/** How often an idle dispatcher looks again: retries and other processes' orders are found this late at most. */
export const PUSH_TICK_MS = 250
/** Due pushes read per pass (at most PUSH_PER_SELLER of any one seller). */
export const PUSH_BATCH = 128

export interface PushWorkerOptions {
  readonly tickMs?: number
  readonly maxInFlight?: number
  readonly perSeller?: number
}

/**
 * The orders to start now: one per seller in turn, beginning with the seller after the one that went
 * first last pass, while the seller has room and the process has free slots. Skips orders already
 * in flight here.
 */
export const pickRoundRobin = (
  due: ReadonlyArray<Order>,
  options: {
    readonly free: number
    readonly perSeller: number
    readonly inFlight: ReadonlyMap<string, number>
    readonly running: ReadonlySet<string>
    readonly turn: number
  }
): Array<Order> => {
  const queues = new Map<string, Array<Order>>()
  for (const o of due) {
    if (options.running.has(o.id)) continue
    const q = queues.get(o.sellerAgentId)
    if (q === undefined) queues.set(o.sellerAgentId, [o])
    else q.push(o)
  }
  const sellers = [...queues.keys()]
  if (sellers.length === 0) return []
  const first = options.turn % sellers.length
  const order = [...sellers.slice(first), ...sellers.slice(0, first)]
  const taken = new Map<string, number>()
  const picked: Array<Order> = []
  let progress = true
  while (picked.length < options.free && progress) {
    progress = false
    for (const seller of order) {
      if (picked.length >= options.free) break
      const busy = (options.inFlight.get(seller) ?? 0) + (taken.get(seller) ?? 0)
      const next = queues.get(seller)!.shift()
      if (next === undefined || busy >= options.perSeller) continue
      taken.set(seller, (taken.get(seller) ?? 0) + 1)
      picked.push(next)
      progress = true
    }
  }
  return picked
}

/** The dispatcher, forked into the caller's scope. `placed` wakes it when this process places an order. */
export const runPushWorker = Effect.fnUntraced(function* (
  store: Pick<OrderStoreService, "duePushes">,
  attempt: (order: Order) => Effect.Effect<void>,
  placed: Effect.Effect<void>,
  options: PushWorkerOptions = {}
) {
  const tickMs = options.tickMs ?? PUSH_TICK_MS
  const maxInFlight = options.maxInFlight ?? PUSH_MAX_IN_FLIGHT
  const perSeller = options.perSeller ?? PUSH_PER_SELLER
  const scope = yield* Effect.scope
  const inFlight = new Map<string, number>()
  const running = new Set<string>()
  const turn = yield* Ref.make(0)
  // One pending wake-up is enough: a pass looks at everything due.
  const wake = yield* Queue.sliding<void>(1)
  const poke = Queue.offer(wake, undefined).pipe(Effect.asVoid)
  const sleep = Effect.raceFirst(Effect.sleep(Duration.millis(tickMs)), Queue.take(wake))

  const release = (o: Order) =>
    Effect.andThen(
      Effect.sync(() => {
        running.delete(o.id)
        const n = (inFlight.get(o.sellerAgentId) ?? 1) - 1
        if (n <= 0) inFlight.delete(o.sellerAgentId)
        else inFlight.set(o.sellerAgentId, n)
      }),
      poke
    )

  const pass = Effect.gen(function* () {
    const free = maxInFlight - running.size
    if (free <= 0) return 0
    const now = new Date(yield* Clock.currentTimeMillis).toISOString()
    const due = yield* store.duePushes(now, perSeller, PUSH_BATCH)
    const picked = pickRoundRobin(due, {
      free,
      perSeller,
      inFlight,
      running,
      turn: yield* Ref.getAndUpdate(turn, (n) => n + 1)
    })
    for (const o of picked) {
      running.add(o.id)
      inFlight.set(o.sellerAgentId, (inFlight.get(o.sellerAgentId) ?? 0) + 1)
      yield* Effect.forkIn(attempt(o).pipe(Effect.ensuring(release(o))), scope)
    }
    return picked.length
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning("order push dispatcher: pass failed; retrying", cause).pipe(Effect.as(0))
    ),
    Effect.flatMap((n) => (n > 0 ? Effect.yieldNow : sleep)),
    Effect.forever
  )

  yield* Effect.forkIn(Effect.forever(Effect.andThen(placed, poke)), scope)
  yield* Effect.forkIn(pass, scope)
})

export const PushWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const store = yield* OrderStore
    const orders = yield* Orders
    const { attempt } = makePush({
      atomically: (yield* Transactor).atomically,
      store,
      orders,
      offers: yield* Offers,
      transport: yield* WebhookTransport
    })
    yield* runPushWorker(store, attempt, orders.placed)
  })
)
