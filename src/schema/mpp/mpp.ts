// Micropayment protocol (HTTP 402 pay-per-request): discovery, health, the Payment challenge,
// credential and receipt (MPP "Payment" auth scheme, docs/mpp.md), and the stored challenge row.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"
import { HowToFund } from "../commerce/commerce.js"

/** Spec §8: the smallest charge is 0.01 USD. */
export const MPP_MINIMUM_CHARGE_CENTS = 1
export const MPP_CURRENCY = "usd"
/** A challenge is valid this long after it is issued. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000
export const MPP_REALM = "ai2aic-commerce"
/** The internal credit method's identifier (MPP method ids are lowercase letters). */
export const CREDITS_METHOD = "credits"
export const CHARGE_INTENT = "charge"
/**
 * mppx's `header` extension: the challenge names this field when the API key travels as
 * `Authorization: Bearer`, so both fit; a caller that sends its key in `X-API-Key` gets a challenge
 * without `header` and pays in `Authorization: Payment …` as the draft writes it.
 */
export const CREDENTIAL_HEADER = "Payment-Authorization"
export const RECEIPT_HEADER = "Payment-Receipt"
/** Where an agent may send its API key when `Authorization` carries a Payment credential. */
export const API_KEY_HEADER = "X-API-Key"
/** The Payment scheme's problem types (draft-httpauth-payment §8). */
export const PROBLEM_BASE = "https://paymentauth.org/problems/"
/**
 * Our own problem type (documented in docs/mpp.md): the credential was in order but the wallet it
 * draws on is short. Not `payment-insufficient`, which means "the amount paid is too low".
 */
export const WALLET_INSUFFICIENT_PROBLEM = "tag:ai2aic-commerce,2026:problems/wallet-insufficient-funds"
/** MCP transport of the Payment scheme (draft-payment-transport-mcp): JSON-RPC codes and _meta keys. */
export const MCP_PAYMENT_REQUIRED_CODE = -32042
export const MCP_PAYMENT_VERIFICATION_FAILED_CODE = -32043
export const MCP_CREDENTIAL_META = "org.paymentauth/credential"
export const MCP_RECEIPT_META = "org.paymentauth/receipt"

export const MethodStatus = Schema.Literals(["active", "not_yet_available"])

export const PaymentMethodInfo = Schema.Struct({
  /** neutral form `method.intent` (spec §8: crypto.charge, card.charge) */
  id: Schema.String,
  method: Schema.String,
  intent: Schema.String,
  status: MethodStatus,
  description: Schema.String
})
export type PaymentMethodInfo = typeof PaymentMethodInfo.Type

export const paymentMethods: ReadonlyArray<PaymentMethodInfo> = [
  { id: "credits.charge", method: CREDITS_METHOD, intent: CHARGE_INTENT, status: "active", description: "Internal credits: the agent's wallet is charged; 85 % to the seller, 15 % platform fee." },
  { id: "crypto.charge", method: "crypto", intent: CHARGE_INTENT, status: "not_yet_available", description: "On-chain stablecoin payment (pending early access)." },
  { id: "card.charge", method: "card", intent: CHARGE_INTENT, status: "not_yet_available", description: "Card payment through the payment processor (pending early access)." }
]

export class MppDiscovery extends Schema.Class<MppDiscovery>("MppDiscovery")({
  protocol: Schema.Literal("MPP"),
  status: Schema.Literal("pending_early_access"),
  description: Schema.String,
  pricing: Schema.Struct({
    model: Schema.Literal("per_request"),
    transport: Schema.String,
    currency: Schema.String,
    minimumChargeCents: Schema.Int,
    minimumCharge: Schema.String
  }),
  methods: Schema.Array(PaymentMethodInfo),
  fallback: Schema.Struct({ method: Schema.String, status: Schema.Literal("active"), description: Schema.String }),
  headers: Schema.Struct({ challenge: Schema.String, credential: Schema.String, receipt: Schema.String }),
  invoke: Schema.Struct({ method: Schema.String, path: Schema.String, appliesTo: Schema.String }),
  realm: Schema.String,
  challengeTtlSeconds: Schema.Int,
  docs: Schema.String
}) {}

export const HealthCheck = Schema.Struct({ ok: Schema.Boolean, latencyMs: Schema.Number, detail: Schema.String })

export class MppHealth extends Schema.Class<MppHealth>("MppHealth")({
  status: Schema.Literals(["ok", "degraded"]),
  protocolStatus: Schema.Literal("pending_early_access"),
  checkedAt: Timestamp,
  checks: Schema.Struct({ storage: HealthCheck, ledger: HealthCheck, credits: HealthCheck }),
  methods: Schema.Array(Schema.Struct({ id: Schema.String, status: MethodStatus }))
}) {}

