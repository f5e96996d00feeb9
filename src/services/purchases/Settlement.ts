// Settlement: the one writer of a purchase's money and records. Every way of buying — the buy, the
// approved buy, the paid call of the 402 protocol, the saga — writes each step of its purchase here,
// in the caller's unit of work and in one write (SettlementStore.write): settled at once (the 85/15
// split from the buyer's wallet or an escrow, the transaction, its delivery, `transaction.completed`),
// held while the seller works (the price into the order's escrow, the pending transaction, the order,
// `order.created`), and ended when the seller answers or the deadline passes (settled 85/15 from the
// escrow, or released back to the buyer in full, the order closed). A failed delivery is recorded
// here (nothing charged), and a refund reverses a settled purchase. docs/events.md has the payloads.
import { Clock, Context, Effect, Layer } from "effect"
import type { DeliveryRecord, TransactionRecord } from "../../schema/commerce/transactions.js"
import type { InsufficientFunds, JournalEntry } from "../../schema/ledger/ledger.js"
import { escrowAccount, PLATFORM_FEES, splitSettlement, walletAccount } from "../../schema/ledger/ledger.js"
import { type Order, sagaOf } from "../../schema/orders/orders.js"
import type { InvalidInput, StorageUnavailable } from "../../schema/platform/errors.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { initialWallet } from "../../schema/wallet/policy.js"
import { PurchaseStore } from "./PurchaseStore.js"
import { type Opened, SettlementStore } from "./SettlementStore.js"
import {
  deliveryOf,
  pendingTransactionOf,
  type PurchaseRecord,
  type PurchaseReferences,
  type PurchaseSource,
  purchaseOfOrder,
  transactionOf
} from "./records.js"

/** Where the buyer's money is when a purchase settles. */
export type SettleFrom =
  | {
      readonly _tag: "wallet"
      /** The wallet's balance as read under its lock in this unit of work (SettlementStore.open), if the caller holds it. */
      readonly lockedBalanceCents?: number
    }
  /** A saga's escrow (its escrow step holds the price). */
  | { readonly _tag: "escrow"; readonly sagaId: string }
  /** An order's own escrow, its balance read under the order's lock (SettlementStore.openOrder). */
  | { readonly _tag: "escrow"; readonly holdId: string; readonly lockedBalanceCents?: number }
  /** The entry was written by an earlier step (a saga settled before transactions were recorded): records only. */
  | { readonly _tag: "posted"; readonly entryId: string }

/** What the seller delivered, and when (default: the purchase's time). */
export interface Delivered {
  readonly latencyMs: number
  readonly output: unknown
  readonly deliveredAt?: string
}

export interface SettleInput {
  readonly purchase: PurchaseRecord
  readonly delivery: Delivered
  readonly from: SettleFrom
  /** Ledger memo. */
  readonly memo: string
  /** The transaction's row was written pending when its order was placed: it ends as this one. */
  readonly pending?: boolean
  /** The order whose delivery this settlement pays, closed in the same write. */
  readonly closes?: Order
}

export interface Settled {
  readonly tx: TransactionRecord
  readonly delivery: DeliveryRecord
}

/** The `transaction.completed` payload, the same from every way of buying (docs/events.md). */
export const completedPayload = (tx: TransactionRecord, source: PurchaseSource, references: PurchaseReferences) => ({
  transactionId: tx.id,
  serviceId: tx.serviceId,
  tierId: tx.tierId,
  priceCents: tx.priceCents,
  sellerCents: tx.sellerCents,
  feeCents: tx.feeCents,
  source,
  ledgerEntryId: tx.ledgerEntryId,
  negotiationId: references.negotiationId,
  approvalId: references.approvalId,
  sagaId: references.sagaId,
  challengeId: references.challengeId
})

/** What refunding a settled purchase records. */
export interface RefundInput {
  readonly disputeId: string | null
  readonly reason: string | null
  readonly at: string
  readonly memo: string
}

