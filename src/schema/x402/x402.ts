// x402 v2 (docs/x402.md): the wire shapes the paid call speaks beside MPP — PaymentRequired (the
// PAYMENT-REQUIRED header), PaymentPayload (PAYMENT-SIGNATURE), SettleResponse (PAYMENT-RESPONSE) —
// the facilitator API's requests and answers, the `exact` scheme's EIP-3009 authorization, the
// payment's stored record and its states, and the errors the paid call answers with. Every incoming
// value is decoded by these schemas (an unknown field is kept: x402 messages grow by extensions).
import { Schema } from "effect"

export const X402_VERSION = 2
export const PAYMENT_REQUIRED_HEADER = "PAYMENT-REQUIRED"
export const PAYMENT_SIGNATURE_HEADER = "PAYMENT-SIGNATURE"
export const PAYMENT_RESPONSE_HEADER = "PAYMENT-RESPONSE"
/** The `payment-identifier` extension's key (x402 extensions): `extensions["payment-identifier"].info.id`. */
export const PAYMENT_IDENTIFIER_EXTENSION = "payment-identifier"
/** The only scheme offered: `exact`, with an EIP-3009 `transferWithAuthorization`. */
export const EXACT_SCHEME = "exact"

/** A CAIP-2 EVM network id: `eip155:<chain id>`. */
/** A 20-byte hex address (any case). */
export const Address = Schema.String.pipe(Schema.check(Schema.isPattern(/^0x[0-9a-fA-F]{40}$/u)))
/** A non-negative integer amount of the asset's base units, as a decimal string. */
export const AtomicAmount = Schema.String.pipe(Schema.check(Schema.isPattern(/^(0|[1-9]\d{0,77})$/u)))
/** 32 bytes, hex. */
export const Bytes32 = Schema.String.pipe(Schema.check(Schema.isPattern(/^0x[0-9a-fA-F]{64}$/u)))
/** An ECDSA signature (65 bytes; longer for smart-wallet signatures), hex. */
export const HexSignature = Schema.String.pipe(Schema.check(Schema.isPattern(/^0x(?:[0-9a-fA-F]{2}){65,4096}$/u)))

export const ResourceInfo = Schema.Struct({
  url: Schema.String,
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String)
})
export type ResourceInfo = typeof ResourceInfo.Type

export const PaymentRequirements = Schema.Struct({
  scheme: Schema.String,
  network: Schema.String,
  asset: Schema.String,
  amount: Schema.String,
  payTo: Schema.String,
  maxTimeoutSeconds: Schema.Int,
  extra: Schema.Record(Schema.String, Schema.Unknown)
})
export type PaymentRequirements = typeof PaymentRequirements.Type