/** The decoded `request` parameter of a charge challenge (MPP charge intent shared fields). */
export const ChargeRequest = Schema.Struct({
  amount: Schema.String,
  currency: Schema.String,
  recipient: Schema.String,
  description: Schema.String,
  externalId: Schema.String
})
export type ChargeRequest = typeof ChargeRequest.Type

/** The challenge as sent in WWW-Authenticate, and echoed in the 402 body for clients that prefer JSON. */
export const Challenge = Schema.Struct({
  id: Schema.String,
  realm: Schema.String,
  method: Schema.String,
  intent: Schema.String,
  /** base64url (no padding) of the canonical JSON of `requestDecoded` */
  request: Schema.String,
  requestDecoded: ChargeRequest,
  expires: Timestamp,
  /** RFC 9530 content digest (`sha-256=:<base64>:`) of the request body bytes the challenge pays for */
  digest: Schema.String,
  /** The field the credential goes in; absent: `Authorization` (the draft's default). */
  header: Schema.optional(Schema.String),
  /** base64url of canonical JSON `{nonce}`: makes every challenge, and so its HMAC id, fresh. */
  opaque: Schema.String
})
export type Challenge = typeof Challenge.Type

export const Receipt = Schema.Struct({
  status: Schema.Literal("success"),
  method: Schema.String,
  intent: Schema.String,
  timestamp: Timestamp,
  /** the ledger entry of the charge */
  reference: Schema.String,
  challengeId: Schema.String,
  /** the commerce transaction (GET /transactions/:id) */
  transactionId: Schema.String,
  amount: Schema.String,
  currency: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String
})
export type Receipt = typeof Receipt.Type

export const ChallengeStatus = Schema.Literals(["open", "paid"])
export type ChallengeStatus = typeof ChallengeStatus.Type

/** The stored challenge: bound to the agent and key it was issued to, single use. */
export interface ChallengeRecord {
  readonly id: string
  readonly agentId: string
  readonly keyId: string
  readonly serviceId: string
  readonly tierId: string
  readonly sellerAgentId: string
  readonly amountCents: number
  /** The exact base64url `request` parameter issued. */
  readonly request: string
  readonly digest: string
  readonly status: ChallengeStatus
  readonly expiresAt: string
  readonly createdAt: string
  readonly paidAt: string | null
  /** The ledger entry id of the charge. */
  readonly entryId: string | null
  /** The commerce transaction recorded for the paid call. */
  readonly transactionId: string | null
}

export const InvokeUrlParams = Schema.Struct({ tier: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))) })
export const InvokeBody = Schema.Struct({ input: Schema.optional(Schema.Unknown) })

export class InvokeResult extends Schema.Class<InvokeResult>("InvokeResult")({
  serviceId: Schema.String,
  tierId: Schema.String,
  transactionId: Schema.String,
  chargedCents: Cents,
  output: Schema.Unknown,
  receipt: Receipt
}) {}

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
export const problemType = (p: MppProblem) => (p === "wallet-insufficient-funds" ? WALLET_INSUFFICIENT_PROBLEM : `${PROBLEM_BASE}${p}`)

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
  { httpApiStatus: 402, description: "Payment required: a Payment challenge (WWW-Authenticate); the body is a PaymentProblem (application/problem+json)." }
) {}

/**
 * The 402 (and the method-unsupported 400) body on the wire: RFC 9457 problem details with the
 * Payment scheme's type URIs, served as `application/problem+json` with `Cache-Control: no-store`.
 * Extra members: the challenge (its id in `challengeId`), the methods, a hint, the request id.
 * Exported so the OpenAPI document can declare it.
 */
/** The RFC 9457 members every payment problem body carries. */
const problemCore = {
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  instance: Schema.optional(Schema.String)
}

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
}).annotate({ identifier: "PaymentProblem", description: "RFC 9457 problem details of a Payment 402 (application/problem+json)" })
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
}).annotate({ identifier: "WalletProblem", description: "RFC 9457 problem details of a wallet that cannot cover a purchase (application/problem+json)" })

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

/** 502 — the seller's delivery failed; nothing was charged and the challenge stays open. */
export class SellerFailed extends Schema.TaggedError<SellerFailed>()(
  "SellerFailed",
  { message: Schema.String, serviceId: Schema.String },
  { httpApiStatus: 502 }
) {}
