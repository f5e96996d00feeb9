// Settlement: the one writer of purchases. Every path that sells a service — the instant buy
// (Commerce), the paid call of the 402 protocol (Mpp) and the purchase saga (Saga) — settles here:
// the 85/15 split, the balanced ledger entry (from the buyer's wallet or the saga's escrow), the
// transaction with its service/tier snapshot and references, the delivery record and the
// `transaction.completed` events, all in the caller's unit of work; a delivery that failed is
// recorded here too (nothing charged, no event). Refunds of a settled purchase go back through
// here as well. docs/events.md has the one payload every path emits.
import { Clock, Context, Effect, Layer } from "effect"
import type { DeliveryRecord, TransactionRecord } from "../../schema/commerce/transactions.js"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import type { InsufficientFunds, JournalEntry } from "../../schema/ledger/ledger.js"
import { escrowAccount, PLATFORM_FEES, splitSettlement, walletAccount } from "../../schema/ledger/ledger.js"
import type { InvalidInput, StorageUnavailable } from "../../schema/platform/errors.js"
import type { PricingModel } from "../../schema/commerce/common.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { initialWallet } from "../../schema/wallet/policy.js"
import { PurchaseStore } from "./PurchaseStore.js"
import { SettlementStore } from "./SettlementStore.js"

/** Which path sold it (carried in the event and kept for the history). */
export type SettlementSource = "buy" | "paid_call" | "saga"

/** What was bought: the service and tier as they were at the time of the purchase. */
export interface OfferSnapshot {
  readonly serviceId: string
  readonly serviceName: string
  readonly category: string
  readonly pricingModel: PricingModel
  readonly sellerAgentId: string
  readonly tierId: string
  readonly listPriceCents: number
}

/** What the purchase points at; null where a path has none. */
export interface SettlementReferences {
  readonly negotiationId: string | null
  readonly approvalId: string | null
  readonly idempotencyKey: string | null
  readonly sagaId: string | null
  readonly challengeId: string | null
}

export const noReferences: SettlementReferences = {
  negotiationId: null,
  approvalId: null,
  idempotencyKey: null,
  sagaId: null,
  challengeId: null
}

export interface SettlementInput {
  readonly transactionId: string
  readonly source: SettlementSource
  readonly buyerAgentId: string
  readonly offer: OfferSnapshot
  readonly priceCents: number
  readonly delivery: { readonly latencyMs: number; readonly output: unknown }
  readonly references: SettlementReferences
  /** ISO time of the purchase. */
  readonly at: string
  /**
   * Where the buyer's money is: its wallet, or an escrow (a saga's, named by the saga; an order's,
   * named by its hold id, the order's id: escrowAccount(holdId)). `posted`: the entry was
   * already written by an earlier step (a saga settled before this writer recorded its
   * transactions); only the records and events are written.
   */
  readonly from:
    | {
        readonly _tag: "wallet"
        /** The wallet's balance as read under its lock in this unit of work (Wallet.lockForPurchase), if the caller holds it. */
        readonly lockedBalanceCents?: number
      }
    | { readonly _tag: "escrow"; readonly sagaId: string }
    | { readonly _tag: "escrow"; readonly holdId: string }
    | { readonly _tag: "posted"; readonly entryId: string }
  /** Ledger memo. */
  readonly memo: string
  /** The transaction's row was written pending when its order was placed: it ends as this one. */
  readonly pending?: boolean
  /** When the seller answered (an order's); the delivery record's time. Default: `at`. */
  readonly deliveredAt?: string
}

/** The escrow a settlement draws on: the saga's or the order's hold. */
const holdOf = (from: { readonly sagaId: string } | { readonly holdId: string }) =>
  "holdId" in from ? from.holdId : from.sagaId

export interface Settled {
  readonly tx: TransactionRecord
  readonly delivery: DeliveryRecord
}

