// One purchase inside the caller's unit of work: the wallet locked and the service read, the
// spending policy, the approval it may need, then either the order its seller fulfils (pull or
// push: the price held in escrow until the seller answers) or, for the platform's simulated
// sellers, the simulated delivery and the 85/15 settlement. Shared by the instant buy and the
// execution of an approved purchase (Commerce, Approvals).
import { Clock, Data, Effect } from "effect"
import type { ApprovalRecord, Purchase } from "../../schema/commerce/approvals.js"
import type { ServiceRecord, ServiceTier } from "../../schema/commerce/services.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import { InvalidInput, NotFound } from "../../schema/platform/errors.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { tierOf } from "../../schema/commerce/serviceView.js"
import { Ids } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { KeysStore } from "../keys/Keys.js"
import { deliveryModes, simulateDelivery } from "./simulation.js"
import { Wallet } from "../wallet/Wallet.js"
import { PurchaseStore } from "./PurchaseStore.js"
import { NegotiatedPrices } from "./NegotiatedPrices.js"
import { noReferences, Settlement } from "./Settlement.js"
import { toApproval, toTransaction } from "./views.js"
import { orderDeadlineMs } from "../../schema/orders/orders.js"
import { Orders } from "./Orders.js"

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

/** Internal: executing an approval whose quote no longer holds (never leaves the commerce services). */
export class ApprovalVoid extends Data.TaggedError("ApprovalVoid")<{ readonly changed: string }> {}

export interface Execute {
  readonly agentId: string
  readonly accountId: string
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  readonly priceCents?: number
  readonly negotiationId?: string
  readonly idempotencyKey: string | null
  /** Set when an owner approved it: no second approval, the policy limits still apply. */
  readonly approval?: ApprovalRecord
}

