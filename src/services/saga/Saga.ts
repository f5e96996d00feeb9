// Saga: the five-step purchase (quote → escrow → deliver → settle → confirm) as a durable state
// table. Every step transition is committed with its ledger effect and events in one unit of
// work; a failure before settle compensates in that same unit (escrow released, negotiated price
// given back); confirm records the purchase in the commerce history; a worker resumes sagas
// whose driver died (lease expired) or whose timer is due.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { escrowAccount, splitSettlement, walletAccount } from "../../schema/ledger/ledger.js"
import { Saga, type SagaBody, type SagaRecord, type SagaSnapshot, type SagaStep, type SagaStepName, sagaHolds, sagaSteps, type StepStatus } from "../../schema/saga/saga.js"
import type { Caller } from "../keys/Caller.js"
import { simulateDelivery } from "../commerce/Catalog.js"
import { noReferences, Settlement } from "../commerce/Settlement.js"
import { atomically, Ids } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { Negotiations } from "../negotiation/Negotiation.js"
import { deliverTimeoutMs, deliveryModes, type Offer, Offers, simulatedOutput } from "../commerce/Offers.js"
import { KeysStore } from "../keys/Keys.js"
import type { DeliveryMode } from "../../schema/saga/saga.js"
import { Wallet } from "../wallet/Wallet.js"

/** Storage port for sagas. */
export class SagaStore extends Context.Service<
  SagaStore,
  {
    readonly insert: (record: SagaRecord) => Effect.Effect<void, StorageUnavailable>
    readonly get: (id: string) => Effect.Effect<SagaRecord | undefined, StorageUnavailable>
    /** The row, locked for this unit of work. */
    readonly getForUpdate: (id: string) => Effect.Effect<SagaRecord | undefined, StorageUnavailable>
    readonly update: (record: SagaRecord) => Effect.Effect<void, StorageUnavailable>
    /**
     * Ids of up to `limit` running sagas due at `now` (nextRunAt ≤ now), oldest first, whose
     * nextRunAt is pushed to `leaseUntil` (rows another process holds are skipped: SKIP LOCKED).
     */
    readonly claimDue: (now: string, leaseUntil: string, limit: number) => Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  }
>()("SagaStore") {}

/**
 * A driver (the request that started the saga, or a worker) holds a saga for this long between
 * steps; when it dies, another process takes the saga over once the lease has run out.
 */
export const SAGA_LEASE_MS = 5_000
export const SAGA_TICK_MS = 250
export const SAGA_BATCH = 20

const iso = (ms: number) => new Date(ms).toISOString()

const currentIndex = (r: SagaRecord) => r.steps.findIndex((s) => s.status === "pending" || s.status === "running")

export const toSaga = (r: SagaRecord): Saga => {
  const i = currentIndex(r)
  const settled = r.steps.find((s) => s.name === "settle")?.status === "succeeded"
  const split = settled && r.priceCents !== null ? splitSettlement(r.priceCents) : undefined
  return Saga.make({
    id: r.id,
    status: r.status,
    serviceId: r.serviceId,
    tierId: r.tierId,
    sellerAgentId: r.sellerAgentId,
    negotiationId: r.negotiationId,
    priceCents: r.priceCents as Saga["priceCents"],
    transactionId: r.transactionId,
    currentStep: r.status === "running" && i >= 0 ? r.steps[i].name : null,
    steps: [...r.steps],
    failure: r.failure,
    settlement: split ? { priceCents: r.priceCents!, sellerCents: split.sellerCents, feeCents: split.feeCents } as Saga["settlement"] : null,
    output: r.output ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt
  })
}

const notFound = (id: string) => new NotFound({ message: `saga ${id} not found`, resource: "saga", id })

/** What one `advance` did: moved a step (or finished), or found the saga waiting on a timer. */
type Advanced = { readonly record: SagaRecord; readonly moved: boolean }

