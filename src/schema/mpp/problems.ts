// Micropayment protocol: why a paid call is refused — the 402 problem types and bodies
// (RFC 9457, application/problem+json) and the other errors of a paid call.
import { Schema } from "effect"
import { HowToFund } from "../commerce/wallets.js"
import { PaymentMethodInfo, PROBLEM_BASE, WALLET_INSUFFICIENT_PROBLEM } from "./protocol.js"
import { Challenge } from "./challenge.js"

/**
 * Why a 402 was answered. The draft's types (`payment-insufficient`, "amount paid too low", cannot
 * happen with the credit method: the amount is the challenge's), and ours for a short wallet.
 */
export const MppProblem = Schema.Literals([
  "payment-required",
  "malformed-credential",
  "invalid-challenge",
  "payment-expired",
  "verification-failed",
  "method-unsupported",
  "wallet-insufficient-funds"
])
export type MppProblem = typeof MppProblem.Type

/** The problem type URI of a refusal. */
export const problemType = (p: MppProblem) =>
  p === "wallet-insufficient-funds" ? WALLET_INSUFFICIENT_PROBLEM : `${PROBLEM_BASE}${p}`

export const problemTitles: Record<MppProblem, string> = {
  "payment-required": "Payment Required",
  "malformed-credential": "Malformed Payment Credential",
  "invalid-challenge": "Invalid Payment Challenge",
  "payment-expired": "Payment Expired",
  "verification-failed": "Payment Verification Failed",
  "method-unsupported": "Payment Method Unsupported",
  "wallet-insufficient-funds": "Wallet Insufficient Funds"
}

/** The HTTP status of a refusal: 400 for an unsupported method, 402 (with a fresh challenge) for the rest. */
export const problemStatus = (p: MppProblem) => (p === "method-unsupported" ? 400 : 402)

/**
 * Pay first: a fresh challenge (also in WWW-Authenticate) and why the last credential, if any, was
 * refused. Internal error; on the wire it is the `PaymentProblem` below (application/problem+json).
 */
export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()(
  "PaymentRequired",
  {
    message: Schema.String,
    problem: MppProblem,
    challenge: Challenge,
    methods: Schema.Array(PaymentMethodInfo),
    minimumChargeCents: Schema.Int,
    /** How many cents the wallet lacks, when that is why (wallet-insufficient-funds). */
    missingCents: Schema.optional(Schema.Int),
    /** A purchase's price and the wallet's balance (wallet-insufficient-funds on POST /buy). */
    requiredCents: Schema.optional(Schema.Int),
    balanceCents: Schema.optional(Schema.Int),
    /** Seconds after which a retry can succeed (0: at once, with the fresh challenge); absent: not by waiting. */
    retryAfter: Schema.optional(Schema.Int),
    /** What the client should do next. */
    hint: Schema.String,
    /** Where to fund the wallet (wallet-insufficient-funds). */
    howToFund: Schema.optional(HowToFund)
  },
  {
    httpApiStatus: 402,
    description:
      "Payment required: a Payment challenge (WWW-Authenticate); " +
      "the body is a PaymentProblem (application/problem+json)."
  }
) {}

/** The RFC 9457 members every payment problem body carries. */
const problemCore = {
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  instance: Schema.optional(Schema.String)
}

/**
 * The 402 (and the method-unsupported 400) body on the wire: RFC 9457 problem details with the
 * Payment scheme's type URIs, served as `application/problem+json` with `Cache-Control: no-store`.
 * Extra members: the challenge (its id in `challengeId`), the methods, a hint, the request id.
 * Exported so the OpenAPI document can declare it.
 */
export const PaymentProblem = Schema.Struct({
  ...problemCore,
  challengeId: Schema.String,
  challenge: Challenge,
  methods: Schema.Array(PaymentMethodInfo),
  minimumChargeCents: Schema.Int,
  missingCents: Schema.optional(Schema.Int),
  requiredCents: Schema.optional(Schema.Int),
  balanceCents: Schema.optional(Schema.Int),
  retryAfter: Schema.optional(Schema.Int),
  hint: Schema.String,
  /** Links to fund the wallet (wallet-insufficient-funds). */
  howToFund: Schema.optional(HowToFund),
  /** The same text as `detail`, under the name every other error body of this API uses. */
  message: Schema.String,
  requestId: Schema.String
}).annotate({
  identifier: "PaymentProblem",
  description: "RFC 9457 problem details of a Payment 402 (application/problem+json)"
})
export type PaymentProblem = typeof PaymentProblem.Type

/**
 * A purchase the wallet cannot cover where no challenge applies (InsufficientCredits on the wire):
 * the same problem details with our wallet-insufficient-funds type and how to fund the wallet.
 */
export const WalletProblem = Schema.Struct({
  ...problemCore,
  requiredCents: Schema.Int,
  balanceCents: Schema.Int,
  missingCents: Schema.Int,
  howToFund: HowToFund,
  hint: Schema.String,
  message: Schema.String,
  requestId: Schema.String
}).annotate({
  identifier: "WalletProblem",
  description: "RFC 9457 problem details of a wallet that cannot cover a purchase (application/problem+json)"
})

/** 422 — the price is below the 0.01 USD minimum charge. */
export class ChargeBelowMinimum extends Schema.TaggedError<ChargeBelowMinimum>()(
  "ChargeBelowMinimum",
  { message: Schema.String, amountCents: Schema.Int, minimumCents: Schema.Int },
  { httpApiStatus: 422 }
) {}

/** 409 — the service is not priced per call: buy it with /buy or /saga. */
export class NotPayPerRequest extends Schema.TaggedError<NotPayPerRequest>()(
  "NotPayPerRequest",
  { message: Schema.String, pricingModel: Schema.String },
  { httpApiStatus: 409 }
) {}

/** 403 — the payment is in order, but the wallet's autonomy level needs the owner's approval for this call. */
export class ApprovalRequired extends Schema.TaggedError<ApprovalRequired>()(
  "ApprovalRequired",
  { message: Schema.String, reason: Schema.Literals(["manual", "approvalThreshold"]) },
  { httpApiStatus: 403 }
) {}

/**
 * 502 — the seller's delivery failed; nothing was charged. A simulated seller's failure leaves the
 * challenge open; a real seller's failure within the call's wait has spent it and refunded the
 * held price in full (`transactionId` names the failed transaction).
 */
export class SellerFailed extends Schema.TaggedError<SellerFailed>()(
  "SellerFailed",
  { message: Schema.String, serviceId: Schema.String, transactionId: Schema.optional(Schema.String) },
  { httpApiStatus: 502 }
) {}
