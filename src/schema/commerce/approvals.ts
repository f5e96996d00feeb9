// Approvals: a purchase that waits for the account owner, and what POST /buy and a decision answer.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"
import { Transaction } from "./transactions.js"

/**
 * `void`: approved after what was quoted changed (nothing charged); `withdrawn`: the agent that asked
 * took it back while it waited (nothing charged).
 */
export const ApprovalStatus = Schema.Literals(["pending", "approved", "declined", "expired", "void", "withdrawn"])
export type ApprovalStatus = typeof ApprovalStatus.Type

export interface ApprovalRecord {
  readonly id: string
  readonly accountId: string
  readonly agentId: string
  readonly serviceId: string
  readonly tierId: string
  readonly quotedPriceCents: number
  readonly negotiationId: string | null
  readonly input: unknown
  /** Why it waits: "manual" (every purchase) or "approvalThreshold". */
  readonly reason: "manual" | "approvalThreshold"
  readonly status: ApprovalStatus
  readonly idempotencyKey: string | null
  /** The id the transaction gets when approved (a redeemed negotiation is marked used by it). */
  readonly reservedTransactionId: string
  readonly transactionId: string | null
  readonly decidedBy: string | null
  readonly createdAt: string
  readonly decidedAt: string | null
  readonly expiresAt: string
}

export class Approval extends Schema.Class<Approval>("Approval")({
  id: Schema.String,
  agentId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  quotedPriceCents: Cents,
  negotiationId: Schema.NullOr(Schema.String),
  reason: Schema.Literals(["manual", "approvalThreshold"]),
  status: ApprovalStatus,
  transactionId: Schema.NullOr(Schema.String),
  decidedBy: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  decidedAt: Schema.NullOr(Timestamp),
  expiresAt: Timestamp
}) {}

export const PurchaseStatus = Schema.Literals(["completed", "failed", "pending", "pending_approval"])

/**
 * What POST /buy answers: a completed (or failed-delivery, uncharged) transaction, a pending one
 * whose seller has not answered yet (the price held in escrow), or an approval that waits.
 */
export const Purchase = Schema.Struct({
  status: PurchaseStatus,
  transaction: Schema.NullOr(Transaction),
  approval: Schema.NullOr(Approval)
})
export type Purchase = typeof Purchase.Type

export const ApprovalDecision = Schema.Struct({ approval: Approval, transaction: Schema.NullOr(Transaction) })