/** The PAYMENT-REQUIRED header's JSON (base64). */
export const PaymentRequired = Schema.Struct({
  x402Version: Schema.Int,
  error: Schema.optional(Schema.String),
  resource: ResourceInfo,
  accepts: Schema.Array(PaymentRequirements),
  extensions: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({
  identifier: "X402PaymentRequired",
  description: "x402 v2 PaymentRequired (the PAYMENT-REQUIRED header, decoded)"
})
export type PaymentRequired = typeof PaymentRequired.Type

/** The `exact` scheme's EIP-3009 authorization, as signed (uint256 values as decimal strings). */
export const Eip3009Authorization = Schema.Struct({
  from: Address,
  to: Address,
  value: AtomicAmount,
  validAfter: AtomicAmount,
  validBefore: AtomicAmount,
  nonce: Bytes32
})
export type Eip3009Authorization = typeof Eip3009Authorization.Type

export const ExactEvmPayload = Schema.Struct({ signature: HexSignature, authorization: Eip3009Authorization })
export type ExactEvmPayload = typeof ExactEvmPayload.Type

/** The PAYMENT-SIGNATURE header's JSON (base64): the requirements chosen and the signed payload. */
export const PaymentPayload = Schema.Struct({
  x402Version: Schema.Int,
  resource: Schema.optional(ResourceInfo),
  accepted: PaymentRequirements,
  payload: Schema.Record(Schema.String, Schema.Unknown),
  extensions: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})
export type PaymentPayload = typeof PaymentPayload.Type

/** The PAYMENT-RESPONSE header's JSON (base64), and the facilitator's /settle answer. */
export const SettleResponse = Schema.Struct({
  success: Schema.Boolean,
  errorReason: Schema.optional(Schema.String),
  errorMessage: Schema.optional(Schema.String),
  payer: Schema.optional(Schema.String),
  transaction: Schema.String,
  network: Schema.String,
  amount: Schema.optional(Schema.String),
  extensions: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  extra: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})
export type SettleResponse = typeof SettleResponse.Type

/** The facilitator's /verify answer. */
export const VerifyResponse = Schema.Struct({
  isValid: Schema.Boolean,
  invalidReason: Schema.optional(Schema.String),
  invalidMessage: Schema.optional(Schema.String),
  payer: Schema.optional(Schema.String)
})
export type VerifyResponse = typeof VerifyResponse.Type

/** The facilitator's /supported answer. */
export const SupportedResponse = Schema.Struct({
  kinds: Schema.Array(
    Schema.Struct({
      x402Version: Schema.Int,
      scheme: Schema.String,
      network: Schema.String,
      extra: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
    })
  ),
  extensions: Schema.optional(Schema.Array(Schema.String)),
  signers: Schema.optional(Schema.Record(Schema.String, Schema.Array(Schema.String)))
})
export type SupportedResponse = typeof SupportedResponse.Type

/** The `payment-identifier` extension as a client sends it. */
export const PaymentIdentifier = Schema.Struct({
  info: Schema.Struct({
    id: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(16)), Schema.check(Schema.isMaxCodePoints(128)))
  })
})

/**
 * A payment's states (docs/x402.md has the table). `settling`: the facilitator was asked to settle
 * and has not answered; `settlement_pending`: it did not answer in time or its answer was lost
 * (reconciled from the chain, never charged twice); `held`: the asset moved to payTo and funds an
 * order held in escrow while its seller works; `settled`: the asset moved and paid the seller; `failed`: nothing moved; `refunding` / `refunded`: the purchase failed and the
 * amount goes back to the payer on the chain; `kept_as_credits`: a keyed agent's refund its wallet
 * could no longer cover (it had spent the credits the failed order gave back).
 */
export const PaymentStatus = Schema.Literals([
  "settling",
  "settlement_pending",
  "held",
  "settled",
  "failed",
  "refunding",
  "refunded",
  "kept_as_credits"
])
export type PaymentStatus = typeof PaymentStatus.Type

