// Purchases: one purchase, the same lifecycle whichever way an agent buys (the buy, the owner's
// approval of a buy that waited, the paid call of the 402 protocol; the saga's steps use its parts).
// In the caller's unit of work: the buyer's wallet locked and the service read at once
// (Settlement.open), the quote (the price: the list's, a redeemed negotiation's, the approved one,
// or the paid challenge's; the offer snapshot), the authorization (the owner's spending policy under
// that lock, and the approval it may ask for), then the money: settled 85/15 at once for the
// platform's simulated sellers, or held in the order's escrow until the seller answers (Orders). An
// earlier answer under the same idempotency key is answered again without charging. An approval the
// owner gives (Approvals.ts) executes the same purchase.
import { Clock, Context, Data, Effect, Layer } from "effect"
import type { ApprovalRecord, Purchase, PurchaseStatus } from "../../schema/commerce/approvals.js"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import { tierOf } from "../../schema/commerce/serviceView.js"
import type { DeliveryRecord, Transaction, TransactionRecord } from "../../schema/commerce/transactions.js"
import type { InsufficientCredits, PolicyViolation } from "../../schema/commerce/wallets.js"
import type { NegotiationUnusable } from "../../schema/negotiation/negotiation.js"
import { type Order, orderDeadlineMs } from "../../schema/orders/orders.js"
import { InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Events } from "../events/Events.js"
import { KeysStore } from "../keys/KeysStore.js"
import { Ids } from "../platform/Db.js"
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import { Wallet } from "../wallet/Wallet.js"
import { NegotiatedPrices } from "./NegotiatedPrices.js"
import { Orders } from "./Orders.js"
import { PurchaseStore } from "./PurchaseStore.js"
import { type PurchaseRecord, snapshotOf } from "./records.js"
import { Settlement } from "./Settlement.js"
import { deliveryModes, simulateDelivery } from "./simulation.js"
import { toApproval, toTransaction } from "./views.js"

/** Why a purchase between agents of one account is refused (docs/reputation.md). */
export const sameAccountRefusal =
  "the seller is an agent of your own account: an account's agents cannot buy from each other " +
  "(it would move no value and write the seller's reputation)"

/** How long an approval waits for the owner before it expires. */
export const APPROVAL_TTL_MS = 7 * 86_400_000

/** What changed since an approval was requested (it binds the price, tier and service it quoted), or null. */
export const approvalChanged = (a: ApprovalRecord, service: ServiceRecord | undefined): string | null => {
  if (service === undefined || service.status !== "active") return `service ${a.serviceId} is no longer listed`
  const tier = service.tiers.find((t) => t.id === a.tierId)
  if (tier === undefined) return `tier ${a.tierId} of ${a.serviceId} no longer exists`
  const priceChanged = `the price of ${a.serviceId}/${a.tierId} changed from ${a.quotedPriceCents} to ${tier.priceCents} cents`
  // A negotiated price was redeemed for this approval: it stays what was quoted.
  if (a.negotiationId === null && tier.priceCents !== a.quotedPriceCents) return priceChanged
  return null
}

/** Internal: executing an approval whose quote no longer holds (never leaves the purchase domain). */
class ApprovalVoid extends Data.TaggedError("ApprovalVoid")<{ readonly changed: string }> {}

/** One purchase asked for. */
export interface PurchaseRequest {
  readonly agentId: string
  readonly accountId: string
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  /** A price agreed elsewhere overriding the list price; callers inside the platform only. */
  readonly priceCents?: number
  /** An accepted negotiation to redeem: its price, once. */
  readonly negotiationId?: string
  /** The buyer's key for this purchase: a repeated key answers the first outcome without charging again. */
  readonly idempotencyKey: string | null
  /**
   * A paid call: the challenge that pays it and the amount it charges. Nothing can wait for the owner
   * (ApprovalNeeded is answered instead), and a simulated seller that cannot serve the call is
   * answered before anything is charged or recorded (SellerCannotServe).
   */
  readonly challenge?: { readonly id: string; readonly amountCents: number }
}