/** The `transaction.completed` payload, the same from every path (docs/events.md). */
export const completedPayload = (
  tx: TransactionRecord,
  source: SettlementSource,
  references: SettlementReferences
) => ({
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
   * locked, the service read. Settle it with `from: { _tag: "wallet", lockedBalanceCents: balanceCents }`.
   */
  readonly open: (
    buyerAgentId: string,
    serviceId: string
  ) => Effect.Effect<
    { readonly wallet: WalletRecord; readonly balanceCents: number; readonly service: ServiceRecord | undefined },
    StorageUnavailable
  >
  /**
   * Settles a delivered purchase in the caller's unit of work: entry, transaction, delivery,
   * events. Fails with InsufficientFunds (nothing written) when the wallet or escrow is short.
   */
  readonly settle: (
    input: SettlementInput
  ) => Effect.Effect<Settled, InsufficientFunds | InvalidInput | StorageUnavailable>
  /** A purchase whose delivery failed: recorded (it counts in the seller's SLA), nothing charged, no event. */
  readonly recordFailed: (
    input: Omit<SettlementInput, "from" | "memo">,
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

const make = Effect.gen(function* () {
  const store = yield* PurchaseStore
  const writer = yield* SettlementStore
  const ledger = yield* Ledger
  const events = yield* Events

  const record = (
    input: Omit<SettlementInput, "from" | "memo">,
    patch: Pick<TransactionRecord, "status" | "sellerCents" | "feeCents" | "ledgerEntryId">,
    error: string | null
  ): Settled => ({
    tx: {
      id: input.transactionId,
      buyerAgentId: input.buyerAgentId,
      sellerAgentId: input.offer.sellerAgentId,
      serviceId: input.offer.serviceId,
      serviceName: input.offer.serviceName,
      category: input.offer.category,
      pricingModel: input.offer.pricingModel,
      tierId: input.offer.tierId,
      listPriceCents: input.offer.listPriceCents,
      priceCents: input.priceCents,
      negotiationId: input.references.negotiationId,
      approvalId: input.references.approvalId,
      idempotencyKey: input.references.idempotencyKey,
      createdAt: input.at,
      refundedAt: null,
      ...patch
    },
    delivery: {
      transactionId: input.transactionId,
      serviceId: input.offer.serviceId,
      tierId: input.offer.tierId,
      success: error === null,
      latencyMs: input.delivery.latencyMs,
      output: error === null ? input.delivery.output : null,
      error,
      deliveredAt: input.deliveredAt ?? input.at
    }
  })

  const settle = Effect.fnUntraced(function* (input: SettlementInput) {
    const split = splitSettlement(input.priceCents)
    let entry: JournalEntry | null = null
    if (input.from._tag !== "posted") {
      const source =
        input.from._tag === "wallet" ? walletAccount(input.buyerAgentId) : escrowAccount(holdOf(input.from))
      // Checked (the buyer's wallet or the escrow locked) here; written below with the rest.
      entry = yield* ledger.prepare({
        kind: input.from._tag === "wallet" ? "purchase" : "escrow_settle",
        // An escrow's settlement is referenced by its hold (a saga, an order), a purchase by its transaction.
        reference: input.from._tag === "wallet" ? input.transactionId : holdOf(input.from),
        memo: input.memo,
        postings: [
          { account: source, amount: -input.priceCents },
          { account: walletAccount(input.offer.sellerAgentId), amount: split.sellerCents },
          { account: PLATFORM_FEES, amount: split.feeCents }
        ],
        ...(input.from._tag === "wallet" && input.from.lockedBalanceCents !== undefined
          ? { locked: new Map([[source, input.from.lockedBalanceCents]]) }
          : {})
      })
    }
    const entryId = entry !== null ? entry.id : (input.from as { readonly entryId: string }).entryId
    const settled = record(
      input,
      { status: "completed", sellerCents: split.sellerCents, feeCents: split.feeCents, ledgerEntryId: entryId },
      null
    )
    const payload = completedPayload(settled.tx, input.source, input.references)
    const made = yield* events.make([
      { agentId: input.buyerAgentId, type: "transaction.completed", data: { ...payload, role: "buyer" } },
      { agentId: input.offer.sellerAgentId, type: "transaction.completed", data: { ...payload, role: "seller" } }
    ])
    yield* writer.write({
      entry,
      tx: settled.tx,
      delivery: settled.delivery,
      events: made,
      replacesPending: input.pending === true
    })
    return settled
  })

  const recordFailed = Effect.fnUntraced(function* (input: Omit<SettlementInput, "from" | "memo">, error: string) {
    const failed = record(input, { status: "failed", sellerCents: 0, feeCents: 0, ledgerEntryId: null }, error)
    if (input.pending === true) yield* store.finishPending(failed.tx, failed.delivery)
    else yield* store.insertTransaction(failed.tx, failed.delivery)
    return failed
  })

  /**
   * Reverses a settled purchase exactly (buyer +price, seller −share, platform −fee) and marks it
   * refunded, in the caller's unit of work; tells buyer and seller. Fails with InsufficientFunds
   * when the seller has already spent its share.
   */
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

  /**
   * Opens a purchase from the buyer's wallet (SettlementStore.open): the wallet and its balance
   * locked, the service read. Settle it with `from: { _tag: "wallet", lockedBalanceCents: balanceCents }`.
   */
  const open = (buyerAgentId: string, serviceId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      writer.open({ wallet: initialWallet(buyerAgentId, now), serviceId })
    )

  return { open, settle, recordFailed, refund } satisfies SettlementService
})

export class Settlement extends Context.Service<Settlement, SettlementService>()("agent-commerce/Settlement") {
  static readonly layer = Layer.effect(Settlement, make).pipe(Layer.provide([Ledger.layer, Events.layer]))
}