/** A payment as stored: what was paid, by whom, for which call, and how it stands. */
export interface PaymentRecord {
  /** `x402_…`: the payment's own id (the purchase's challenge reference, the receipt's `challengeId`). */
  readonly id: string
  /** The payer-chosen name of the payment: the payment-identifier, the Idempotency-Key, or `nonce:<nonce>`. */
  readonly paymentKey: string
  /** The payer's address, lower case. */
  readonly payer: string
  readonly network: string
  readonly asset: string
  readonly nonce: string
  /** sha-256 of the payload and the request it pays (service, tier, body): "the same payment". */
  readonly fingerprint: string
  readonly amountUnits: string
  readonly amountCents: number
  readonly validBefore: number
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  /** The buyer of record: the keyed agent, or the payer's own agent (`agt_x402_<address>`). */
  readonly buyerAgentId: string
  readonly buyerAccountId: string
  readonly keyed: boolean
  readonly status: PaymentStatus
  /** The PaymentPayload as sent (kept to settle again while the outcome is unknown). */
  readonly payload: PaymentPayload
  readonly settleTransaction: string | null
  /** The refund's mined transaction (set when `refunded`). */
  readonly refundTransaction: string | null
  /**
   * The refund signed and recorded before it was first sent (status `refunding`): broadcast again
   * until it is mined, signed anew only once the chain says it never can be (docs/x402.md).
   */
  readonly refundAttempt: {
    readonly transaction: string
    readonly nonce: number
    readonly raw: string
    /** Earlier refunds at this nonce it replaced with a higher fee (any may be the one mined). */
    readonly replaces?: ReadonlyArray<string>
    readonly signedAt?: string
  } | null
  readonly transactionId: string | null
  /** The answer the call gave (replayed to a retry of the same payment). */
  readonly answer: StoredAnswer | null
  /** The secret the payer reads its payment with (returned in PAYMENT-RESPONSE). */
  readonly token: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** The first answer of a payment: its HTTP status and body, replayed as it was. */
export interface StoredAnswer {
  readonly status: number
  readonly body: unknown
  readonly settle: SettleResponse
}

/** 402 — pay with x402: the requirements in PAYMENT-REQUIRED (and here); `error` says why a payment was refused. */
export class X402PaymentRequired extends Schema.TaggedError<X402PaymentRequired>()(
  "X402PaymentRequired",
  {
    message: Schema.String,
    /** x402's reason, as in PaymentRequired.error / SettleResponse.errorReason. */
    reason: Schema.optional(Schema.String),
    paymentRequired: PaymentRequired,
    hint: Schema.String
  },
  {
    httpApiStatus: 402,
    description:
      "Payment required with x402 (no API key, or a refused PAYMENT-SIGNATURE): the requirements in the " +
      "PAYMENT-REQUIRED header and in `paymentRequired`."
  }
) {}

/** 409 — this payment id (payment-identifier, Idempotency-Key or authorization nonce) already paid another request. */
export class PaymentConflict extends Schema.TaggedError<PaymentConflict>()(
  "PaymentConflict",
  { message: Schema.String, paymentKey: Schema.String },
  { httpApiStatus: 409 }
) {}

/**
 * A paid call whose settlement's outcome is not known yet (the facilitator timed out or its answer
 * was lost): nothing more is asked of the payer, the payment is reconciled from the chain; read it
 * at `follow.payment` with the token.
 */
export class SettlementPendingResult extends Schema.Class<SettlementPendingResult>("SettlementPendingResult")({
  status: Schema.Literal("settlement_pending"),
  serviceId: Schema.String,
  tierId: Schema.String,
  paymentId: Schema.String,
  message: Schema.String,
  follow: Schema.Struct({ payment: Schema.String })
}) {}

/** The payment as its payer reads it (GET /commerce/x402/payments/:id with the token). */
export const PaymentView = Schema.Struct({
  id: Schema.String,
  status: PaymentStatus,
  payer: Schema.String,
  network: Schema.String,
  asset: Schema.String,
  amount: Schema.String,
  amountCents: Schema.Int,
  serviceId: Schema.String,
  tierId: Schema.String,
  /** The purchase's transaction (null until settled). */
  transactionId: Schema.NullOr(Schema.String),
  /** The purchase as it stands: pending (its seller works), completed, failed. */
  purchaseStatus: Schema.NullOr(Schema.String),
  /** The seller's output once delivered. */
  output: Schema.Unknown,
  /** The chain transaction that paid (to payTo), and the one that refunded the payer. */
  settleTransaction: Schema.NullOr(Schema.String),
  refundTransaction: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "X402PaymentView" })
export type PaymentView = typeof PaymentView.Type

/** `10^(decimals-2)` base units per cent: 10,000 for a 6-decimal asset. */
export const unitsPerCent = (decimals: number): bigint => 10n ** BigInt(Math.max(0, decimals - 2))

/** The ledger account of an x402 network's asset: money in from (and refunds out to) that chain. */
export const x402Account = (network: string, asset: string) => `external:x402:${network}:${asset.toLowerCase()}`
