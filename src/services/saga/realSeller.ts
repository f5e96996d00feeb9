// The deliver step on a seller that fulfils its own orders (pull or push): the step places an order
// for the seller, as a buy does, except that the money stays where the escrow step put it (the
// saga's escrow: no second hold), and parks until the seller answers or the order's deadline
// passes. The seller's answer, and the expiry at the deadline, end the order under its lock and wake
// the saga in the same unit of work (the OrderOwners port, SagaOrderOwners.ts); the saga only reads
// its order, so exactly one of them ends it: never paid and refunded.
import { Effect } from "effect"
import { type Order, orderDeadlineMs } from "../../schema/orders/orders.js"
import type { SagaRecord } from "../../schema/saga/saga.js"
import type { Offer } from "../purchases/Offers.js"
import { Orders } from "../purchases/Orders.js"
import { OrderStore } from "../purchases/OrderStore.js"
import { Ids } from "../platform/Db.js"
import { SagaStore } from "./SagaStore.js"
import { type Advanced, iso, setStep } from "./policy.js"
import { makeTransitions, sagaPurchase } from "./transitions.js"

/** What a saga's order ended as, in the words the saga's failure keeps. */
const failureOf = (order: Order) =>
  order.status === "expired"
    ? `the seller did not deliver order ${order.id} before its deadline (${order.deadlineAt})`
    : `the seller failed order ${order.id}: ${order.error ?? "no reason given"}`

export const makeRealSeller = Effect.gen(function* () {
  const orders = yield* Orders
  const orderStore = yield* OrderStore
  const store = yield* SagaStore
  const ids = yield* Ids
  const { succeed, failAndCompensate, stepChanged } = yield* makeTransitions

  /**
   * The step starts: the order (its id is the transaction the saga settles or fails under), its
   * pending transaction and `order.created` to the seller, and the step running until the deadline.
   */
  const place = Effect.fnUntraced(function* (r: SagaRecord, now: number, offer: Offer, mode: "pull" | "push") {
    const { order } = yield* (
      orders
        .place({
          purchase: sagaPurchase(r, r.snapshot!, yield* ids.make("tx"), iso(now)),
          input: r.input,
          mode,
          deadlineMs: orderDeadlineMs(offer.tier)
        })
        // Nothing is held for a saga's order, so nothing can be short; the purchase is the quote's.
        .pipe(Effect.catchTags({ InsufficientFunds: Effect.die, InvalidInput: Effect.die }))
    )
    const next: SagaRecord = {
      ...r,
      transactionId: order.id,
      steps: setStep(r.steps, "deliver", {
        status: "running",
        startedAt: iso(now),
        detail: `order ${order.id} placed with the seller (${mode}); waiting for its answer until ${order.deadlineAt}`
      }),
      deliverDueAt: order.deadlineAt,
      nextRunAt: order.deadlineAt,
      updatedAt: iso(now)
    }
    yield* store.update(next)
    yield* stepChanged(next, "deliver", "running", "pending")
    const advanced: Advanced = { record: next, moved: true, placed: order }
    return advanced
  })

  /**
   * The step resumed (woken by the answer, its deadline, or a driver): the order decides. It is read,
   * not locked: a saga's step never locks its order, since the unit of work that ends an order locks
   * the order first and then tells its saga. An order still pending past its deadline is handed back
   * to the driver (`expire`), which expires it in a unit of work of its own and steps again.
   */
  const awaitAnswer = Effect.fnUntraced(function* (r: SagaRecord, now: number) {
    const orderId = r.transactionId!
    const order = yield* orderStore.get(orderId)
    if (order === undefined) return yield* Effect.die(new Error(`saga ${r.id}: its order ${orderId} is missing`))
    if (order.status === "pending") {
      if (Date.parse(order.deadlineAt) <= now) return { record: r, moved: false, expire: order.id } satisfies Advanced
      if (r.nextRunAt === order.deadlineAt) return { record: r, moved: false } satisfies Advanced
      const parked = { ...r, nextRunAt: order.deadlineAt }
      yield* store.update(parked)
      return { record: parked, moved: false } satisfies Advanced
    }
    const latencyMs = order.latencyMs ?? 0
    if (order.status === "delivered") {
      const patch = {
        output: order.output,
        snapshot: r.snapshot === null ? null : { ...r.snapshot, deliveryLatencyMs: latencyMs }
      }
      const detail = `delivered by the seller (order ${order.id}, ${latencyMs} ms)`
      return { record: yield* succeed(r, "deliver", now, patch, detail), moved: true } satisfies Advanced
    }
    const failed = yield* failAndCompensate(r, "deliver", now, failureOf(order), { latencyMs, order })
    return { record: failed, moved: true } satisfies Advanced
  })

  return { place, awaitAnswer } as const
})
