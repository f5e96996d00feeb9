// One paid call's unit of work: the challenge claimed, the wallet's policy, then for a service its
// seller fulfils (pull or push) the order with the price in escrow (orderedCall.ts), or for the
// platform's simulated sellers the simulated answer and the settlement (the wallet charged, the
// seller's share and the platform fee); the challenge marked paid, and the receipt. Runs inside
// the caller's unit of work.
import { Clock, Effect } from "effect"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { ApprovalRequired, type MppProblem, SellerFailed } from "../../schema/mpp/problems.js"
import { InvokeResult } from "../../schema/mpp/challenge.js"
import { deliveryModes, simulateDelivery, simulatedOutput } from "../purchases/simulation.js"
import type { Offer } from "../purchases/Offers.js"
import { Settlement } from "../purchases/Settlement.js"
import { KeysStore } from "../keys/KeysStore.js"
import { Ledger } from "../ledger/Ledger.js"
import { Ids } from "../platform/Db.js"
import { Wallet } from "../wallet/Wallet.js"
import type { makeChallenges, Payer } from "./challenges.js"
import { makeOrderedCall, type Ordered } from "./orderedCall.js"
import type { EchoedChallenge } from "./encoding.js"
import { MppStore } from "./MppStore.js"
import { paidPurchase, paidReceipt, type Refusal } from "./policy.js"

type Claimable = Effect.Success<typeof makeChallenges>["claimable"]

/** The paid call with its dependencies taken once; `claimable` claims the challenge it pays. */
export const makePaidCall = Effect.fnUntraced(function* (claimable: Claimable) {
  const store = yield* MppStore
  const ledger = yield* Ledger
  const ids = yield* Ids
  // The commerce core: wallet policies, and the one writer of purchases a paid call settles through.
  const wallet = yield* Wallet
  const settlement = yield* Settlement
  const modeOf = deliveryModes(yield* KeysStore)
  const ordered = yield* makeOrderedCall

  /** The call served and paid, or why the credential cannot pay (the caller answers a fresh challenge). */
  return Effect.fnUntraced(function* (
    who: Payer,
    echoed: EchoedChallenge,
    offer: Offer,
    digest: string,
    input: unknown
  ) {
    const refuse = (refused: MppProblem, message: string, extra: Partial<Refusal> = {}): Refusal => ({
      refused,
      message,
      ...extra
    })
    const now = yield* Clock.currentTimeMillis
    const checked = yield* claimable(who, echoed, offer, digest)
    if ("refused" in checked) return checked
    const row = checked
    // The wallet locked and the service read at once: its fulfilment decides who answers the call.
    const opened = yield* settlement.open(row.agentId, row.serviceId)
    const fulfilment = opened.service?.fulfilment?.mode ?? "simulated"
    // Only a simulated seller's outcome follows `simulate`; a real seller decides its own.
    const asked = yield* modeOf(fulfilment === "simulated" ? input : null, offer.service.sellerAgentId)
    const { mode } = asked
    if (mode === "fail" || mode === "timeout") {
      const message =
        `the seller could not serve the call (simulated ${mode}); ` +
        "nothing was charged and the challenge is still open"
      return yield* Effect.fail(new SellerFailed({ message, serviceId: offer.service.id }))
    }
    // MPP: a valid payment that policy refuses is 403, not 402 (the challenge stays open).
    const { policy } = opened.wallet
    const { balanceCents } = opened
    {
      const verdict = yield* wallet.authorize(
        row.agentId,
        policy,
        { priceCents: row.amountCents, category: offer.service.category, sellerAgentId: row.sellerAgentId },
        { approved: false }
      )
      if (verdict !== null) {
        const message =
          verdict === "manual"
            ? "the wallet's autonomy level is manual: every purchase needs the owner's approval"
            : `${row.amountCents} cents is above the wallet's approval threshold`
        return yield* Effect.fail(new ApprovalRequired({ message, reason: verdict }))
      }
    }
    const paidAt = new Date(now).toISOString()
    if (fulfilment !== "simulated") {
      const placed: Ordered | Refusal = yield* ordered.place(
        row,
        offer,
        { policy, balanceCents },
        input,
        fulfilment,
        paidAt
      )
      return placed
    }
    // The paid call joins the commerce history (GET /transactions, reviews, disputes, limits).
    const transactionId = yield* ids.make("tx")
    const output = simulatedOutput(offer, input, transactionId)
    const latencyMs = simulateDelivery(
      offer.service as unknown as Parameters<typeof simulateDelivery>[0],
      offer.tier as unknown as Parameters<typeof simulateDelivery>[1],
      input,
      transactionId,
      asked
    ).latencyMs
    const charged = yield* Effect.result(
      settlement.settle({
        ...paidPurchase(row, offer, transactionId, paidAt),
        delivery: { latencyMs, output },
        from: { _tag: "wallet", lockedBalanceCents: balanceCents },
        memo: `pay-per-request ${row.serviceId}/${row.tierId}`
      })
    )
    if (charged._tag === "Failure") {
      if (charged.failure._tag === "InsufficientFunds") {
        const { missingCents } = charged.failure
        const message = `the wallet lacks ${missingCents} cents for this call; fund it and pay the fresh challenge`
        return refuse("wallet-insufficient-funds", message, { missingCents })
      }
      return yield* Effect.fail(charged.failure)
    }
    const entryId = charged.success.tx.ledgerEntryId!
    const after = yield* ledger.balance(walletAccount(row.agentId))
    yield* wallet.afterDebit(row.agentId, policy, after + row.amountCents, after)
    yield* store.update({ ...row, status: "paid", paidAt, entryId, transactionId })
    return InvokeResult.make({
      status: "completed",
      serviceId: row.serviceId,
      tierId: row.tierId,
      transactionId,
      chargedCents: row.amountCents as InvokeResult["chargedCents"],
      output,
      receipt: paidReceipt(row, { at: paidAt, reference: entryId, transactionId })
    })
  })
})
