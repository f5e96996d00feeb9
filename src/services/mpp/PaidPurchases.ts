// PaidPurchases: a purchase (POST /buy) with its payment decided. Without a payment credential, a
// wallet too short for the price answers a 402 whose challenge pays this purchase (MPP); with
// one, the credential pays the purchase, claimed in the purchase's own unit of work.
import { Context, Effect, Layer } from "effect"
import type { Purchase } from "../../schema/commerce/approvals.js"
import type { Receipt } from "../../schema/mpp/challenge.js"
import type { PaymentRequired } from "../../schema/mpp/problems.js"
import type { NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type { Caller } from "../keys/Caller.js"
import { Mpp } from "./Mpp.js"
import { Transactor } from "../platform/Db.js"
import { Refusals } from "../refusals/Refusals.js"
import { type BuyError, type BuyInput, Commerce } from "../commerce/Commerce.js"

/** How the request pays, as it came: its body (the challenge binds it) and its payment credential. */
export interface PaymentContext {
  readonly body: string | Uint8Array
  /** The MPP credential (Payment-Authorization, or a Payment credential in Authorization); none: the wallet pays. */
  readonly credential: string | undefined
  /** Where the credential must be sent when the API key holds Authorization. */
  readonly credentialHeader: string | undefined
}

export interface PaidBuyInput {
  readonly caller: Caller
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  readonly negotiationId?: string | undefined
  /** The request's Idempotency-Key: a retry answers the first outcome without charging again. */
  readonly idempotencyKey: string | undefined
  readonly payment: PaymentContext
}

export interface PaidPurchase {
  readonly purchase: Purchase
  /** The MPP receipt, when a credential paid the purchase. */
  readonly receipt: Receipt | undefined
}

export interface PaidPurchasesService {
  readonly buy: (
    input: PaidBuyInput
  ) => Effect.Effect<PaidPurchase, BuyError | PaymentRequired | NotFound | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const commerce = yield* Commerce
  const mpp = yield* Mpp
  const transactor = yield* Transactor
  const refusals = yield* Refusals

  const buy = (input: PaidBuyInput) => {
    const { caller, payment } = input
    const order: BuyInput = {
      caller,
      serviceId: input.serviceId,
      tierId: input.tierId,
      input: input.input,
      negotiationId: input.negotiationId,
      idempotencyReference: input.idempotencyKey
    }
    const purchase = commerce.buy(order)
    const offer = {
      serviceId: input.serviceId,
      tierId: input.tierId,
      body: payment.body,
      credentialHeader: payment.credentialHeader
    }
    const paid =
      payment.credential === undefined
        ? Effect.map(
            purchase.pipe(
              Effect.catchTag("InsufficientCredits", (e) =>
                Effect.flatMap(mpp.walletShort(caller, offer, e), Effect.fail)
              )
            ),
            (purchase): PaidPurchase => ({ purchase, receipt: undefined })
          )
        : // The purchase's own record of a refusal rolled back with the payment's unit of work: kept here.
          // The purchase joins the payment's unit of work; a push seller's answer is awaited only
          // after it committed (waiting inside would hold the wallet and hide the order from its seller).
          mpp.payPurchase(caller, { ...offer, credential: payment.credential }, commerce.buyInUnit(order)).pipe(
            refusals.recordingRefusal({
              agentId: caller.agentId ?? "",
              serviceId: input.serviceId,
              serviceName: null,
              tierId: input.tierId,
              priceCents: null,
              path: input.negotiationId === undefined ? "buy" : "negotiation"
            }),
            Effect.flatMap(({ bought, receipt }) =>
              Effect.map(commerce.afterBuy(bought), (after): PaidPurchase => ({ purchase: after, receipt }))
            )
          )
    return paid.pipe(Effect.provideService(Transactor, transactor))
  }

  return { buy } satisfies PaidPurchasesService
})

export class PaidPurchases extends Context.Service<PaidPurchases, PaidPurchasesService>()(
  "agent-commerce/PaidPurchases"
) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(PaidPurchases, make).pipe(
    Layer.provide([Commerce.layer, Mpp.layer, Refusals.layer])
  )
}
