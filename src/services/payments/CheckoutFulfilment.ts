// CheckoutFulfilment: what a processor event does to a checkout — plans activated and credited (and
// renewed, and ended), knowledge access granted, acquisitions paid, wallets recharged; or the
// checkout closed as expired or failed. Runs inside the webhook's unit of work (Payments.handleWebhook,
// which verifies the event and records its id once).
import { Clock, Context, Effect, Layer } from "effect"
import { EXTERNAL_PAYMENTS, type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import type { InvalidInput, StorageUnavailable } from "../../schema/platform/errors.js"
import {
  Acquisition,
  type CheckoutRecord,
  type CheckoutStatus,
  KnowledgeAccess,
  type ProcessorEvent,
  type ProcessorSession
} from "../../schema/payments/payments.js"
import { Events } from "../events/Events.js"
import { Keys } from "../keys/Keys.js"
import { Ledger } from "../ledger/Ledger.js"
import { Ids } from "../platform/Db.js"
import { PaymentsStore } from "./PaymentsStore.js"

export interface CheckoutFulfilmentService {
  /**
   * What the event does, inside the caller's unit of work; the outcome line is recorded with the
   * event id. An event for no checkout of this service, or one already final, changes nothing.
   */
  readonly fulfil: (
    event: ProcessorEvent
  ) => Effect.Effect<string, InsufficientFunds | InvalidInput | StorageUnavailable>
}

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

const make = Effect.gen(function* () {
  const store = yield* PaymentsStore
  const ids = yield* Ids
  const ledger = yield* Ledger
  const events = yield* Events
  const keys = yield* Keys

  const fundWallet = (checkout: CheckoutRecord, reference: string, amount: number, memo: string) =>
    ledger.transfer({
      kind: "funding",
      reference,
      memo,
      from: EXTERNAL_PAYMENTS,
      to: walletAccount(checkout.agentId!),
      amount
    })

  /** Marks the checkout paid and does what it was for. */
  const complete = Effect.fnUntraced(function* (checkout: CheckoutRecord, session: ProcessorSession) {
    if (checkout.status !== "pending") return `ignored: checkout already ${checkout.status}`
    const at = yield* nowIso
    const subscriptionId = session.subscriptionId ?? checkout.subscriptionId
    const paid: CheckoutRecord = { ...checkout, status: "paid", completedAt: at, subscriptionId }
    yield* store.updateCheckout(paid)
    const base = {
      checkoutSessionId: checkout.sessionId,
      purpose: checkout.purpose,
      amountCents: checkout.amountCents,
      currency: checkout.currency
    }
    switch (checkout.purpose) {
      case "plan": {
        yield* keys.setAccountPlan(checkout.accountId!, checkout.planId)
        const memo = `${checkout.planId} plan credits`
        const entry = yield* fundWallet(checkout, checkout.sessionId, checkout.credits, memo)
        yield* events.emit(checkout.agentId!, "payment.succeeded", {
          ...base,
          planId: checkout.planId,
          credits: checkout.credits,
          journalEntryId: entry.id
        })
        return `fulfilled: plan ${checkout.planId} active, ${checkout.credits} credits`
      }
      case "knowledge": {
        yield* store.insertAccess(
          KnowledgeAccess.make({
            id: yield* ids.make("acc"),
            productId: checkout.productId!,
            // Given at purchaseAccess, or collected by the processor's page.
            customerEmail: checkout.customerEmail ?? session.customerEmail ?? "",
            customerName: checkout.customerName ?? "",
            checkoutSessionId: checkout.sessionId,
            grantedAt: at
          })
        )
        return `fulfilled: access to knowledge product ${checkout.productId}`
      }
      case "acquisition": {
        const acquisition = yield* store.getAcquisition(checkout.acquisitionId!)
        if (acquisition) {
          yield* store.updateAcquisition(Acquisition.make({ ...acquisition, status: "paid", paidAt: at }))
        }
        yield* events.emit(checkout.agentId!, "payment.succeeded", {
          ...base,
          acquisitionId: checkout.acquisitionId,
          projectId: acquisition?.projectId ?? null
        })
        return `fulfilled: acquisition ${checkout.acquisitionId} paid`
      }
      case "recharge": {
        const entry = yield* fundWallet(checkout, checkout.sessionId, checkout.credits, "wallet recharge")
        const balanceCents = yield* ledger.balance(walletAccount(checkout.agentId!))
        yield* events.emit(checkout.agentId!, "payment.succeeded", {
          ...base,
          credits: checkout.credits,
          journalEntryId: entry.id
        })
        yield* events.emit(checkout.agentId!, "wallet.recharged", {
          checkoutSessionId: checkout.sessionId,
          amountCents: checkout.credits,
          balanceCents,
          journalEntryId: entry.id
        })
        return `fulfilled: wallet recharged with ${checkout.credits} credits`
      }
    }
  })

  /** A final non-paid outcome (expired or failed); acquisitions follow their checkout. */
  const close = Effect.fnUntraced(function* (
    checkout: CheckoutRecord,
    status: Exclude<CheckoutStatus, "pending" | "paid">,
    reason: string | null
  ) {
    if (checkout.status !== "pending") return `ignored: checkout already ${checkout.status}`
    yield* store.updateCheckout({ ...checkout, status, failureReason: reason, completedAt: yield* nowIso })
    if (checkout.acquisitionId) {
      const acquisition = yield* store.getAcquisition(checkout.acquisitionId)
      if (acquisition && acquisition.status === "pending") {
        yield* store.updateAcquisition(Acquisition.make({ ...acquisition, status }))
      }
    }
    return status
  })

  /** Subscription renewals: each later period's invoice credits the plan's credits again. */
  const renew = Effect.fnUntraced(function* (invoiceId: string, subscriptionId: string) {
    const checkout = yield* store.findCheckoutBySubscription(subscriptionId)
    if (!checkout || checkout.purpose !== "plan" || checkout.status !== "paid") return "ignored: unknown subscription"
    if ((yield* ledger.entriesByReference(invoiceId)).length > 0) return "ignored: renewal already credited"
    yield* keys.setAccountPlan(checkout.accountId!, checkout.planId)
    const entry = yield* fundWallet(checkout, invoiceId, checkout.credits, `${checkout.planId} plan renewal credits`)
    yield* events.emit(checkout.agentId!, "payment.succeeded", {
      checkoutSessionId: checkout.sessionId,
      purpose: "plan_renewal",
      invoiceId,
      planId: checkout.planId,
      credits: checkout.credits,
      journalEntryId: entry.id
    })
    return `fulfilled: renewal of ${checkout.planId}, ${checkout.credits} credits`
  })

  /** A cancelled subscription: only the plan it pays for ends; a newer plan stays. */
  const endSubscription = Effect.fnUntraced(function* (subscriptionId: string) {
    const checkout = yield* store.findCheckoutBySubscription(subscriptionId)
    if (!checkout || checkout.accountId === null) return "ignored: unknown subscription"
    const account = yield* keys.getAccount(checkout.accountId).pipe(Effect.option)
    if (account._tag === "Some" && account.value.planId === checkout.planId) {
      yield* keys.setAccountPlan(checkout.accountId, null)
      return `plan ${checkout.planId} ended`
    }
    return "ignored: the account has another plan"
  })

  const fulfil = Effect.fnUntraced(function* (event: ProcessorEvent) {
    const o = event.object
    if (o.kind === "checkout.session") {
      const checkout = yield* store.lockCheckout(o.session.id)
      if (!checkout) return "ignored: not a checkout of this service"
      switch (event.type) {
        case "checkout.session.completed":
          // Delayed payment methods complete unpaid; async_payment_succeeded follows.
          return o.session.paymentStatus === "unpaid"
            ? "pending: awaiting asynchronous payment"
            : yield* complete(checkout, o.session)
        case "checkout.session.async_payment_succeeded":
          return yield* complete(checkout, o.session)
        case "checkout.session.async_payment_failed":
          return yield* close(checkout, "failed", "payment_failed")
        case "checkout.session.expired":
          return yield* close(checkout, "expired", null)
        default:
          return `ignored: ${event.type}`
      }
    }
    if (o.kind === "invoice" && (event.type === "invoice.paid" || event.type === "invoice.payment_succeeded")) {
      if (o.billingReason !== "subscription_cycle" || o.subscriptionId === null) return "ignored: not a renewal"
      return yield* renew(o.invoiceId, o.subscriptionId)
    }
    if (o.kind === "subscription" && event.type === "customer.subscription.deleted") {
      return yield* endSubscription(o.subscriptionId)
    }
    return `ignored: ${event.type}`
  })

  return CheckoutFulfilment.of({ fulfil })
})

export class CheckoutFulfilment extends Context.Service<CheckoutFulfilment, CheckoutFulfilmentService>()(
  "agent-commerce/CheckoutFulfilment"
) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(CheckoutFulfilment, make).pipe(
    Layer.provide([Events.layer, Keys.layer, Ledger.layer])
  )
}
