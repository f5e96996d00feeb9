// ExternalFunding: a purchase paid from outside the platform (an x402 payment settled on a chain,
// docs/x402.md) instead of from credits the buyer already had. The money enters as an external
// inflow — a balanced `funding` entry from the rail's own external account into the buyer's wallet,
// in the purchase's unit of work — and the purchase then runs exactly as a credit purchase does
// (Purchases: the owner's policy, 85/15 at once for a simulated seller, the order's escrow for an
// agent seller). When an order so funded ends failed or expired, its escrow comes back to the
// wallet (Settlement.release) and `returnToSource` sends it back out to the rail's account, from
// which the rail refunds the payer.
import { Context, Effect, Layer } from "effect"
import type { InsufficientFunds, JournalEntry } from "../../schema/ledger/ledger.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import type { InvalidInput, StorageUnavailable } from "../../schema/platform/errors.js"
import { Ledger } from "../ledger/Ledger.js"
import { type Bought, type PurchaseError, type PurchaseRequest, Purchases } from "./Purchases.js"

/** Money that came in from outside for one purchase. */
export interface Inflow {
  /** The rail's external ledger account (e.g. `external:x402:<network>:<asset>`). */
  readonly account: string
  readonly amountCents: number
  /** What caused it (the payment's id): the entry's reference. */
  readonly reference: string
  readonly memo: string
}

export interface ExternalFundingService {
  /**
   * In the caller's unit of work: the inflow credited to the buyer's wallet, then the purchase it
   * pays (`request.challenge` names the payment and fixes the amount). A refusal fails the unit of
   * work, the inflow with it.
   */
  readonly purchase: (inflow: Inflow, request: PurchaseRequest) => Effect.Effect<Bought, PurchaseError>
  /**
   * The amount of an externally funded purchase that came back to the buyer's wallet (a failed or
   * expired order) moved out to the rail's account: a balanced `refund` entry. InsufficientFunds
   * when the wallet no longer holds it (a keyed agent spent the released credits).
   */
  readonly returnToSource: (
    inflow: Inflow & { readonly buyerAgentId: string }
  ) => Effect.Effect<JournalEntry, InsufficientFunds | InvalidInput | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const ledger = yield* Ledger
  const purchases = yield* Purchases

  const purchase = (inflow: Inflow, request: PurchaseRequest) =>
    Effect.andThen(
      ledger
        .transfer({
          kind: "funding",
          reference: inflow.reference,
          memo: inflow.memo,
          from: inflow.account,
          to: walletAccount(request.agentId),
          amount: inflow.amountCents
        })
        // The external account may go negative (money in from the outside world); the sum balances.
        .pipe(Effect.catchTags({ InsufficientFunds: Effect.die, InvalidInput: Effect.die })),
      purchases.purchase(request)
    )

  const returnToSource = (inflow: Inflow & { readonly buyerAgentId: string }) =>
    ledger.transfer({
      kind: "refund",
      reference: inflow.reference,
      memo: inflow.memo,
      from: walletAccount(inflow.buyerAgentId),
      to: inflow.account,
      amount: inflow.amountCents
    })

  return ExternalFunding.of({ purchase, returnToSource })
})

export class ExternalFunding extends Context.Service<ExternalFunding, ExternalFundingService>()(
  "agent-commerce/ExternalFunding"
) {
  static readonly layer = Layer.effect(ExternalFunding, make).pipe(Layer.provide([Ledger.layer, Purchases.layer]))
}
