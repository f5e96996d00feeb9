// How a wallet is funded, the rules without I/O: the 402's funding hints, the ledger reference that
// makes a keyed top-up credit once per Idempotency-Key, and why a grant's errors are bugs. The
// top-ups, auto-recharge and the low-balance warning that use them are Wallet's (Wallet.ts).
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { isTagged } from "effect/Predicate"
import type { AppConfigShape } from "../platform/AppConfig.js"
import { type HowToFund, InsufficientCredits } from "../../schema/commerce/wallets.js"
import type { InvalidInput } from "../../schema/platform/errors.js"
import type { InsufficientFunds } from "../../schema/ledger/ledger.js"

/** The Idempotency-Key of a request, with the caller it belongs to. */
export interface IdempotencyKey {
  readonly key: string
  /** Who the key belongs to (a hash of the request's credential): keys of two callers never meet. */
  readonly scope: string
}

/** How to fund a wallet on this server, told with every 402. */
export const howToFundOn = (config: Pick<AppConfigShape, "baseUrl" | "payments">): typeof HowToFund.Type => ({
  topupUrl: config.payments === "fake" ? `${config.baseUrl}/api/v1/agent/commerce/wallet/topup` : null,
  checkoutUrl: `${config.baseUrl}/api/trpc/subscription.createCheckout`,
  rechargeUrl: null,
  note:
    config.payments === "fake"
      ? "POST {amountCents} to topupUrl (fake-payments mode), or buy a plan: its credits fund the wallet " +
        "(1 credit = 1 cent)"
      : "buy a plan through checkoutUrl (its credits fund the wallet, 1 credit = 1 cent), " +
        "or enable auto-recharge with PATCH /wallet",
  retry:
    "after funding, send the same request again; the same Idempotency-Key is fine: a 402 is never stored for replay"
})

/** The 402 a purchase answers when the buyer's wallet cannot cover the price. */
export const insufficientCreditsOf = (howToFund: typeof HowToFund.Type, e: InsufficientFunds) =>
  new InsufficientCredits({
    message: `the wallet holds ${e.balanceCents} cents; ${e.requiredCents} are needed (${e.missingCents} missing)`,
    requiredCents: e.requiredCents,
    balanceCents: e.balanceCents,
    missingCents: e.missingCents,
    howToFund
  })

/**
 * The ledger reference of a keyed top-up: the same for every retry of one key by one caller, so a
 * retry finds the credit its first attempt made.
 */
export const keyedTopupReference = (agentId: string, idempotency: IdempotencyKey) =>
  `topup:${agentId}:tu_k${createHash("sha256").update(`${idempotency.scope}|${idempotency.key}`).digest("hex").slice(0, 32)}`

/** A grant from external:grants is balanced and debits an account that may go negative: its errors are bugs. */
export const grantCannotFail = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, InsufficientFunds | InvalidInput> =>
      isTagged(e, "InsufficientFunds") || isTagged(e, "InvalidInput"),
    (e) => Effect.die(e)
  ) as Effect.Effect<A, Exclude<E, InsufficientFunds | InvalidInput>, R>
