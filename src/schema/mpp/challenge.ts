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

export const InvokeUrlParams = Schema.Struct({
  tier: Schema.optional(
    Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
  )
})
export const InvokeBody = Schema.Struct({ input: Schema.optional(Schema.Unknown) })

export class InvokeResult extends Schema.Class<InvokeResult>("InvokeResult")({
  serviceId: Schema.String,
  tierId: Schema.String,
  transactionId: Schema.String,
  chargedCents: Cents,
  output: Schema.Unknown,
  receipt: Receipt
}) {}
