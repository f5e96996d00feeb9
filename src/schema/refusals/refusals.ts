// Refusals: a debit the wallet said no to (a limit, an allow-list, the balance, a freeze), kept as
// a record so that the owner sees what their agent tried and why it was stopped, not only the
// agent that got the 403 or 402.
import { Schema } from "effect"
import { Cents, Cursor, PageLimit, Timestamp } from "../platform/common.js"

/**
 * Why the debit was refused, in the owner's terms (docs/money.md, "Refusals"). A declined approval
 * is not here: it is the owner's own decision and sits in the audit trail.
 */
export const RefusalReason = Schema.Literals([
  "frozen",
  "per_purchase_limit",
  "daily_limit",
  "monthly_limit",
  "category",
  "seller_allowlist",
  "insufficient_balance"
])
export type RefusalReason = typeof RefusalReason.Type

/** Which debit path was refused. */
export const RefusalPath = Schema.Literals(["buy", "approval", "paid_call", "saga", "invest", "build", "negotiation"])
export type RefusalPath = typeof RefusalPath.Type

/** What a caller hands to Refusals.record; the id, the account and the time are the service's. */
export interface RefusalInput {
  readonly agentId: string
  /** The service bought (null for invest and build, which buy none). */
  readonly serviceId: string | null
  /** The service's or the debit's name when the caller has it; else looked up from serviceId. */
  readonly serviceName: string | null
  readonly tierId: string | null
  readonly priceCents: number
  readonly reason: RefusalReason
  /** The refusal's message, as the agent read it. */
  readonly message: string
  readonly path: RefusalPath
}

/** A refusal as stored (the account resolved from the agent at the write). */
export interface RefusalRecord extends RefusalInput {
  readonly id: string
  readonly createdAt: string
}

export const RefusalView = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  serviceId: Schema.NullOr(Schema.String),
  serviceName: Schema.NullOr(Schema.String),
  tierId: Schema.NullOr(Schema.String),
  priceCents: Cents,
  reason: RefusalReason,
  message: Schema.String,
  path: RefusalPath,
  createdAt: Timestamp
})
export type RefusalView = typeof RefusalView.Type

export const RefusalsUrlParams = Schema.Struct({
  agentId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  /** The previous page's `nextCursor`: the page after it (older refusals). */
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit)
})

export const AgentRefusalsUrlParams = Schema.Struct({
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit)
})

/** A keyset page of refusals, newest first; `nextCursor` is null on the last page. */
export const RefusalsPage = Schema.Struct({
  refusals: Schema.Array(RefusalView),
  nextCursor: Schema.NullOr(Schema.String)
})
export type RefusalsPage = typeof RefusalsPage.Type
