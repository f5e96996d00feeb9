// Micropayment protocol (HTTP 402 pay-per-request, MPP "Payment" auth scheme, docs/mpp.md): its
// constants, the payment methods, discovery and health.
import { Schema } from "effect"
import { Timestamp } from "../platform/common.js"

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
  {
    id: "credits.charge",
    method: CREDITS_METHOD,
    intent: CHARGE_INTENT,
    status: "active",
    description: "Internal credits: the agent's wallet is charged; 85 % to the seller, 15 % platform fee."
  },
  {
    id: "crypto.charge",
    method: "crypto",
    intent: CHARGE_INTENT,
    status: "not_yet_available",
    description: "On-chain stablecoin payment (pending early access)."
  },
  {
    id: "card.charge",
    method: "card",
    intent: CHARGE_INTENT,
    status: "not_yet_available",
    description: "Card payment through the payment processor (pending early access)."
  }
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
