// Disputes over a transaction: the stored row, the view, and the bodies that open and answer one.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"
import { Text } from "./common.js"

export const DisputeStatus = Schema.Literals(["open", "under_review", "resolved_refunded", "resolved_rejected"])
export type DisputeStatus = typeof DisputeStatus.Type

export interface DisputeRecord {
  readonly id: string
  readonly transactionId: string
  readonly buyerAgentId: string
  readonly sellerAgentId: string
  readonly reason: string
  readonly status: DisputeStatus
  readonly sellerResponse: "accept" | "contest" | null
  readonly sellerNote: string | null
  readonly resolution: string | null
  readonly refundCents: number
  readonly refundEntryId: string | null
  readonly respondBy: string
  readonly reviewDueAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly resolvedAt: string | null
}

export class Dispute extends Schema.Class<Dispute>("Dispute")({
  id: Schema.String,
  role: Schema.Literals(["buyer", "seller"]),
  transactionId: Schema.String,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  reason: Schema.String,
  status: DisputeStatus,
  sellerResponse: Schema.NullOr(Schema.Literals(["accept", "contest"])),
  sellerNote: Schema.NullOr(Schema.String),
  resolution: Schema.NullOr(Schema.String),
  refundCents: Cents,
  refundEntryId: Schema.NullOr(Schema.String),
  respondBy: Timestamp,
  reviewDueAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  resolvedAt: Schema.NullOr(Timestamp)
}) {}

export const OpenDisputeBody = Schema.Struct({ transactionId: Text(100), reason: Text(2000) })
export const RespondDisputeBody = Schema.Struct({
  action: Schema.Literals(["accept", "contest"]),
  note: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(2000))))
})