export interface SettlementService {
  /**
   * Opens a purchase from the buyer's wallet (SettlementStore.open): the wallet and its balance
   * locked, the service read. Settle or hold it with the balance as `lockedBalanceCents`.
   */
  readonly open: (buyerAgentId: string, serviceId: string) => Effect.Effect<Opened, StorageUnavailable>
  /** Opens an answer to an order: the order locked, its escrow's balance read (SettlementStore.openOrder). */
  readonly openOrder: (
    orderId: string
  ) => Effect.Effect<{ readonly order: Order; readonly escrowCents: number } | undefined, StorageUnavailable>
  /**
   * Settles a delivered purchase: entry, transaction, delivery, events (and the order it closes).
   * Fails with InsufficientFunds (nothing written) when the wallet or escrow is short.
   */
  readonly settle: (input: SettleInput) => Effect.Effect<Settled, InsufficientFunds | InvalidInput | StorageUnavailable>
  /**
   * An order placed: the price moves from the buyer's wallet to the order's own escrow (a saga's
   * order holds nothing: the saga's escrow step holds the price), the pending transaction, the
   * order, and `order.created` to its seller. Fails with InsufficientFunds (nothing written) when the
   * wallet is short. The hold's entry id (null for a saga's order).
   */
  readonly hold: (input: {
    readonly order: Order
    readonly lockedBalanceCents?: number
  }) => Effect.Effect<
    { readonly tx: TransactionRecord; readonly entryId: string | null },
    InsufficientFunds | InvalidInput | StorageUnavailable
  >
  /**
   * An order that ended failed or expired (`order` as it ends, opened by `openOrder`): its escrow back
   * to the buyer in full, the transaction failed with a failed delivery (it counts in the seller's
   * record as any failed delivery does), the order closed, the buyer told (and the seller, of an
   * expiry). A saga's order holds no money: only the order and the seller's notice are written.
   */
  readonly release: (input: {
    readonly order: Order
    readonly escrowCents: number
  }) => Effect.Effect<void, StorageUnavailable>
  /** A saga's order the seller delivered: closed; the saga settles from its own escrow once it sees it. */
  readonly close: (order: Order) => Effect.Effect<void, StorageUnavailable>
  /** A purchase whose delivery failed: recorded (it counts in the seller's SLA), nothing charged, no event. */
  readonly recordFailed: (
    input: {
      readonly purchase: PurchaseRecord
      readonly delivery: Delivered
      readonly pending?: boolean
      /** False: the delivery does not count against the seller (its order never reached it). */
      readonly accountable?: boolean
    },
    error: string
  ) => Effect.Effect<Settled, StorageUnavailable>
  /**
   * Reverses a settled purchase exactly (buyer +price, seller −share, platform −fee) and marks it
   * refunded, in the caller's unit of work; tells buyer and seller. Fails with InsufficientFunds
   * when the seller has already spent its share.
   */
  readonly refund: (
    tx: TransactionRecord,
    refund: RefundInput
  ) => Effect.Effect<
    { readonly tx: TransactionRecord; readonly entry: JournalEntry },
    InsufficientFunds | InvalidInput | StorageUnavailable
  >
}

/**
 * Whether an ended order counts against its seller: not when a push order expired before any attempt
 * reached the seller (the platform never asked it). A pull order is the seller's from its placing:
 * its seller may list it whenever it likes (and is told by `order.created`), so its expiry counts
 * whether or not the seller ever listed it. An order its buyer cancelled is never the seller's.
 */
export const accountableFor = (order: Order) =>
  order.status !== "cancelled" &&
  !(order.status === "expired" && order.mode === "push" && (order.offeredAt ?? null) === null)

/** The escrow a settlement draws on: the saga's or the order's hold. */
const holdOf = (from: { readonly sagaId: string } | { readonly holdId: string }) =>
  "holdId" in from ? from.holdId : from.sagaId

/** An order as it ends: no further push attempt. */
const orderEvents = (order: Order) =>
  order.status === "expired"
    ? [
        {
          agentId: order.sellerAgentId,
          type: "order.expired" as const,
          data: {
            orderId: order.id,
            serviceId: order.serviceId,
            tierId: order.tierId,
            priceCents: order.priceCents,
            deadlineAt: order.deadlineAt
          }
        }
      ]
    : []

