// What MPP asks and refuses: which offers are paid per request, what a challenge charges, how many
// open challenges an agent keeps, the 402 a refusal answers (with the next step), the receipt. Pure.
import type { HowToFund } from "../../schema/commerce/wallets.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import { ChargeBelowMinimum, type MppProblem, NotPayPerRequest, PaymentRequired } from "../../schema/mpp/problems.js"
import type { Challenge, ChallengeRecord, ChargeRequest, Receipt } from "../../schema/mpp/challenge.js"
import {
  CHARGE_INTENT,
  CREDITS_METHOD,
  MPP_CURRENCY,
  MPP_MINIMUM_CHARGE_CENTS,
  paymentMethods
} from "../../schema/mpp/protocol.js"
import type { Offer } from "../purchases/Offers.js"

/**
 * Open (unpaid, unexpired) challenges kept per agent. Issuing one more drops the oldest; a
 * credential for a dropped challenge is refused like an unknown one (402 invalid-challenge).
 */
export const MAX_OPEN_CHALLENGES_PER_AGENT = 100

/** Why a credential cannot pay (answered with a fresh challenge). */
export type Refusal = { readonly refused: MppProblem; readonly message: string; readonly missingCents?: number }

/**
 * Why the offer (asked for as `serviceId`) cannot be paid per request by this agent, if it cannot:
 * it must be per_call, at least the minimum charge, and not the agent's own.
 */
export const offerRefusal = (
  offer: Offer,
  serviceId: string,
  agentId: string
): NotPayPerRequest | ChargeBelowMinimum | InvalidInput | undefined => {
  if (offer.service.pricingModel !== "per_call") {
    return new NotPayPerRequest({
      message:
        `${serviceId} is priced ${offer.service.pricingModel}; ` +
        "only per_call services are paid per request (use /buy or /saga)",
      pricingModel: offer.service.pricingModel
    })
  }
  if (offer.tier.priceCents < MPP_MINIMUM_CHARGE_CENTS) {
    return new ChargeBelowMinimum({
      message: `${offer.tier.priceCents} cents is below the minimum micropayment charge of 0.01 USD`,
      amountCents: offer.tier.priceCents,
      minimumCents: MPP_MINIMUM_CHARGE_CENTS
    })
  }
  if (offer.service.sellerAgentId === agentId) {
    return new InvalidInput({ message: "you sell this service; an agent cannot pay itself", field: "id" })
  }
  return undefined
}

/** The charge request a challenge carries: the amount, to the seller's wallet, for one call. */
export const chargeRequest = (
  r: Pick<ChallengeRecord, "amountCents" | "sellerAgentId" | "serviceId" | "tierId">,
  offer: Offer
): ChargeRequest => ({
  amount: String(r.amountCents),
  currency: MPP_CURRENCY,
  recipient: walletAccount(r.sellerAgentId),
  description: `${offer.service.name} (${offer.tier.name}): one call`,
  externalId: `${r.serviceId}/${r.tierId}`
})

/** What the next step is, per refusal (the problem's `hint`). */
const hints: Record<MppProblem, string> = {
  "payment-required":
    "echo this challenge in a credential (Payment <base64url JSON {challenge, payload}>) " +
    "and send the same request again",
  "malformed-credential": "send Payment <base64url JSON {challenge, payload}> echoing this fresh challenge",
  "invalid-challenge": "challenges are single use and bound to the key they were issued to: pay this fresh one",
  "payment-expired": "challenges live 5 minutes: pay this fresh one",
  "verification-failed":
    "a challenge pays for one request (service, tier, body bytes): pay this fresh one with the same request",
  "method-unsupported": "only method credits, intent charge is active: pay this fresh challenge with it",
  "wallet-insufficient-funds": "fund the wallet (howToFund), then pay this fresh challenge; waiting alone does not help"
}

/** The 402 (or 400) of a refusal, carrying a fresh challenge and the next step. */
export const paymentRequired = (
  challenge: Challenge,
  problem: MppProblem,
  message: string,
  missingCents?: number,
  extra: {
    readonly howToFund?: typeof HowToFund.Type
    readonly requiredCents?: number
    readonly balanceCents?: number
  } = {}
) =>
  new PaymentRequired({
    message,
    problem,
    challenge,
    methods: [...paymentMethods],
    minimumChargeCents: MPP_MINIMUM_CHARGE_CENTS,
    ...(missingCents !== undefined ? { missingCents } : {}),
    // A fresh challenge can be paid at once; a short wallet needs funding first, not time.
    ...(problem === "wallet-insufficient-funds" ? {} : { retryAfter: 0 }),
    hint: hints[problem],
    ...extra
  })

/** The receipt of a paid challenge: settled to the seller, or held in its order's escrow. */
export const paidReceipt = (
  row: ChallengeRecord,
  paid: {
    readonly at: string
    readonly reference: string
    readonly transactionId: string
    readonly settlement?: Receipt["settlement"]
  }
): Receipt => ({
  status: "success",
  method: CREDITS_METHOD,
  intent: CHARGE_INTENT,
  timestamp: paid.at,
  reference: paid.reference,
  challengeId: row.id,
  transactionId: paid.transactionId,
  amount: String(row.amountCents),
  currency: MPP_CURRENCY,
  serviceId: row.serviceId,
  tierId: row.tierId,
  settlement: paid.settlement ?? "settled"
})
