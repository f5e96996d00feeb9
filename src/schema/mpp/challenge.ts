// Micropayment protocol: the Payment challenge, credential and receipt, the stored challenge row,
// and the paid call's request and result.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"

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

/**
 * Where the money a receipt acknowledges is: `settled` (paid to the seller 85/15), or `held` (out
 * of the wallet into the order's escrow: the seller is paid when it delivers; a failure or a
 * missed deadline gives it back to the wallet in full; the transaction tells which).
 */
export const ReceiptSettlement = Schema.Literals(["settled", "held"])
export type ReceiptSettlement = typeof ReceiptSettlement.Type

/** A Payment-Receipt: the credential was accepted and the amount left the wallet (MPP: always "success"). */
export const Receipt = Schema.Struct({
  status: Schema.Literal("success"),
  method: Schema.String,
  intent: Schema.String,
  timestamp: Timestamp,
  /** the ledger entry of the charge (a held one: the escrow hold) */
  reference: Schema.String,
  challengeId: Schema.String,
  /** the commerce transaction (GET /transactions/:id) */
  transactionId: Schema.String,
  amount: Schema.String,
  currency: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  settlement: ReceiptSettlement
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

export const InvokeUrlParams = Schema.Struct({
  tier: Schema.optional(
    Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
  )
})
export const InvokeBody = Schema.Struct({ input: Schema.optional(Schema.Unknown) })

/** A paid call answered: the seller's output (the platform's simulated one for a simulated seller). */
export class InvokeResult extends Schema.Class<InvokeResult>("InvokeResult")({
  status: Schema.Literal("completed"),
  serviceId: Schema.String,
  tierId: Schema.String,
  transactionId: Schema.String,
  chargedCents: Cents,
  output: Schema.Unknown,
  receipt: Receipt
}) {}

/**
 * A paid call whose seller (pull or push) has not answered yet: the credential is spent, the
 * amount held in the order's escrow (the receipt says `held`). The transaction says how it ends:
 * completed with the seller's output, or failed and refunded in full.
 */
export class PendingInvokeResult extends Schema.Class<PendingInvokeResult>("PendingInvokeResult")({
  status: Schema.Literal("pending"),
  serviceId: Schema.String,
  tierId: Schema.String,
  transactionId: Schema.String,
  /** Out of the wallet, in escrow until the seller answers. */
  heldCents: Cents,
  /** When the order expires unanswered (refunded). */
  deadlineAt: Timestamp,
  output: Schema.Null,
  receipt: Receipt,
  /** Where the outcome appears: the transaction (and the order) to read, the events that announce it. */
  follow: Schema.Struct({
    transaction: Schema.String,
    order: Schema.String,
    events: Schema.Array(Schema.String)
  })
}) {}