const make = Effect.gen(function* () {
  const store = yield* PurchaseStore
  const writer = yield* SettlementStore
  const ledger = yield* Ledger
  const events = yield* Events

  const settle = Effect.fnUntraced(function* (input: SettleInput) {
    const { purchase, from } = input
    const split = splitSettlement(purchase.priceCents)
    let entry: JournalEntry | null = null
    if (from._tag !== "posted") {
      const source = from._tag === "wallet" ? walletAccount(purchase.buyerAgentId) : escrowAccount(holdOf(from))
      const locked = "lockedBalanceCents" in from ? from.lockedBalanceCents : undefined
      // Checked (the buyer's wallet or the escrow locked) here; written below with the rest.
      entry = yield* ledger.prepare({
        kind: from._tag === "wallet" ? "purchase" : "escrow_settle",
        // An escrow's settlement is referenced by its hold (a saga, an order), a purchase by its transaction.
        reference: from._tag === "wallet" ? purchase.transactionId : holdOf(from),
        memo: input.memo,
        postings: [
          { account: source, amount: -purchase.priceCents },
          { account: walletAccount(purchase.offer.sellerAgentId), amount: split.sellerCents },
          { account: PLATFORM_FEES, amount: split.feeCents }
        ],
        ...(locked !== undefined ? { locked: new Map([[source, locked]]) } : {})
      })
    }
    const entryId = entry !== null ? entry.id : (from as { readonly entryId: string }).entryId
    const tx = transactionOf(purchase, {
      status: "completed",
      sellerCents: split.sellerCents,
      feeCents: split.feeCents,
      ledgerEntryId: entryId
    })
    const delivery = deliveryOf(
      purchase,
      { ...input.delivery, deliveredAt: input.delivery.deliveredAt ?? purchase.at },
      null
    )
    const payload = completedPayload(tx, purchase.source, purchase.references)
    const made = yield* events.make([
      { agentId: purchase.buyerAgentId, type: "transaction.completed", data: { ...payload, role: "buyer" } },
      { agentId: purchase.offer.sellerAgentId, type: "transaction.completed", data: { ...payload, role: "seller" } }
    ])
    yield* writer.write({
      entry,
      transaction: { tx, delivery, replacesPending: input.pending === true },
      ...(input.closes !== undefined ? { order: { close: input.closes } } : {}),
      events: made
    })
    return { tx, delivery }
  })

  const hold = Effect.fnUntraced(function* (input: { readonly order: Order; readonly lockedBalanceCents?: number }) {
    const { order } = input
    const purchase = purchaseOfOrder(order)
    const wallet = walletAccount(order.buyerAgentId)
    // The buyer's money moves to the order's own escrow, checked under the wallet lock the caller holds;
    // a saga's order leaves it where the saga's escrow step put it.
    const entry =
      order.priceCents > 0 && sagaOf(order) === null
        ? yield* ledger.prepare({
            kind: "escrow_hold",
            reference: order.id,
            memo: `order ${order.id}: escrow`,
            postings: [
              { account: wallet, amount: -order.priceCents },
              { account: escrowAccount(order.id), amount: order.priceCents }
            ],
            ...(input.lockedBalanceCents !== undefined ? { locked: new Map([[wallet, input.lockedBalanceCents]]) } : {})
          })
        : null
    const tx = pendingTransactionOf(purchase)
    const made = yield* events.make([
      {
        agentId: order.sellerAgentId,
        type: "order.created",
        data: {
          orderId: order.id,
          serviceId: order.serviceId,
          tierId: order.tierId,
          priceCents: order.priceCents,
          input: order.input,
          buyerAgentId: order.buyerAgentId,
          deadlineAt: order.deadlineAt
        }
      }
    ])
    yield* writer.write({
      entry,
      transaction: { tx, delivery: null, replacesPending: false },
      order: { place: order },
      events: made
    })
    return { tx, entryId: entry?.id ?? null }
  })

  const release = Effect.fnUntraced(function* (input: { readonly order: Order; readonly escrowCents: number }) {
    const { order } = input
    if (sagaOf(order) !== null)
      return yield* writer.write({
        entry: null,
        order: { close: order },
        events: yield* events.make(orderEvents(order))
      })
    const purchase = purchaseOfOrder(order)
    const escrow = escrowAccount(order.id)
    const error = order.error ?? "the seller did not deliver"
    const entry =
      order.priceCents > 0
        ? yield* (
            ledger
              .prepare({
                kind: "escrow_release",
                reference: order.id,
                memo: `order ${order.id}: ${order.status}, refunded`,
                postings: [
                  { account: escrow, amount: -order.priceCents },
                  { account: walletAccount(order.buyerAgentId), amount: order.priceCents }
                ],
                locked: new Map([[escrow, input.escrowCents]])
              })
              // The escrow holds exactly the price from the order's placing: short or unbalanced is a defect.
              .pipe(Effect.catchTags({ InsufficientFunds: Effect.die, InvalidInput: Effect.die }))
          )
        : null
    const tx = transactionOf(purchase, { status: "failed", sellerCents: 0, feeCents: 0, ledgerEntryId: null })
    const delivery = deliveryOf(
      purchase,
      { latencyMs: order.latencyMs ?? 0, output: null, deliveredAt: order.answeredAt ?? purchase.at },
      error,
      accountableFor(order)
    )
    const failed = {
      transactionId: order.transactionId,
      serviceId: order.serviceId,
      tierId: order.tierId,
      priceCents: order.priceCents,
      error
    }
    const made = yield* events.make([
      { agentId: order.buyerAgentId, type: "transaction.failed" as const, data: failed },
      ...orderEvents(order)
    ])
    yield* writer.write({
      entry,
      transaction: { tx, delivery, replacesPending: true },
      order: { close: order },
      events: made
    })
  })

  const close = (order: Order) =>
    Effect.flatMap(events.make(orderEvents(order)), (made) =>
      writer.write({ entry: null, order: { close: order }, events: made })
    )

  const recordFailed = Effect.fnUntraced(function* (
    input: {
      readonly purchase: PurchaseRecord
      readonly delivery: Delivered
      readonly pending?: boolean
      readonly accountable?: boolean
    },
    error: string
  ) {
    const { purchase } = input
    const tx = transactionOf(purchase, { status: "failed", sellerCents: 0, feeCents: 0, ledgerEntryId: null })
    const delivery = deliveryOf(
      purchase,
      { ...input.delivery, deliveredAt: input.delivery.deliveredAt ?? purchase.at },
      error,
      input.accountable ?? true
    )
    yield* writer.write({
      entry: null,
      transaction: { tx, delivery, replacesPending: input.pending === true },
      events: []
    })
    return { tx, delivery }
  })

  const refund = Effect.fnUntraced(function* (tx: TransactionRecord, refund: RefundInput) {
    const entry = yield* ledger.post({
      kind: "refund",
      reference: tx.id,
      memo: refund.memo,
      postings: [
        { account: walletAccount(tx.buyerAgentId), amount: tx.priceCents },
        { account: walletAccount(tx.sellerAgentId), amount: -tx.sellerCents },
        { account: PLATFORM_FEES, amount: -tx.feeCents }
      ]
    })
    const refunded: TransactionRecord = { ...tx, status: "refunded", refundedAt: refund.at }
    yield* store.updateTransaction(refunded)
    const data = {
      transactionId: tx.id,
      amountCents: tx.priceCents,
      sellerCents: tx.sellerCents,
      feeCents: tx.feeCents,
      disputeId: refund.disputeId,
      reason: refund.reason
    }
    yield* events.emitMany([
      { agentId: tx.buyerAgentId, type: "transaction.refunded", data },
      { agentId: tx.sellerAgentId, type: "transaction.refunded", data }
    ])
    return { tx: refunded, entry }
  })

  const open = (buyerAgentId: string, serviceId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      writer.open({ wallet: initialWallet(buyerAgentId, now), serviceId })
    )

  return Settlement.of({ open, openOrder: writer.openOrder, settle, hold, release, close, recordFailed, refund })
})

export class Settlement extends Context.Service<Settlement, SettlementService>()("agent-commerce/Settlement") {
  static readonly layer = Layer.effect(Settlement, make).pipe(Layer.provide([Ledger.layer, Events.layer]))
}
