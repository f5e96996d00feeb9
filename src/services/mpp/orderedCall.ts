// A paid call of a service its seller fulfils (pull or push): in the call's unit of work the
// challenge is spent and the price goes into the order's escrow (Orders.place), as a /buy places
// its order; after it committed the order is announced, a push seller's answer awaited up to
// ORDER_WAIT_MS, and the call answered with the seller's output, its failure (refunded), or pending.
import { Effect } from "effect"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { type ChallengeRecord, InvokeResult, PendingInvokeResult, type Receipt } from "../../schema/mpp/challenge.js"
import { SellerFailed } from "../../schema/mpp/problems.js"
import { type Order, type OrderMode, orderDeadlineMs } from "../../schema/orders/orders.js"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import type { WalletPolicy } from "../../schema/commerce/wallets.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import type { Offer } from "../purchases/Offers.js"
import { Ledger } from "../ledger/Ledger.js"
import { Orders } from "../purchases/Orders.js"
import { Ids } from "../platform/Db.js"
import { Wallet } from "../wallet/Wallet.js"
import { MppStore } from "./MppStore.js"
import { paidPurchase, paidReceipt, type Refusal } from "./policy.js"

/** A paid call whose order was placed (the challenge paid, the price held): answered once committed. */
export interface Ordered {
  readonly _tag: "Ordered"
  readonly order: Order
  readonly receipt: Receipt
}

/** What the buyer is told to follow while the seller has not answered. */
const followOf = (transactionId: string) => ({
  transaction: `${COMMERCE_PREFIX}/transactions/${transactionId}`,
  order: `${COMMERCE_PREFIX}/orders/${transactionId}`,
  events: ["transaction.completed", "transaction.failed"]
})

export const makeOrderedCall = Effect.gen(function* () {
  const store = yield* MppStore
  const orders = yield* Orders
  const commerce = yield* PurchaseStore
  const ledger = yield* Ledger
  const wallet = yield* Wallet
  const ids = yield* Ids

  /**
   * In the paid call's unit of work, after the challenge was claimed and the wallet's policy passed
   * (its row locked): the order and its escrow hold, the challenge paid with the order's
   * transaction (the credential is spent), the receipt of a held payment.
   */
  const place = Effect.fnUntraced(function* (
    row: ChallengeRecord,
    offer: Offer,
    locked: { readonly policy: WalletPolicy; readonly balanceCents: number },
    input: unknown,
    mode: OrderMode,
    at: string
  ) {
    const transactionId = yield* ids.make("tx")
    const placed = yield* Effect.result(
      orders.place({
        purchase: paidPurchase(row, offer, transactionId, at),
        input,
        mode,
        deadlineMs: orderDeadlineMs(offer.tier),
        lockedBalanceCents: locked.balanceCents
      })
    )
    if (placed._tag === "Failure") {
      if (placed.failure._tag === "InsufficientFunds") {
        const { missingCents } = placed.failure
        const message = `the wallet lacks ${missingCents} cents for this call; fund it and pay the fresh challenge`
        return { refused: "wallet-insufficient-funds", message, missingCents } satisfies Refusal
      }
      return yield* Effect.fail(placed.failure)
    }
    const { order } = placed.success
    const after = yield* ledger.balance(walletAccount(row.agentId))
    yield* wallet.afterDebit(row.agentId, locked.policy, after + row.amountCents, after)
    // The charge is the escrow hold: the entry the receipt and the health check's sample point at.
    const hold = (yield* ledger.entriesByReference(order.id)).find((e) => e.kind === "escrow_hold")
    const entryId = hold?.id ?? order.id
    yield* store.update({ ...row, status: "paid", paidAt: at, entryId, transactionId })
    const receipt = paidReceipt(row, { at, reference: entryId, transactionId, settlement: "held" })
    return { _tag: "Ordered", order, receipt } satisfies Ordered
  })

  const pending = (order: Order, receipt: Receipt) =>
    PendingInvokeResult.make({
      status: "pending",
      serviceId: order.serviceId,
      tierId: order.tierId,
      transactionId: order.id,
      heldCents: order.priceCents as PendingInvokeResult["heldCents"],
      deadlineAt: order.deadlineAt,
      output: null,
      receipt,
      follow: followOf(order.id)
    })

  /**
   * After the call's unit of work committed: the order announced (pull sellers waiting on their
   * list see it), a push seller's answer awaited up to ORDER_WAIT_MS; the output if it delivered,
   * SellerFailed (refunded in full) if it failed, otherwise pending.
   */
  const answer = Effect.fnUntraced(function* ({ order, receipt }: Ordered) {
    yield* orders.announce(order)
    if (order.mode !== "push" || orders.waitMs <= 0) return pending(order, receipt)
    const ended = yield* orders.awaitOutcome(order.id, orders.waitMs)
    if (ended === undefined || ended.status === "pending") return pending(order, receipt)
    const row = yield* commerce.getTransaction(order.id)
    if (row === undefined || row.tx.status === "pending") return pending(order, receipt)
    if (row.tx.status === "completed") {
      return InvokeResult.make({
        status: "completed",
        serviceId: order.serviceId,
        tierId: order.tierId,
        transactionId: order.id,
        chargedCents: order.priceCents as InvokeResult["chargedCents"],
        output: row.delivery?.output ?? ended.output,
        receipt: { ...receipt, reference: row.tx.ledgerEntryId ?? receipt.reference, settlement: "settled" }
      })
    }
    const why = ended.error ?? row.delivery?.error ?? "the seller did not deliver"
    return yield* Effect.fail(
      new SellerFailed({
        message:
          `the seller could not serve the call (${why}); the ${order.priceCents} cents held were refunded in ` +
          "full; the credential is spent: pay a fresh challenge to call again",
        serviceId: order.serviceId,
        transactionId: order.id
      })
    )
  })

  return { place, answer } as const
})
