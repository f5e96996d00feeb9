// Stored commerce rows as the API shows them: a transaction from its viewer's side, an approval
// with its effective status.
import { cents } from "../../schema/platform/common.js"
import { Approval, type ApprovalRecord, type ApprovalStatus } from "../../schema/commerce/approvals.js"
import type { Transaction, TransactionRow } from "../../schema/commerce/transactions.js"

/** Built from stored rows without re-validation (a hot path; the rows were validated on the way in). */
export const toTransaction = (row: TransactionRow, viewer: string): Transaction => ({
  id: row.tx.id,
  role: row.tx.buyerAgentId === viewer ? "buyer" : "seller",
  status: row.tx.status,
  buyerAgentId: row.tx.buyerAgentId,
  sellerAgentId: row.tx.sellerAgentId,
  serviceId: row.tx.serviceId,
  serviceName: row.tx.serviceName,
  category: row.tx.category,
  pricingModel: row.tx.pricingModel,
  tierId: row.tx.tierId,
  currency: "usd",
  listPriceCents: cents(row.tx.listPriceCents),
  priceCents: cents(row.tx.priceCents),
  sellerCents: cents(row.tx.sellerCents),
  feeCents: cents(row.tx.feeCents),
  negotiationId: row.tx.negotiationId,
  approvalId: row.tx.approvalId,
  ledgerEntryId: row.tx.ledgerEntryId,
  sla:
    row.tx.promisedP95LatencyMs === null || row.tx.promisedUptimePct === null
      ? null
      : { p95LatencyMs: row.tx.promisedP95LatencyMs, uptimePct: row.tx.promisedUptimePct },
  delivery: row.delivery
    ? {
        success: row.delivery.success,
        latencyMs: row.delivery.latencyMs,
        output: row.delivery.output,
        error: row.delivery.error,
        deliveredAt: row.delivery.deliveredAt
      }
    : null,
  review: row.review ? { ...row.review } : null,
  disputeId: row.disputeId,
  createdAt: row.tx.createdAt,
  refundedAt: row.tx.refundedAt
})

/** A pending approval past its expiry is expired, whatever the row still says. */
export const effectiveApprovalStatus = (a: ApprovalRecord, now: number): ApprovalStatus =>
  a.status === "pending" && Date.parse(a.expiresAt) <= now ? "expired" : a.status

export const toApproval = (a: ApprovalRecord, now: number): Approval =>
  Approval.make(
    {
      id: a.id,
      agentId: a.agentId,
      serviceId: a.serviceId,
      tierId: a.tierId,
      quotedPriceCents: cents(a.quotedPriceCents),
      negotiationId: a.negotiationId,
      reason: a.reason,
      status: effectiveApprovalStatus(a, now),
      transactionId: a.transactionId,
      decidedBy: a.decidedBy,
      createdAt: a.createdAt,
      decidedAt: a.decidedAt,
      expiresAt: a.expiresAt
    },
    { disableChecks: true }
  )
