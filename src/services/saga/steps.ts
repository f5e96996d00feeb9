// The saga's step machine: what each of quote → escrow → deliver → settle → confirm does to a
// locked, running saga, and when a step fails instead (then compensated: SagaTransitions). The
// quote is the purchase domain's offer snapshot and price; the deliver step of a seller that fulfils
// its own orders places an order, as a buy does, except that the money stays where the escrow step
// put it (the saga's escrow: no second hold), and waits until the seller answers or the order's
// deadline passes. The seller's answer, and the expiry at the deadline, end the order under its lock
// and wake the saga in the same unit of work (the OrderOwners port, SagaOrderOwners.ts); the saga only
// reads its order, so exactly one of them ends it: never paid and refunded. The platform's simulated
// sellers answer here.
import { Clock, Context, Effect, Layer } from "effect"
import { escrowAccount, walletAccount } from "../../schema/ledger/ledger.js"
import { type Order, orderDeadlineMs } from "../../schema/orders/orders.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { DeliveryMode, SagaRecord, SagaSnapshot } from "../../schema/saga/saga.js"
import { deliverTimeoutMs, deliveryModes, simulateDelivery, simulatedOutput } from "../purchases/simulation.js"
import { type Offer, Offers } from "../purchases/Offers.js"
import { NegotiatedPrices } from "../purchases/NegotiatedPrices.js"
import { Orders } from "../purchases/Orders.js"
import { OrderStore } from "../purchases/OrderStore.js"
import { snapshotOf } from "../purchases/records.js"
import { Settlement } from "../purchases/Settlement.js"
import { KeysStore } from "../keys/KeysStore.js"
import { Ledger } from "../ledger/Ledger.js"
import { Ids } from "../platform/Db.js"
import { Wallet } from "../wallet/Wallet.js"
import { SagaStore } from "./SagaStore.js"
import { type Advanced, currentIndex, iso, setStep } from "./policy.js"
import { SagaTransitions, sagaPurchase } from "./transitions.js"

/** The simulated delivery latency of the seller's answer (the same rule as /buy's deliveries). */
const latencyOf = (
  offer: Offer,
  input: unknown,
  reference: string,
  asked: { readonly mode: DeliveryMode; readonly delayMs: number }
) => {
  if (asked.mode === "slow") return asked.delayMs
  // Catalog's types brand cents; the shapes are the same.
  type Delivered = Parameters<typeof simulateDelivery>
  return simulateDelivery(
    offer.service as unknown as Delivered[0],
    offer.tier as unknown as Delivered[1],
    input,
    reference,
    asked
  ).latencyMs
}

export interface SagaStepsService {
  /** One step of a locked, running saga, inside the caller's unit of work (Sagas.advance). */
  readonly step: (r: SagaRecord) => Effect.Effect<Advanced, StorageUnavailable>
}

/** What a saga's order ended as, in the words the saga's failure keeps. */
const failureOf = (order: Order) =>
  order.status === "expired"
    ? `the seller did not deliver order ${order.id} before its deadline (${order.deadlineAt})`
    : `the seller failed order ${order.id}: ${order.error ?? "no reason given"}`