/** What a purchase came to, in the caller's unit of work. */
export type Bought =
  /** Delivered and settled 85/15 from the wallet. */
  | {
      readonly _tag: "Completed"
      readonly purchase: Purchase
      readonly tx: TransactionRecord
      readonly delivery: DeliveryRecord
    }
  /** The simulated seller failed: recorded, nothing charged. */
  | { readonly _tag: "Failed"; readonly purchase: Purchase }
  /** Held in the order's escrow until its seller answers; the hold's entry. */
  | { readonly _tag: "Placed"; readonly purchase: Purchase; readonly order: Order; readonly holdEntryId: string | null }
  /** Waiting for the owner's approval. */
  | { readonly _tag: "AwaitingApproval"; readonly purchase: Purchase }
  /** The first outcome of this idempotency key, answered again. */
  | { readonly _tag: "Replayed"; readonly purchase: Purchase }
  /** A paid call the owner's autonomy settings would have to approve (nothing written). */
  | { readonly _tag: "ApprovalNeeded"; readonly reason: "manual" | "approvalThreshold" }
  /** A paid call a simulated seller cannot serve (nothing written). */
  | { readonly _tag: "SellerCannotServe"; readonly mode: "fail" | "timeout" }

/** What a purchase can be refused with. */
export type PurchaseError =
  NotFound | InvalidInput | PolicyViolation | InsufficientCredits | NegotiationUnusable | StorageUnavailable

/** An approval whose quote no longer holds: what changed. */
export interface Voided {
  readonly _tag: "Void"
  readonly changed: string
}

export interface PurchasesService {
  /** One purchase in the caller's unit of work (see the file's head). */
  readonly purchase: (request: PurchaseRequest) => Effect.Effect<Bought, PurchaseError>
  /**
   * After the purchase's unit of work committed: an order placed is announced to this process's
   * waiters, and a push seller's answer awaited up to ORDER_WAIT_MS; the purchase as it stands then.
   * Never inside a unit of work: it would hold the buyer's wallet and hide the order from its seller.
   */
  readonly settled: (bought: Bought) => Effect.Effect<Purchase, StorageUnavailable>
  /**
   * A purchase the owner approved, executed in the caller's unit of work at the quoted price, the
   * policy limits checked again (an approval skips only the approval); or Void, charging nothing,
   * when what the owner saw has changed (approvalChanged). Approvals.ts decides.
   */
  readonly executeApproved: (approval: ApprovalRecord) => Effect.Effect<Bought | Voided, PurchaseError>
}

/** A stored transaction as the buyer's purchase. */
const purchaseOf = (status: typeof PurchaseStatus.Type, transaction: Transaction): Purchase => ({
  status,
  transaction,
  approval: null
})

