// How a step's outcome is written: success moves the saga to its next step (or completes it after
// confirm); a failure compensates every step before it in the same unit of work (escrow released
// to the buyer, a redeemed negotiated price given back) and skips the steps after it.
import { Context, Effect, Layer } from "effect"
import { escrowAccount, splitSettlement, walletAccount } from "../../schema/ledger/ledger.js"
import type { Order } from "../../schema/orders/orders.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import {
  type SagaRecord,
  type SagaSnapshot,
  type SagaStepName,
  sagaHolds,
  sagaSteps,
  type StepStatus
} from "../../schema/saga/saga.js"
import { Settlement } from "../purchases/Settlement.js"
import { noReferences, type PurchaseRecord } from "../purchases/records.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { NegotiatedPrices } from "../purchases/NegotiatedPrices.js"
import { Ids } from "../platform/Db.js"
import { Wallet } from "../wallet/Wallet.js"
import { SagaStore } from "./SagaStore.js"
import { iso, SAGA_LEASE_MS, setStep } from "./policy.js"

/**
 * The saga's purchase as Settlement records it (GET /transactions shows it): the offer snapshot its
 * quote kept, read back.
 */
export const sagaPurchase = (
  r: SagaRecord,
  snapshot: SagaSnapshot,
  transactionId: string,
  at: string
): PurchaseRecord => ({
  transactionId,
  source: "saga",
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
  references: { ...noReferences, negotiationId: r.negotiationId, sagaId: r.id },
  at
})

/** The writers of step outcomes; every one runs inside the caller's unit of work. */
export interface SagaTransitionsService {
  /** Tells the buyer a step's status changed (`saga.step_changed`). */
  readonly stepChanged: (
    r: SagaRecord,
    name: SagaStepName,
    status: StepStatus,
    previous: StepStatus,
    error?: string | null
  ) => Effect.Effect<unknown, StorageUnavailable>
  /** Marks `name` succeeded and the saga ready for its next step (or completed after confirm). */
  readonly succeed: (
    r: SagaRecord,
    name: SagaStepName,
    now: number,
    patch: Partial<SagaRecord>,
    detail: string
  ) => Effect.Effect<SagaRecord, StorageUnavailable>
  /**
   * The failure of step `name` and the compensation of every step before it, in one unit of
   * work: escrow released to the buyer, a redeemed negotiation given back; later steps skipped. A
   * failed delivery is recorded as a failed transaction (it counts in the seller's SLA), under the
   * order's id when the seller had an order.
   */
  readonly failAndCompensate: (
    r: SagaRecord,
    name: SagaStepName,
    now: number,
    reason: string,
    delivery?: { readonly latencyMs: number; readonly order?: Order }
  ) => Effect.Effect<SagaRecord, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* SagaStore
  const ledger = yield* Ledger
  const events = yield* Events
  const negotiations = yield* NegotiatedPrices
  const ids = yield* Ids
  const wallet = yield* Wallet
  const settlement = yield* Settlement

  const stepChanged = (
    r: SagaRecord,
    name: SagaStepName,
    status: StepStatus,
    previous: StepStatus,
    error: string | null = null
  ) =>
    events.emit(r.buyerAgentId, "saga.step_changed", {
      sagaId: r.id,
      step: name,
      status,
      previousStatus: previous,
      sagaStatus: r.status,
      error
    })

  /** Marks `name` succeeded and the saga ready for its next step (or completed after confirm). */
  const succeed = Effect.fnUntraced(function* (
    r: SagaRecord,
    name: SagaStepName,
    now: number,
    patch: Partial<SagaRecord>,
    detail: string
  ) {
    const at = iso(now)
    const previous = r.steps.find((s) => s.name === name)!.status
    const last = name === "confirm"
    const startedAt = r.steps.find((s) => s.name === name)!.startedAt ?? at
    const next: SagaRecord = {
      ...r,
      ...patch,
      steps: setStep(r.steps, name, { status: "succeeded", startedAt, finishedAt: at, detail }),
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
  const failAndCompensate = Effect.fnUntraced(function* (
    r: SagaRecord,
    name: SagaStepName,
    now: number,
    reason: string,
    delivery?: { readonly latencyMs: number; readonly order?: Order }
  ) {
    const at = iso(now)
    // Releasing held escrow changes what the buyer's limit checks read: under the wallet lock, as they are.
    if (sagaHolds(r)) yield* wallet.lock(r.buyerAgentId)
    // The seller failed: an uncharged, failed transaction, as /buy records (it counts in the SLA report).
    // A seller's order already stands as a pending transaction: that one ends failed, under its id.
    const order = delivery?.order
    const transactionId =
      name === "deliver" && r.snapshot !== null
        ? (yield* settlement.recordFailed(
            {
              purchase: {
                ...sagaPurchase(r, r.snapshot, order?.id ?? (yield* ids.make("tx")), order?.createdAt ?? at),
                references: { ...noReferences, sagaId: r.id }
              },
              delivery: {
                latencyMs: delivery?.latencyMs ?? 0,
                output: null,
                deliveredAt: order === undefined ? at : (order.answeredAt ?? at)
              },
              pending: order !== undefined
            },
            reason
          )).tx.id
        : r.transactionId
    if (order !== undefined) {
      // The buyer saw this purchase pending: it hears it failed, as a buy's order tells it.
      yield* events.emit(r.buyerAgentId, "transaction.failed", {
        transactionId,
        serviceId: r.serviceId,
        tierId: r.tierId,
        priceCents: r.priceCents,
        error: reason
      })
    }
    const failedIndex = sagaSteps.indexOf(name)
    let steps = setStep(r.steps, name, {
      status: "failed",
      startedAt: r.steps[failedIndex].startedAt ?? at,
      finishedAt: at,
      detail: reason
    })
    yield* stepChanged({ ...r, steps }, name, "failed", r.steps[failedIndex].status, reason)
    for (let i = failedIndex - 1; i >= 0; i--) {
      const step = steps[i]
      if (step.status !== "succeeded") continue
      if (step.name === "escrow" && r.priceCents !== null && r.priceCents > 0) {
        yield* ledger
          .transfer({
            kind: "escrow_release",
            reference: r.id,
            memo: `saga ${r.id}: ${name} failed, escrow returned`,
            from: escrowAccount(r.id),
            to: walletAccount(r.buyerAgentId),
            amount: r.priceCents
          })
          .pipe(Effect.orDie)
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

  return SagaTransitions.of({ succeed, failAndCompensate, stepChanged })
})

export class SagaTransitions extends Context.Service<SagaTransitions, SagaTransitionsService>()(
  "agent-commerce/SagaTransitions"
) {
  /** Its services and ports (the stores, NegotiatedPrices) are provided by Sagas' layer. */
  static readonly layer = Layer.effect(SagaTransitions, make)
}