const make = Effect.gen(function* () {
  const store = yield* SagaStore
  const ledger = yield* Ledger
  const negotiations = yield* NegotiatedPrices
  const offers = yield* Offers
  const ids = yield* Ids
  // The commerce core: wallet policies (limits, allowed sellers and categories, autonomy level,
  // low-balance warning, auto-recharge), and the one writer of purchases the saga settles through.
  const wallet = yield* Wallet
  const settlement = yield* Settlement
  const modeOf = deliveryModes(yield* KeysStore)
  const { succeed, failAndCompensate, stepChanged } = yield* SagaTransitions
  const orders = yield* Orders
  const orderStore = yield* OrderStore

  /**
   * The wallet's verdict on the saga's purchase, under the wallet lock (inside the caller's unit
   * of work): null when it may go ahead, else why not. The limits count the escrow other running
   * sagas hold. A saga does not wait for the owner: a purchase that needs approval is refused.
   */
  const policyVerdict = Effect.fnUntraced(function* (buyer: string, price: number, category: string, seller: string) {
    const policy = yield* wallet.lock(buyer)
    const verdict = yield* Effect.result(
      wallet.authorize(buyer, policy, { priceCents: price, category, sellerAgentId: seller }, { approved: false })
    )
    if (verdict._tag === "Failure") {
      if (verdict.failure._tag === "StorageUnavailable") return yield* Effect.fail(verdict.failure)
      const refusal = verdict.failure
      return { policy, refused: `wallet policy ${refusal.policy}: ${refusal.message}`, refusal }
    }
    if (verdict.success === null) return { policy, refused: null, refusal: undefined }
    const why =
      verdict.success === "manual"
        ? "the wallet's autonomy level is manual"
        : `${price} cents is above the wallet's approval threshold`
    return {
      policy,
      refused:
        `${why}: the purchase needs the owner's approval, and a saga runs only within autonomous limits ` +
        "(use POST /buy, which waits for approval)",
      refusal: undefined
    }
  })

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

  const quote = Effect.fnUntraced(function* (r: SagaRecord, now: number) {
    const offer = yield* Effect.result(offers.get(r.serviceId, r.tierId))
    if (offer._tag === "Failure") {
      if (offer.failure._tag === "StorageUnavailable") return yield* Effect.fail(offer.failure)
      return { record: yield* failAndCompensate(r, "quote", now, offer.failure.message), refusal: undefined }
    }
    const { service, tier } = offer.success
    let price = tier.priceCents
    let detail = `list price ${price} cents (${service.name}, ${tier.name})`
    if (r.negotiationId !== null) {
      const redeemed = yield* Effect.result(
        negotiations.redeem({
          agentId: r.buyerAgentId,
          negotiationId: r.negotiationId,
          serviceId: r.serviceId,
          tierId: r.tierId,
          usedBy: r.id
        })
      )
      if (redeemed._tag === "Failure") {
        if (redeemed.failure._tag === "StorageUnavailable") return yield* Effect.fail(redeemed.failure)
        return { record: yield* failAndCompensate(r, "quote", now, redeemed.failure.message), refusal: undefined }
      }
      price = redeemed.success.priceCents
      detail = `negotiated price ${price} cents (negotiation ${r.negotiationId}, list ${tier.priceCents})`
    }
    if (price < 1) {
      const reason = `price ${price} is below the 1-cent minimum charge`
      return { record: yield* failAndCompensate(r, "quote", now, reason), refusal: undefined }
    }
    const { refused, refusal } = yield* policyVerdict(r.buyerAgentId, price, service.category, service.sellerAgentId)
    if (refused !== null) return { record: yield* failAndCompensate(r, "quote", now, refused), refusal }
    // The offer snapshot, as every purchase makes it; the saga keeps what its record does not hold already.
    const snap = snapshotOf(service, tier)
    const snapshot: SagaSnapshot = {
      serviceName: snap.serviceName,
      category: snap.category,
      pricingModel: snap.pricingModel,
      listPriceCents: snap.listPriceCents
    }
    return { record: yield* succeed(r, "quote", now, { priceCents: price, snapshot }, detail), refusal: undefined }
  })

  const escrow = Effect.fnUntraced(function* (r: SagaRecord, now: number) {
    const price = r.priceCents!
    // The money moves here, so the policy is checked again under the wallet lock: the quote's
    // check may be stale (other sagas escrowed since, the owner tightened the policy).
    const { refused, policy, refusal } = yield* policyVerdict(
      r.buyerAgentId,
      price,
      r.snapshot!.category,
      r.sellerAgentId
    )
    if (refused !== null) return { record: yield* failAndCompensate(r, "escrow", now, refused), refusal }
    const held = yield* Effect.result(
      ledger.transfer({
        kind: "escrow_hold",
        reference: r.id,
        memo: `saga ${r.id}: escrow`,
        from: walletAccount(r.buyerAgentId),
        to: escrowAccount(r.id),
        amount: price
      })
    )
    if (held._tag === "Failure") {
      if (held.failure._tag === "StorageUnavailable") return yield* Effect.fail(held.failure)
      return { record: yield* failAndCompensate(r, "escrow", now, held.failure.message), refusal: held.failure }
    }
    // Low-balance warning and auto-recharge, as after any debit.
    const after = yield* ledger.balance(walletAccount(r.buyerAgentId))
    yield* wallet.afterDebit(r.buyerAgentId, policy, after + price, after)
    const detail = `${price} cents held in ${escrowAccount(r.id)} (entry ${held.success.id})`
    return { record: yield* succeed(r, "escrow", now, {}, detail), refusal: undefined }
  })

  const deliver = Effect.fnUntraced(function* (r: SagaRecord, now: number, pending: boolean) {
    // The seller's order, once placed, decides the step whatever the listing says now.
    if (!pending && r.transactionId !== null) return yield* awaitAnswer(r, now)
    const offer = yield* Effect.result(offers.get(r.serviceId, r.tierId))
    if (offer._tag === "Failure") {
      if (offer.failure._tag === "StorageUnavailable") return yield* Effect.fail(offer.failure)
      const moved = yield* failAndCompensate(r, "deliver", now, `the seller cannot deliver: ${offer.failure.message}`)
      return { record: moved, moved: true }
    }
    const fulfilment = offer.success.service.fulfilment?.mode ?? "simulated"
    if (pending && fulfilment !== "simulated") return yield* place(r, now, offer.success, fulfilment)
    const asked = yield* modeOf(r.input, r.sellerAgentId)
    const { mode, delayMs } = asked
    const timeout = deliverTimeoutMs(offer.success.tier)
    const delivered = () => ({
      output: simulatedOutput(offer.success, r.input, r.id),
      snapshot:
        r.snapshot === null
          ? null
          : { ...r.snapshot, deliveryLatencyMs: latencyOf(offer.success, r.input, r.id, asked) }
    })
    const moved = (record: SagaRecord): Advanced => ({ record, moved: true })
    if (pending) {
      if (mode === "ok") return moved(yield* succeed(r, "deliver", now, delivered(), "delivered (simulated seller)"))
      if (mode === "fail") {
        const latencyMs = Math.max(1, Math.round(offer.success.tier.sla.p95LatencyMs / 2))
        const reason = "the seller reported a delivery failure (simulated)"
        return moved(yield* failAndCompensate(r, "deliver", now, reason, { latencyMs }))
      }
      // timeout / slow: the step runs until the seller's answer or the deadline.
      const dueAt = iso(now + (mode === "slow" ? Math.min(delayMs, timeout) : timeout))
      const next: SagaRecord = {
        ...r,
        steps: setStep(r.steps, "deliver", {
          status: "running",
          startedAt: iso(now),
          detail: `waiting for the seller (timeout ${timeout} ms)`
        }),
        deliverDueAt: dueAt,
        nextRunAt: dueAt,
        updatedAt: iso(now)
      }
      yield* store.update(next)
      yield* stepChanged(next, "deliver", "running", "pending")
      return moved(next)
    }
    // running: resumed after its timer (or by a driver that came too early).
    if (r.deliverDueAt !== null && Date.parse(r.deliverDueAt) > now) {
      if (r.nextRunAt !== r.deliverDueAt) {
        const parked = { ...r, nextRunAt: r.deliverDueAt }
        yield* store.update(parked)
        return { record: parked, moved: false }
      }
      return { record: r, moved: false }
    }
    if (mode === "slow" && delayMs < timeout) {
      const detail = `delivered after ${delayMs} ms (simulated slow seller)`
      return moved(yield* succeed(r, "deliver", now, delivered(), detail))
    }
    if (mode === "ok") return moved(yield* succeed(r, "deliver", now, delivered(), "delivered (simulated seller)"))
    const reason = `the seller did not deliver within ${timeout} ms (timeout)`
    return moved(yield* failAndCompensate(r, "deliver", now, reason, { latencyMs: timeout }))
  })

  /** The purchase settled from `from`, as the settlement writer records it. */
  const settle = Effect.fnUntraced(function* (
    r: SagaRecord,
    now: number,
    from: { _tag: "escrow"; sagaId: string } | { _tag: "posted"; entryId: string }
  ) {
    const latencyMs = r.snapshot?.deliveryLatencyMs ?? 0
    // A seller's order stands as the pending transaction its id names: the settlement completes it.
    const order = r.transactionId === null ? undefined : yield* orderStore.get(r.transactionId)
    const input =
      order === undefined
        ? {
            purchase: sagaPurchase(r, r.snapshot!, yield* ids.make("tx"), iso(now)),
            delivery: { latencyMs, output: r.output }
          }
        : {
            purchase: sagaPurchase(r, r.snapshot!, order.id, order.createdAt),
            delivery: { latencyMs, output: r.output, deliveredAt: order.answeredAt ?? iso(now) },
            pending: true
          }
    return yield* settlement
      .settle({ ...input, from, memo: `saga ${r.id}: settlement` })
      .pipe(Effect.catchTag(["InvalidInput", "InsufficientFunds"], (e) => Effect.die(e)))
  })

  const settleStep = Effect.fnUntraced(function* (r: SagaRecord, now: number) {
    // The pivot: from here the saga only moves forward (a failure is retried, never compensated).
    // The settlement writer moves the escrow 85/15 and records the purchase with its events.
    // The buyer's wallet is locked first: the price moves from held to spent, and a limit check
    // of another purchase (which holds this lock while it reads held, then spent) must see it
    // on one side only, never on both.
    yield* wallet.lock(r.buyerAgentId)
    const { tx } = yield* settle(r, now, { _tag: "escrow", sagaId: r.id })
    const detail =
      `${tx.sellerCents} cents to the seller, ${tx.feeCents} cents platform fee (entry ${tx.ledgerEntryId}); ` +
      `transaction ${tx.id} recorded`
    return yield* succeed(r, "settle", now, { transactionId: tx.id }, detail)
  })

  const confirm = Effect.fnUntraced(function* (r: SagaRecord, now: number) {
    const left = yield* ledger.balance(escrowAccount(r.id))
    if (left !== 0) return yield* Effect.die(new Error(`saga ${r.id}: escrow holds ${left} cents after settlement`))
    let transactionId = r.transactionId
    if (transactionId === null) {
      // Settled before the settlement writer recorded transactions: record it against its entry now.
      const settled = (yield* ledger.entriesByReference(r.id)).find((e) => e.kind === "escrow_settle")
      if (!settled) return yield* Effect.die(new Error(`saga ${r.id}: settled without an escrow_settle entry`))
      transactionId = (yield* settle(r, now, { _tag: "posted", entryId: settled.id })).tx.id
    }
    const detail = `escrow empty; transaction ${transactionId} recorded; purchase complete`
    return yield* succeed(r, "confirm", now, { transactionId }, detail)
  })

  /** One step of a locked, running saga (inside the caller's unit of work). */
  const step = Effect.fnUntraced(function* (r: SagaRecord) {
    const now = yield* Clock.currentTimeMillis
    const i = currentIndex(r)
    if (r.status !== "running" || i < 0) return { record: r, moved: false }
    const current = r.steps[i]
    const moved = (record: SagaRecord): Advanced => ({ record, moved: true })
    switch (current.name) {
      case "quote":
      case "escrow": {
        const { record, refusal } = yield* current.name === "quote" ? quote(r, now) : escrow(r, now)
        return refusal === undefined ? moved(record) : { record, moved: true, refusal }
      }
      case "deliver":
        return yield* deliver(r, now, current.status === "pending")
      case "settle":
        return moved(yield* settleStep(r, now))
      case "confirm":
        return moved(yield* confirm(r, now))
    }
  })

  return SagaSteps.of({ step })
})

export class SagaSteps extends Context.Service<SagaSteps, SagaStepsService>()("agent-commerce/SagaSteps") {
  /** Its services and ports (the stores, Orders, Settlement, NegotiatedPrices, Offers) are provided by Sagas' layer. */
  static readonly layer = Layer.effect(SagaSteps, make).pipe(Layer.provide(SagaTransitions.layer))
}