const make = Effect.gen(function* () {
  const store = yield* PurchaseStore
  const settlement = yield* Settlement
  const orders = yield* Orders
  const wallet = yield* Wallet
  const negotiated = yield* NegotiatedPrices
  const events = yield* Events
  const ids = yield* Ids
  const modeOf = deliveryModes(yield* KeysStore)

  /** The first outcome of an idempotency key, answered again without charging. */
  const replay = Effect.fnUntraced(function* (agentId: string, key: string | null) {
    if (key === null) return undefined
    const now = yield* Clock.currentTimeMillis
    const tx = yield* store.findByIdempotencyKey(agentId, key)
    if (tx) {
      const status = tx.tx.status === "failed" ? "failed" : tx.tx.status === "pending" ? "pending" : "completed"
      return purchaseOf(status, toTransaction(tx, agentId))
    }
    const approval = yield* store.findApprovalByKey(agentId, key)
    if (approval) {
      return { status: "pending_approval", transaction: null, approval: toApproval(approval, now) } as Purchase
    }
    return undefined
  })

  /** The approval a purchase waits for: stored, and announced to the agent. */
  const requestApproval = Effect.fnUntraced(function* (approval: ApprovalRecord, now: number) {
    yield* store.insertApproval(approval)
    yield* events.emit(approval.agentId, "approval.requested", {
      approvalId: approval.id,
      serviceId: approval.serviceId,
      tierId: approval.tierId,
      priceCents: approval.quotedPriceCents,
      reason: approval.reason,
      expiresAt: approval.expiresAt
    })
    return { status: "pending_approval", transaction: null, approval: toApproval(approval, now) } as Purchase
  })

  /** One purchase inside the caller's unit of work (the wallet row is locked first). */
  const execute = Effect.fnUntraced(function* (
    x: PurchaseRequest & { readonly approval?: ApprovalRecord }
  ): Effect.fn.Return<Bought, PurchaseError | ApprovalVoid> {
    // The wallet and its balance locked and the service read, at once (one statement on Postgres).
    const opened = yield* settlement.open(x.agentId, x.serviceId)
    if (x.approval) {
      const changed = approvalChanged(x.approval, opened.service)
      if (changed !== null) return yield* new ApprovalVoid({ changed })
    }
    const { service, tier } = yield* tierOf(opened.service, x.serviceId, x.tierId)
    if (service.status !== "active") {
      return yield* new NotFound({
        message: `service ${service.id} is not listed`,
        resource: "service",
        id: service.id
      })
    }
    if (service.sellerAgentId === x.agentId) {
      return yield* new InvalidInput({ message: "an agent cannot buy its own service", field: "serviceId" })
    }
    // Agents of one account trading with each other move no value and would write the seller's record
    // (reviews, volume, standing): refused (docs/reputation.md). The platform's own sellers are one
    // account nobody signs in to: the rule guards owners' standing, not the platform's catalogue.
    if (opened.sellerAccountId === x.accountId && x.accountId !== PLATFORM_SELLERS_ACCOUNT) {
      return yield* new InvalidInput({ message: sameAccountRefusal, field: "serviceId" })
    }
    const { balanceCents } = opened
    const policy = opened.wallet.policy
    if (!x.approval) {
      const earlier = yield* replay(x.agentId, x.idempotencyKey)
      if (earlier) return { _tag: "Replayed", purchase: earlier }
    }
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    // An approved purchase gets the transaction id reserved when it was requested.
    const txId = x.approval?.reservedTransactionId ?? (yield* ids.make("tx"))
    // The price: a paid challenge's amount, the approved quote (approvalChanged has checked it still
    // is the price), a negotiation redeemed now, an override, or the current list price.
    let priceCents = x.challenge?.amountCents ?? x.approval?.quotedPriceCents ?? x.priceCents ?? tier.priceCents
    if (x.negotiationId && !x.approval && !x.challenge) {
      const redeem = { agentId: x.agentId, negotiationId: x.negotiationId, serviceId: service.id, tierId: tier.id }
      priceCents = (yield* negotiated.redeem({ ...redeem, usedBy: txId })).priceCents
    }
    if (!Number.isSafeInteger(priceCents) || priceCents < 0) {
      return yield* new InvalidInput({ message: "price must be a non-negative integer of cents", field: "priceCents" })
    }
    const fulfilment = service.fulfilment?.mode ?? "simulated"
    // Only a simulated seller's outcome follows the input's `simulate`; a real seller decides its own.
    const asked =
      fulfilment === "simulated" ? yield* modeOf(x.input, service.sellerAgentId) : { mode: "ok" as const, delayMs: 0 }
    if (x.challenge && (asked.mode === "fail" || asked.mode === "timeout")) {
      return { _tag: "SellerCannotServe", mode: asked.mode }
    }
    const check = { priceCents, category: service.category, sellerAgentId: service.sellerAgentId }
    const needsApproval = yield* wallet.authorize(x.agentId, policy, check, { approved: x.approval !== undefined })
    if (needsApproval !== null) {
      if (x.challenge) return { _tag: "ApprovalNeeded", reason: needsApproval }
      const purchase = yield* requestApproval(
        {
          id: yield* ids.make("apr"),
          accountId: x.accountId,
          agentId: x.agentId,
          serviceId: service.id,
          tierId: tier.id,
          quotedPriceCents: priceCents,
          negotiationId: x.negotiationId ?? null,
          input: x.input,
          reason: needsApproval,
          status: "pending",
          idempotencyKey: x.idempotencyKey,
          reservedTransactionId: txId,
          transactionId: null,
          decidedBy: null,
          createdAt: at,
          decidedAt: null,
          expiresAt: new Date(now + APPROVAL_TTL_MS).toISOString()
        },
        now
      )
      return { _tag: "AwaitingApproval", purchase }
    }
    const negotiationId = x.negotiationId ?? x.approval?.negotiationId ?? null
    const record: PurchaseRecord = {
      transactionId: txId,
      source: x.challenge ? "paid_call" : "buy",
      buyerAgentId: x.agentId,
      offer: snapshotOf(service, tier),
      priceCents,
      references: {
        negotiationId,
        approvalId: x.approval?.id ?? null,
        idempotencyKey: x.idempotencyKey,
        sagaId: null,
        challengeId: x.challenge?.id ?? null
      },
      at
    }
    // Low-balance warning and auto-recharge, as after any debit: from the balance read under the lock.
    const debited = () => wallet.afterDebit(x.agentId, policy, balanceCents, balanceCents - priceCents)
    if (fulfilment !== "simulated") {
      const placed = yield* orders
        .place({
          purchase: record,
          input: x.input,
          mode: fulfilment,
          deadlineMs: orderDeadlineMs(tier),
          lockedBalanceCents: balanceCents
        })
        .pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.fail(wallet.insufficientCredits(e))))
      yield* debited()
      const row = { tx: placed.tx, delivery: undefined, review: undefined, disputeId: null }
      return {
        _tag: "Placed",
        purchase: purchaseOf("pending", toTransaction(row, x.agentId)),
        order: placed.order,
        holdEntryId: placed.entryId
      }
    }
    // The simulated latency is recorded, not waited: the delivery is in hand when the purchase answers.
    const delivered = simulateDelivery(service, tier, x.input, txId, asked)
    if (!delivered.success) {
      // Nothing delivered, nothing charged; a redeemed negotiation is given back.
      if (negotiationId) yield* negotiated.release(negotiationId, txId)
      const failed = yield* settlement.recordFailed(
        { purchase: record, delivery: { latencyMs: delivered.latencyMs, output: null } },
        delivered.error ?? "the seller did not deliver"
      )
      const row = { tx: failed.tx, delivery: failed.delivery, review: undefined, disputeId: null }
      return { _tag: "Failed", purchase: purchaseOf("failed", toTransaction(row, x.agentId)) }
    }
    const { tx, delivery } = yield* settlement
      .settle({
        purchase: record,
        delivery: { latencyMs: delivered.latencyMs, output: delivered.output },
        from: { _tag: "wallet", lockedBalanceCents: balanceCents },
        memo: x.challenge ? `pay-per-request ${service.id}/${tier.id}` : `${service.id}/${tier.id}`
      })
      .pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.fail(wallet.insufficientCredits(e))))
    yield* debited()
    const row = { tx, delivery, review: undefined, disputeId: null }
    return { _tag: "Completed", purchase: purchaseOf("completed", toTransaction(row, x.agentId)), tx, delivery }
  })

  const purchase = (request: PurchaseRequest) =>
    // A purchase asked for by an agent executes no approval: ApprovalVoid cannot happen here.
    execute(request).pipe(Effect.catchTag("ApprovalVoid", (e) => Effect.die(e)))

  const settled = Effect.fnUntraced(function* (bought: Bought) {
    switch (bought._tag) {
      case "ApprovalNeeded":
      case "SellerCannotServe":
        return yield* Effect.die(new Error(`a paid call's refusal (${bought._tag}) has no purchase to answer`))
      case "Placed":
        break
      default:
        return bought.purchase
    }
    const { order, purchase } = bought
    yield* orders.announce(order)
    if (order.mode !== "push" || orders.waitMs <= 0) return purchase
    const ended = yield* orders.awaitOutcome(order.id, orders.waitMs)
    if (ended === undefined || ended.status === "pending") return purchase
    const row = yield* store.getTransaction(order.id)
    if (row === undefined || row.tx.status === "pending") return purchase
    return purchaseOf(row.tx.status === "completed" ? "completed" : "failed", toTransaction(row, order.buyerAgentId))
  })

  /** An approved purchase executed: its outcome, or Void (what the owner saw has changed; nothing charged). */
  const executeApproved = (approval: ApprovalRecord) =>
    execute({
      agentId: approval.agentId,
      accountId: approval.accountId,
      serviceId: approval.serviceId,
      tierId: approval.tierId,
      input: approval.input,
      idempotencyKey: approval.idempotencyKey,
      approval
    }).pipe(Effect.catchTag("ApprovalVoid", (e) => Effect.succeed<Voided>({ _tag: "Void", changed: e.changed })))

  return Purchases.of({ purchase, settled, executeApproved })
})

export class Purchases extends Context.Service<Purchases, PurchasesService>()("agent-commerce/Purchases") {
  /** Provides the domain services it uses; only ports (stores, processors, NegotiatedPrices, OrderOwners, config) stay open. */
  static readonly layer = Layer.effect(Purchases, make).pipe(
    Layer.provide([Orders.layer, Settlement.layer, Wallet.layer, Events.layer])
  )
}