/** The purchase's unit of work, built from the services it uses. */
export const makePurchase = Effect.gen(function* () {
  const store = yield* PurchaseStore
  const wallet = yield* Wallet
  const ledger = yield* Ledger
  const events = yield* Events
  const ids = yield* Ids
  const negotiated = yield* NegotiatedPrices
  const settlement = yield* Settlement
  const orders = yield* Orders
  const modeOf = deliveryModes(yield* KeysStore)

  /** The first outcome of an idempotency key, answered again without charging. */
  const replay = Effect.fnUntraced(function* (agentId: string, key: string | null) {
    if (key === null) return undefined
    const now = yield* Clock.currentTimeMillis
    const tx = yield* store.findByIdempotencyKey(agentId, key)
    if (tx) {
      const status = tx.tx.status === "failed" ? "failed" : tx.tx.status === "pending" ? "pending" : "completed"
      return { status, transaction: toTransaction(tx, agentId), approval: null } as Purchase
    }
    const approval = yield* store.findApprovalByKey(agentId, key)
    if (approval)
      return { status: "pending_approval", transaction: null, approval: toApproval(approval, now) } as Purchase
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

  /**
   * A purchase of a service its seller fulfils: the order, its escrow and its pending transaction
   * (Orders.place); answered `pending`, the seller's delivery settles it later.
   */
  const placeOrder = Effect.fnUntraced(function* (
    x: Execute,
    o: {
      readonly service: Pick<ServiceRecord, "id" | "name" | "category" | "pricingModel" | "sellerAgentId">
      readonly tier: ServiceTier
      readonly txId: string
      readonly priceCents: number
      readonly negotiationId: string | null
      readonly at: string
      readonly balanceCents: number
      readonly policy: WalletRecord["policy"]
      readonly mode: "pull" | "push"
    }
  ) {
    const { service, tier } = o
    const { tx } = yield* orders
      .place({
        purchase: {
          transactionId: o.txId,
          source: "buy",
          buyerAgentId: x.agentId,
          offer: {
            serviceId: service.id,
            serviceName: service.name,
            category: service.category,
            pricingModel: service.pricingModel,
            sellerAgentId: service.sellerAgentId,
            tierId: tier.id,
            listPriceCents: tier.priceCents
          },
          priceCents: o.priceCents,
          references: {
            ...noReferences,
            negotiationId: o.negotiationId,
            approvalId: x.approval?.id ?? null,
            idempotencyKey: x.idempotencyKey
          },
          at: o.at
        },
        input: x.input,
        mode: o.mode,
        deadlineMs: orderDeadlineMs(tier),
        lockedBalanceCents: o.balanceCents
      })
      .pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.fail(wallet.insufficientCredits(e))))
    const { policy } = o
    if (policy.autoRecharge.thresholdCents > 0) {
      const after = yield* ledger.balance(walletAccount(x.agentId))
      yield* wallet.afterDebit(x.agentId, policy, after + o.priceCents, after)
    }
    const row = { tx, delivery: undefined, review: undefined, disputeId: null }
    return { status: "pending", transaction: toTransaction(row, x.agentId), approval: null } as Purchase
  })

  /**
   * After the buy's unit of work committed: a pending order is announced to this process's waiters,
   * and a push seller's answer is awaited up to ORDER_WAIT_MS (the buy then answers its outcome).
   */
  const awaitOrder = Effect.fnUntraced(function* (purchase: Purchase) {
    const tx = purchase.transaction
    if (purchase.status !== "pending" || tx === null) return purchase
    yield* orders.announce({ id: tx.id, sellerAgentId: tx.sellerAgentId })
    const order = yield* orders.get(tx.buyerAgentId, tx.id).pipe(Effect.catchTag("NotFound", () => Effect.void))
    if (order === undefined || order.mode !== "push" || orders.waitMs <= 0) return purchase
    const ended = yield* orders.awaitOutcome(tx.id, orders.waitMs)
    if (ended === undefined || ended.status === "pending") return purchase
    const row = yield* store.getTransaction(tx.id)
    if (row === undefined || row.tx.status === "pending") return purchase
    const status = row.tx.status === "completed" ? "completed" : "failed"
    return { status, transaction: toTransaction(row, tx.buyerAgentId), approval: null } as Purchase
  })

  /** One purchase inside the caller's unit of work (the wallet row is locked first). */
  const execute = Effect.fnUntraced(function* (x: Execute) {
    // The wallet and its balance locked and the service read, at once (one statement on Postgres).
    const opened = yield* settlement.open(x.agentId, x.serviceId)
    if (x.approval) {
      const changed = approvalChanged(x.approval, opened.service)
      if (changed !== null) return yield* Effect.fail(new ApprovalVoid({ changed }))
    }
    const { service, tier } = yield* tierOf(opened.service, x.serviceId, x.tierId)
    if (service.status !== "active") {
      return yield* Effect.fail(
        new NotFound({ message: `service ${service.id} is not listed`, resource: "service", id: service.id })
      )
    }
    if (service.sellerAgentId === x.agentId) {
      return yield* Effect.fail(
        new InvalidInput({ message: "an agent cannot buy its own service", field: "serviceId" })
      )
    }
    const { balanceCents } = opened
    const policy = opened.wallet.policy
    if (!x.approval) {
      const earlier = yield* replay(x.agentId, x.idempotencyKey)
      if (earlier) return earlier
    }
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    // An approved purchase gets the transaction id reserved when it was requested.
    const txId = x.approval?.reservedTransactionId ?? (yield* ids.make("tx"))
    // The price: a negotiation redeemed at request time, an override, or the current list price.
    let priceCents = x.priceCents ?? tier.priceCents
    // An approval charges what the owner saw (approvalChanged has checked it still is the price).
    if (x.approval) priceCents = x.approval.quotedPriceCents
    else if (x.negotiationId) {
      const redeem = { agentId: x.agentId, negotiationId: x.negotiationId, serviceId: service.id, tierId: tier.id }
      priceCents = (yield* negotiated.redeem({ ...redeem, usedBy: txId })).priceCents
    }
    if (!Number.isSafeInteger(priceCents) || priceCents < 0) {
      return yield* Effect.fail(
        new InvalidInput({ message: "price must be a non-negative integer of cents", field: "priceCents" })
      )
    }
    const check = { priceCents, category: service.category, sellerAgentId: service.sellerAgentId }
    const needsApproval = yield* wallet.authorize(x.agentId, policy, check, { approved: x.approval !== undefined })
    if (needsApproval !== null) {
      return yield* requestApproval(
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
    }
    const negotiationId = x.negotiationId ?? x.approval?.negotiationId ?? null
    const fulfilment = service.fulfilment?.mode ?? "simulated"
    if (fulfilment !== "simulated") {
      return yield* placeOrder(x, {
        ...{ service, tier, txId, priceCents, negotiationId, at, balanceCents, policy },
        mode: fulfilment
      })
    }
    const delivered = simulateDelivery(service, tier, x.input, txId, yield* modeOf(x.input, service.sellerAgentId))
    const purchase = {
      transactionId: txId,
      source: "buy" as const,
      buyerAgentId: x.agentId,
      offer: {
        serviceId: service.id,
        serviceName: service.name,
        category: service.category,
        pricingModel: service.pricingModel,
        sellerAgentId: service.sellerAgentId,
        tierId: tier.id,
        listPriceCents: tier.priceCents
      },
      priceCents,
      // The simulated latency is recorded, not waited: the delivery is in hand when the purchase answers.
      delivery: { latencyMs: delivered.latencyMs, output: delivered.output },
      references: {
        ...noReferences,
        negotiationId,
        approvalId: x.approval?.id ?? null,
        idempotencyKey: x.idempotencyKey
      },
      at
    }
    if (!delivered.success) {
      // Nothing delivered, nothing charged; a redeemed negotiation is given back.
      if (negotiationId) yield* negotiated.release(negotiationId, txId)
      const failed = yield* settlement.recordFailed(purchase, delivered.error ?? "the seller did not deliver")
      const row = { tx: failed.tx, delivery: failed.delivery, review: undefined, disputeId: null }
      return { status: "failed", transaction: toTransaction(row, x.agentId), approval: null } as Purchase
    }
    const from = { _tag: "wallet" as const, lockedBalanceCents: balanceCents }
    const { tx, delivery } = yield* settlement
      .settle({ ...purchase, from, memo: `${service.id}/${tier.id}` })
      .pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.fail(wallet.insufficientCredits(e))))
    const buyer = walletAccount(x.agentId)
    if (policy.autoRecharge.thresholdCents > 0) {
      const after = yield* ledger.balance(buyer)
      yield* wallet.afterDebit(x.agentId, policy, after + priceCents, after)
    }
    const row = { tx, delivery, review: undefined, disputeId: null }
    return { status: "completed", transaction: toTransaction(row, x.agentId), approval: null } as Purchase
  })

  return { execute, negotiated, awaitOrder } as const
})