export class Sagas extends Context.Service<Sagas>()("Sagas", {
  make: Effect.gen(function* () {
    const store = yield* SagaStore
    const ledger = yield* Ledger
    const events = yield* Events
    const negotiations = yield* Negotiations
    const offers = yield* Offers
    const ids = yield* Ids
    // The commerce core: wallet policies (limits, allowed sellers and categories, autonomy level,
    // low-balance warning, auto-recharge), and the one writer of purchases the saga settles through.
    const wallet = yield* Wallet
    const settlement = yield* Settlement
    const modeOf = deliveryModes(yield* KeysStore)

    /** The simulated delivery latency of the seller's answer (the same rule as /buy's deliveries). */
    const latencyOf = (offer: Offer, input: unknown, reference: string, asked: { readonly mode: DeliveryMode; readonly delayMs: number }) => {
      if (asked.mode === "slow") return asked.delayMs
      // Catalog's types brand cents; the shapes are the same.
      return simulateDelivery(offer.service as unknown as Parameters<typeof simulateDelivery>[0], offer.tier as unknown as Parameters<typeof simulateDelivery>[1], input, reference, asked).latencyMs
    }

    /** The saga's purchase as the settlement writer takes it (GET /transactions shows it). */
    const purchaseOf = (r: SagaRecord, snapshot: SagaSnapshot, transactionId: string, now: number, delivery: { readonly latencyMs: number; readonly output: unknown }) => ({
      transactionId,
      source: "saga" as const,
      buyerAgentId: r.buyerAgentId,
      offer: {
        serviceId: r.serviceId,
        serviceName: snapshot.serviceName,
        category: snapshot.category,
        pricingModel: snapshot.pricingModel,
        sellerAgentId: r.sellerAgentId,
        tierId: r.tierId,
        listPriceCents: snapshot.listPriceCents
      },
      priceCents: r.priceCents ?? 0,
      delivery,
      references: { ...noReferences, negotiationId: r.negotiationId, sagaId: r.id },
      at: iso(now)
    })

    const setStep = (steps: ReadonlyArray<SagaStep>, name: SagaStepName, patch: Partial<SagaStep>) =>
      steps.map((s) => (s.name === name ? { ...s, ...patch } : s))

    const stepChanged = (r: SagaRecord, name: SagaStepName, status: StepStatus, previous: StepStatus, error: string | null = null) =>
      events.emit(r.buyerAgentId, "saga.step_changed", { sagaId: r.id, step: name, status, previousStatus: previous, sagaStatus: r.status, error })

    /** Marks `name` succeeded and the saga ready for its next step (or completed after confirm). */
    const succeed = Effect.fnUntraced(function* (r: SagaRecord, name: SagaStepName, now: number, patch: Partial<SagaRecord>, detail: string) {
      const at = iso(now)
      const previous = r.steps.find((s) => s.name === name)!.status
      const last = name === "confirm"
      const next: SagaRecord = {
        ...r,
        ...patch,
        steps: setStep(r.steps, name, { status: "succeeded", startedAt: r.steps.find((s) => s.name === name)!.startedAt ?? at, finishedAt: at, detail }),
        status: last ? "completed" : "running",
        nextRunAt: last ? null : iso(now + SAGA_LEASE_MS),
        deliverDueAt: name === "deliver" ? null : r.deliverDueAt,
        updatedAt: at,
        finishedAt: last ? at : null
      }
      yield* store.update(next)
      yield* stepChanged(next, name, "succeeded", previous)
      if (last) {
        const split = splitSettlement(next.priceCents ?? 0)
        yield* events.emit(next.buyerAgentId, "saga.completed", {
          sagaId: next.id,
          transactionId: next.transactionId,
          amountCents: next.priceCents,
          serviceId: next.serviceId,
          tierId: next.tierId,
          sellerCents: split.sellerCents,
          feeCents: split.feeCents
        })
      }
      return next
    })

    /**
     * The failure of step `name` and the compensation of every step before it, in one unit of
     * work: escrow released to the buyer, a redeemed negotiation given back; later steps skipped.
     */
    const failAndCompensate = Effect.fnUntraced(function* (r: SagaRecord, name: SagaStepName, now: number, reason: string, delivery?: { readonly latencyMs: number }) {
      const at = iso(now)
      // Releasing held escrow changes what the buyer's limit checks read: under the wallet lock, as they are.
      if (sagaHolds(r)) yield* wallet.lock(r.buyerAgentId)
      // The seller failed: an uncharged, failed transaction, as /buy records (it counts in the SLA report).
      const transactionId =
        name === "deliver" && r.snapshot !== null
          ? (yield* settlement.recordFailed(
              { ...purchaseOf(r, r.snapshot, yield* ids.make("tx"), now, { latencyMs: delivery?.latencyMs ?? 0, output: null }), references: { ...noReferences, sagaId: r.id } },
              reason
            )).tx.id
          : r.transactionId
      const failedIndex = sagaSteps.indexOf(name)
      let steps = setStep(r.steps, name, { status: "failed", startedAt: r.steps[failedIndex].startedAt ?? at, finishedAt: at, detail: reason })
      yield* stepChanged({ ...r, steps }, name, "failed", r.steps[failedIndex].status, reason)
      for (let i = failedIndex - 1; i >= 0; i--) {
        const step = steps[i]
        if (step.status !== "succeeded") continue
        if (step.name === "escrow" && r.priceCents !== null && r.priceCents > 0) {
          yield* ledger.transfer({
            kind: "escrow_release",
            reference: r.id,
            memo: `saga ${r.id}: ${name} failed, escrow returned`,
            from: escrowAccount(r.id),
            to: walletAccount(r.buyerAgentId),
            amount: r.priceCents
          }).pipe(Effect.orDie)
        }
        steps = setStep(steps, step.name, { status: "compensated", compensatedAt: at })
        yield* stepChanged({ ...r, steps }, step.name, "compensated", "succeeded")
      }
      // A price redeemed by this saga (in an earlier quote, or in the failing quote itself) is given back.
      if (r.negotiationId !== null) yield* negotiations.release(r.negotiationId, r.id)
      for (let i = failedIndex + 1; i < steps.length; i++) steps = setStep(steps, steps[i].name, { status: "skipped" })
      const next: SagaRecord = {
        ...r,
        steps,
        transactionId,
        status: "compensated",
        failure: { step: name, reason },
        nextRunAt: null,
        deliverDueAt: null,
        updatedAt: at,
        finishedAt: at
      }
      yield* store.update(next)
      yield* events.emit(r.buyerAgentId, "saga.compensated", {
        sagaId: r.id,
        failedStep: name,
        reason,
        refundedCents: steps[1].status === "compensated" ? r.priceCents : 0,
        transactionId
      })
      return next
    })

    /**
     * The wallet's verdict on the saga's purchase, under the wallet lock (inside the caller's unit
     * of work): null when it may go ahead, else why not. The limits count the escrow other running
     * sagas hold. A saga does not wait for the owner: a purchase that needs approval is refused.
     */
    const policyVerdict = Effect.fnUntraced(function* (buyer: string, price: number, category: string, seller: string) {
      const policy = yield* wallet.lock(buyer)
      const verdict = yield* Effect.result(wallet.authorize(buyer, policy, { priceCents: price, category, sellerAgentId: seller }, { approved: false }))
      if (verdict._tag === "Failure") {
        if (verdict.failure._tag === "StorageUnavailable") return yield* Effect.fail(verdict.failure)
        return { policy, refused: `wallet policy ${verdict.failure.policy}: ${verdict.failure.message}` }
      }
      if (verdict.success === null) return { policy, refused: null }
      const why = verdict.success === "manual" ? "the wallet's autonomy level is manual" : `${price} cents is above the wallet's approval threshold`
      return { policy, refused: `${why}: the purchase needs the owner's approval, and a saga runs only within autonomous limits (use POST /buy, which waits for approval)` }
    })

    /** One step of a locked, running saga (inside the caller's unit of work). */
    const step = Effect.fnUntraced(function* (r: SagaRecord) {
      const now = yield* Clock.currentTimeMillis
      const i = currentIndex(r)
      if (r.status !== "running" || i < 0) return { record: r, moved: false }
      const current = r.steps[i]
      const moved = (record: SagaRecord): Advanced => ({ record, moved: true })
      switch (current.name) {
        case "quote": {
          const offer = yield* Effect.result(offers.get(r.serviceId, r.tierId))
          if (offer._tag === "Failure") {
            if (offer.failure._tag === "StorageUnavailable") return yield* Effect.fail(offer.failure)
            return moved(yield* failAndCompensate(r, "quote", now, offer.failure.message))
          }
          let price = offer.success.tier.priceCents
          let detail = `list price ${price} cents (${offer.success.service.name}, ${offer.success.tier.name})`
          if (r.negotiationId !== null) {
            const redeemed = yield* Effect.result(
              negotiations.redeem({ agentId: r.buyerAgentId, negotiationId: r.negotiationId, serviceId: r.serviceId, tierId: r.tierId, usedBy: r.id })
            )
            if (redeemed._tag === "Failure") {
              if (redeemed.failure._tag === "StorageUnavailable") return yield* Effect.fail(redeemed.failure)
              return moved(yield* failAndCompensate(r, "quote", now, redeemed.failure.message))
            }
            price = redeemed.success.priceCents
            detail = `negotiated price ${price} cents (negotiation ${r.negotiationId}, list ${offer.success.tier.priceCents})`
          }
          if (price < 1) return moved(yield* failAndCompensate(r, "quote", now, `price ${price} is below the 1-cent minimum charge`))
          {
            const { refused } = yield* policyVerdict(r.buyerAgentId, price, offer.success.service.category, offer.success.service.sellerAgentId)
            if (refused !== null) return moved(yield* failAndCompensate(r, "quote", now, refused))
          }
          const snapshot: SagaSnapshot = {
            serviceName: offer.success.service.name,
            category: offer.success.service.category,
            pricingModel: offer.success.service.pricingModel,
            listPriceCents: offer.success.tier.priceCents
          }
          return moved(yield* succeed(r, "quote", now, { priceCents: price, snapshot }, detail))
        }
        case "escrow": {
          const price = r.priceCents!
          // The money moves here, so the policy is checked again under the wallet lock: the quote's
          // check may be stale (other sagas escrowed since, the owner tightened the policy).
          const { refused, policy } = yield* policyVerdict(r.buyerAgentId, price, r.snapshot!.category, r.sellerAgentId)
          if (refused !== null) return moved(yield* failAndCompensate(r, "escrow", now, refused))
          const held = yield* Effect.result(
            ledger.transfer({ kind: "escrow_hold", reference: r.id, memo: `saga ${r.id}: escrow`, from: walletAccount(r.buyerAgentId), to: escrowAccount(r.id), amount: price })
          )
          if (held._tag === "Failure") {
            if (held.failure._tag === "StorageUnavailable") return yield* Effect.fail(held.failure)
            return moved(yield* failAndCompensate(r, "escrow", now, held.failure.message))
          }
          // Low-balance warning and auto-recharge, as after any debit.
          const after = yield* ledger.balance(walletAccount(r.buyerAgentId))
          yield* wallet.afterDebit(r.buyerAgentId, policy, after + price, after)
          return moved(yield* succeed(r, "escrow", now, {}, `${price} cents held in ${escrowAccount(r.id)} (entry ${held.success.id})`))
        }
        case "deliver": {
          const asked = yield* modeOf(r.input, r.sellerAgentId)
          const { mode, delayMs } = asked
          const offer = yield* Effect.result(offers.get(r.serviceId, r.tierId))
          if (offer._tag === "Failure") {
            if (offer.failure._tag === "StorageUnavailable") return yield* Effect.fail(offer.failure)
            return moved(yield* failAndCompensate(r, "deliver", now, `the seller cannot deliver: ${offer.failure.message}`))
          }
          const timeout = deliverTimeoutMs(offer.success.tier)
          const delivered = () => ({
            output: simulatedOutput(offer.success, r.input, r.id),
            snapshot: r.snapshot === null ? null : { ...r.snapshot, deliveryLatencyMs: latencyOf(offer.success, r.input, r.id, asked) }
          })
          if (current.status === "pending") {
            if (mode === "ok") return moved(yield* succeed(r, "deliver", now, delivered(), "delivered (simulated seller)"))
            if (mode === "fail") {
              const latencyMs = Math.max(1, Math.round(offer.success.tier.sla.p95LatencyMs / 2))
              return moved(yield* failAndCompensate(r, "deliver", now, "the seller reported a delivery failure (simulated)", { latencyMs }))
            }
            // timeout / slow: the step runs until the seller's answer or the deadline.
            const dueAt = iso(now + (mode === "slow" ? Math.min(delayMs, timeout) : timeout))
            const next: SagaRecord = {
              ...r,
              steps: setStep(r.steps, "deliver", { status: "running", startedAt: iso(now), detail: `waiting for the seller (timeout ${timeout} ms)` }),
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
          if (mode === "slow" && delayMs < timeout) return moved(yield* succeed(r, "deliver", now, delivered(), `delivered after ${delayMs} ms (simulated slow seller)`))
          if (mode === "ok") return moved(yield* succeed(r, "deliver", now, delivered(), "delivered (simulated seller)"))
          return moved(yield* failAndCompensate(r, "deliver", now, `the seller did not deliver within ${timeout} ms (timeout)`, { latencyMs: timeout }))
        }
        case "settle": {
          // The pivot: from here the saga only moves forward (a failure is retried, never compensated).
          // The settlement writer moves the escrow 85/15 and records the purchase with its events.
          // The buyer's wallet is locked first: the price moves from held to spent, and a limit check
          // of another purchase (which holds this lock while it reads held, then spent) must see it
          // on one side only, never on both.
          yield* wallet.lock(r.buyerAgentId)
          const { tx } = yield* settlement
            .settle({
              ...purchaseOf(r, r.snapshot!, yield* ids.make("tx"), now, { latencyMs: r.snapshot?.deliveryLatencyMs ?? 0, output: r.output }),
              from: { _tag: "escrow", sagaId: r.id },
              memo: `saga ${r.id}: settlement`
            })
            .pipe(Effect.catchTag(["InvalidInput", "InsufficientFunds"], (e) => Effect.die(e)))
          return moved(
            yield* succeed(r, "settle", now, { transactionId: tx.id }, `${tx.sellerCents} cents to the seller, ${tx.feeCents} cents platform fee (entry ${tx.ledgerEntryId}); transaction ${tx.id} recorded`)
          )
        }
        case "confirm": {
          const left = yield* ledger.balance(escrowAccount(r.id))
          if (left !== 0) return yield* Effect.die(new Error(`saga ${r.id}: escrow holds ${left} cents after settlement`))
          let transactionId = r.transactionId
          if (transactionId === null) {
            // Settled before the settlement writer recorded transactions: record it against its entry now.
            const settled = (yield* ledger.entriesByReference(r.id)).find((e) => e.kind === "escrow_settle")
            if (!settled) return yield* Effect.die(new Error(`saga ${r.id}: settled without an escrow_settle entry`))
            transactionId = (yield* settlement
              .settle({
                ...purchaseOf(r, r.snapshot!, yield* ids.make("tx"), now, { latencyMs: r.snapshot?.deliveryLatencyMs ?? 0, output: r.output }),
                from: { _tag: "posted", entryId: settled.id },
                memo: `saga ${r.id}: settlement`
              })
              .pipe(Effect.catchTag(["InvalidInput", "InsufficientFunds"], (e) => Effect.die(e)))).tx.id
          }
          return moved(yield* succeed(r, "confirm", now, { transactionId }, `escrow empty; transaction ${transactionId} recorded; purchase complete`))
        }
      }
    })

    /** Locks the saga and runs one step in its own unit of work. */
    const advance = Effect.fnUntraced(function* (id: string) {
        const r = yield* store.getForUpdate(id)
        if (!r) return yield* Effect.fail(notFound(id))
        return yield* step(r)
      }, atomically, traced("Sagas.advance"))

    /** Steps the saga until it ends or waits on a timer (each step its own unit of work). */
    const drive = Effect.fnUntraced(function* (id: string) {
      for (;;) {
        const { record, moved } = yield* advance(id)
        if (!moved || record.status !== "running") return record
      }
    })

    const start = Effect.fnUntraced(function* (caller: Pick<Caller, "agentId" | "accountId">, body: SagaBody) {
      const buyer = caller.agentId!
      const offer = yield* offers.get(body.serviceId, body.tierId)
      if (offer.service.sellerAgentId === buyer) {
        return yield* Effect.fail(new InvalidInput({ message: "you sell this service; an agent cannot buy from itself", field: "serviceId" }))
      }
      const record = yield* atomically(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const at = iso(now)
          const r: SagaRecord = {
            id: yield* ids.make("saga"),
            buyerAgentId: buyer,
            accountId: caller.accountId,
            sellerAgentId: offer.service.sellerAgentId,
            serviceId: offer.service.id,
            tierId: offer.tier.id,
            input: body.input ?? null,
            negotiationId: body.negotiationId ?? null,
            priceCents: null,
            snapshot: null,
            transactionId: null,
            status: "running",
            steps: sagaSteps.map((name) => ({ name, status: "pending" as const, startedAt: null, finishedAt: null, compensatedAt: null, detail: null })),
            failure: null,
            output: null,
            nextRunAt: iso(now + SAGA_LEASE_MS),
            deliverDueAt: null,
            createdAt: at,
            updatedAt: at,
            finishedAt: null
          }
          yield* store.insert(r)
          return r
        })
      )
      return toSaga(yield* drive(record.id))
    }, traced("Sagas.start"))

    /**
     * Takes over due sagas (a dead driver's lease ran out, or a deliver timer fired) and drives
     * each until it ends or waits again; returns how many were claimed.
     */
    const runDue = Effect.fnUntraced(function* (limit: number = SAGA_BATCH) {
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* atomically(store.claimDue(iso(now), iso(now + SAGA_LEASE_MS), limit))
      // One saga that cannot move (storage hiccup, a bug) must not hold up the others: it is
      // logged and taken over again when its lease runs out.
      for (const id of claimed) {
        yield* drive(id).pipe(Effect.catchCause((cause) => Effect.logWarning(`saga ${id}: a step failed; retried after the lease`, cause)))
      }
      return claimed.length
    }, traced("Sagas.runDue"))

    const get = (agentId: string, id: string) =>
      Effect.flatMap(store.get(id), (r) => (r && r.buyerAgentId === agentId ? Effect.succeed(toSaga(r)) : Effect.fail(notFound(id))))

    return { start, advance, drive, runDue, get } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Sagas, Sagas.make).pipe(Layer.provide([Events.layer, Ledger.layer, Wallet.layer, Negotiations.layer, Settlement.layer]))
}

/** The saga worker: resumes due sagas every SAGA_TICK_MS. Runs only when AppConfig.workers. */
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
