// Micropayment protocol (HTTP 402 pay-per-request): discovery, health, the Payment challenge,
// credential and receipt (MPP "Payment" auth scheme, docs/mpp.md), and the stored challenge row.
import { Schema } from "effect"
import { Cents, Timestamp } from "./common.js"

/** Spec §8: the smallest charge is 0.01 USD. */
export const MPP_MINIMUM_CHARGE_CENTS = 1
export const MPP_CURRENCY = "usd"
/** A challenge is valid this long after it is issued. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000
export const MPP_REALM = "ai2aic-commerce"
/** The internal credit method's identifier (MPP method ids are lowercase letters). */
export const CREDITS_METHOD = "credits"
export const CHARGE_INTENT = "charge"
/** The challenge selects this field, so `Authorization` keeps the bearer key. */
export const CREDENTIAL_HEADER = "Payment-Authorization"
export const RECEIPT_HEADER = "Payment-Receipt"
export const PROBLEM_BASE = "https://paymentauth.org/problems/"

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
  /** RFC 9530 content digest of the request body the challenge pays for */
  digest: Schema.String,
  header: Schema.String
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

export const InvokeUrlParams = Schema.Struct({ tier: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(100)))) })
export const InvokeBody = Schema.Struct({ input: Schema.optional(Schema.Unknown) })

export class InvokeResult extends Schema.Class<InvokeResult>("InvokeResult")({
  serviceId: Schema.String,
  tierId: Schema.String,
  transactionId: Schema.String,
  chargedCents: Cents,
  output: Schema.Unknown,
  receipt: Receipt
}) {}

export const MppProblem = Schema.Literals(["payment-required", "malformed-credential", "invalid-challenge", "payment-expired", "verification-failed", "payment-insufficient"])
export type MppProblem = typeof MppProblem.Type

/** 402 — pay first: a fresh challenge (also in WWW-Authenticate) and why the last credential, if any, was refused. */
export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()(
  "PaymentRequired",
  {
    message: Schema.String,
    /** MPP problem type (https://paymentauth.org/problems/<problem>) */
    problem: Schema.String,
    challenge: Challenge,
    methods: Schema.Array(PaymentMethodInfo),
    minimumChargeCents: Schema.Int,
    /** How many cents the wallet lacks, when that is why (payment-insufficient). */
    missingCents: Schema.optional(Schema.Int)
  },
  { httpApiStatus: 402, description: "Payment required: a Payment challenge (WWW-Authenticate) and its JSON twin." }
) {}

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
