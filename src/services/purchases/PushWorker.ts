// The push dispatcher: one fiber takes due pushes from the store seller by seller (round robin, at
// most PUSH_PER_SELLER of one seller's in flight, PUSH_MAX_IN_FLIGHT in all) and sends each in its
// own fiber, so a slow or dead endpoint holds only its own seller's slots. It wakes when an order is
// placed, when a push ends (its seller may take the next), and every tick for retries that fall due
// and orders placed by other processes. One attempt is claimed in the store under a lease, so two
// processes do not push the same order at the same moment. Started by a Layer when AppConfig.workers.
import { Clock, Context, Duration, Effect, Layer, Queue, Ref, type Scope } from "effect"
import type { Order } from "../../schema/orders/orders.js"
import { Offers } from "./Offers.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Transactor } from "../platform/Db.js"
import { WebhookTransport } from "../webhooks/WebhookTransport.js"
import { Orders } from "./Orders.js"
import { OrderStore } from "./OrderStore.js"
import {
  PUSH_MAX_IN_FLIGHT,
  PUSH_PER_SELLER,
  pushBackoff,
  pushBody,
  pushHeaders,
  pushLeaseMs,
  pushTarget,
  readAnswer
} from "./push.js"

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

export interface PushDispatcherService {
  /** One attempt of one due order: claim, post, act on the answer. Never fails (a storage error waits for the lease). */
  readonly attempt: (due: Order) => Effect.Effect<void>
  /**
   * The dispatcher's loop, forked into the caller's scope until it closes: what one process runs. A
   * second call runs a second dispatcher over the same store, as another process would.
   */
  readonly run: (options?: PushWorkerOptions) => Effect.Effect<void, never, Scope.Scope>
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * How long an attempt must have before the deadline: the p95 the order was sold with, at most half
 * the seller's allowance (the allowance is twice the p95 within 10 s and 1 h, orderDeadlineMs: half of
 * it is the p95 but where the 1 h cap cut it; an order kept before promises were has only that).
 */
const promisedP95 = (order: Order) => {
  const half = Math.floor((Date.parse(order.deadlineAt) - Date.parse(order.createdAt)) / 2)
  return Math.min(order.promisedP95LatencyMs ?? half, half)
}

const make = Effect.gen(function* () {
  const { atomically } = yield* Transactor
  const store = yield* OrderStore
  const orders = yield* Orders
  const offers = yield* Offers
  const transport = yield* WebhookTransport
  const leaseMs = pushLeaseMs(transport.timeoutMs)

  /**
   * Takes the order's next attempt if it is still due: counted and leased in one unit of work, so a
   * second process reading the same due row finds it leased and leaves it. The attempt's start is when
   * the order reaches its seller (its latency runs from here). An attempt starts only while a seller
   * answering within its promised p95 can still answer before the deadline: later, the order is
   * pushed no more and expires without having been asked of the seller (refunded; not the seller's).
   */
  const claim = Effect.fnUntraced(function* (orderId: string, now: number) {
    return yield* atomically(
      Effect.gen(function* () {
        const order = yield* store.getForUpdate(orderId)
        const push = order?.push
        if (order === undefined || order.status !== "pending" || push == null || push.acceptedAt !== null) return null
        if (push.nextAttemptAt === null || Date.parse(push.nextAttemptAt) > now) return null
        const left = Date.parse(order.deadlineAt) - now
        if (left <= 0) return null // the sweeper expires it
        if (left < promisedP95(order)) {
          yield* store.recordPushAttempt(order.id, {
            ...push,
            nextAttemptAt: null,
            lastError:
              `not pushed: ${left} ms were left before the deadline, less than the ${promisedP95(order)} ms ` +
              "promised; the order expires refunded and does not count against the seller"
          })
          return null
        }
        const attempts = push.attempts + 1
        yield* store.recordPushAttempt(
          order.id,
          { attempts, nextAttemptAt: iso(now + leaseMs), acceptedAt: null, lastError: push.lastError },
          iso(now)
        )
        return { order, attempts }
      })
    )
  })

  /** Records an attempt that did not deliver, unless another process has claimed the order since (fenced by the count). */
  const settleAttempt = Effect.fnUntraced(function* (
    orderId: string,
    attempts: number,
    outcome: { accepted: boolean; error: string | null }
  ) {
    const now = yield* Clock.currentTimeMillis
    yield* atomically(
      Effect.gen(function* () {
        const order = yield* store.getForUpdate(orderId)
        if (order === undefined || order.status !== "pending" || order.push?.attempts !== attempts) return
        yield* store.recordPushAttempt(orderId, {
          attempts,
          nextAttemptAt: outcome.accepted ? null : iso(now + pushBackoff(attempts)),
          acceptedAt: outcome.accepted ? iso(now) : null,
          lastError: outcome.error
        })
      })
    )
  })

  const attempt = Effect.fnUntraced(
    function* (due: Order) {
      const claimed = yield* claim(due.id, yield* Clock.currentTimeMillis)
      if (claimed === null) return
      const { order, attempts } = claimed
      const to = pushTarget(yield* offers.fulfilmentOf(order.serviceId))
      if (typeof to === "string") return yield* settleAttempt(order.id, attempts, { accepted: false, error: to })
      const body = pushBody(order)
      const now = yield* Clock.currentTimeMillis
      const response = yield* transport.send({
        url: to.url,
        headers: pushHeaders(to.secret, order.id, now, body),
        body,
        keepBody: true
      })
      const outcome = readAnswer(response)
      switch (outcome._tag) {
        case "Accepted":
          return yield* settleAttempt(order.id, attempts, { accepted: true, error: null })
        case "Retry":
          return yield* settleAttempt(order.id, attempts, { accepted: false, error: outcome.error })
        case "Delivered":
        case "Failed": {
          const answered =
            outcome._tag === "Delivered"
              ? orders.deliver(order.sellerAgentId, order.id, outcome.body)
              : orders.fail(order.sellerAgentId, order.id, outcome.body)
          // A closed order (the seller answered otherwise through the API, or the deadline passed) keeps its outcome.
          yield* answered.pipe(
            Effect.catchTag("OrderClosed", () => Effect.void),
            Effect.catch((e) =>
              settleAttempt(order.id, attempts, {
                accepted: false,
                error: `the seller's answer was refused: ${e.message}`
              })
            )
          )
        }
      }
    },
    (effect, due) =>
      effect.pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning(`order push of ${due.id} failed; retried after its lease`, cause)
        )
      )
  )

  const run = Effect.fnUntraced(function* (options: PushWorkerOptions = {}) {
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

    yield* Effect.forkIn(Effect.forever(Effect.andThen(orders.placed, poke)), scope)
    yield* Effect.forkIn(pass, scope)
  })

  return PushDispatcher.of({ attempt, run })
})

export class PushDispatcher extends Context.Service<PushDispatcher, PushDispatcherService>()(
  "agent-commerce/PushDispatcher"
) {
  /** Its ports (the order store, Orders, Offers, the transport, the Transactor) stay open. */
  static readonly layer = Layer.effect(PushDispatcher, make)
}

/** Runs the dispatcher in this process when AppConfig.workers. */
export const PushWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    yield* (yield* PushDispatcher).run()
  })
).pipe(Layer.provide(PushDispatcher.layer))
