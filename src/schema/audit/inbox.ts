// The owner's approvals inbox across agents: each approval with the names an owner reads (the agent
// that asked, the service and tier, the seller) and why it waits, in words.
import { Schema } from "effect"
import { Approval } from "../commerce/approvals.js"

export const InboxApproval = Schema.Struct({
  ...Approval.fields,
  agentName: Schema.NullOr(Schema.String),
  /** null when the service is no longer in the catalogue. */
  serviceName: Schema.NullOr(Schema.String),
  tierName: Schema.NullOr(Schema.String),
  sellerAgentId: Schema.NullOr(Schema.String),
  sellerName: Schema.NullOr(Schema.String),
  /** Why it waits, in the owner's words. */
  reasonText: Schema.String
})
export type InboxApproval = typeof InboxApproval.Type

/** A keyset page (default and most: 100 rows): pass `nextCursor` back as `cursor`; null on the last page. */
export const InboxPage = Schema.Struct({
  data: Schema.Array(InboxApproval),
  nextCursor: Schema.NullOr(Schema.String)
})

export const reasonText = (reason: "manual" | "approvalThreshold"): string =>
  reason === "manual"
    ? "Every purchase of this agent waits for you (autonomy: manual)."
    : "The price is above the agent's approval threshold."
