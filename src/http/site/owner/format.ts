// The owner's pages: where they live, and money and times as a person reads them.
import { type Html, html } from "../templates/html.js"

export const OWNER_PREFIX = "/agent-dashboard/agents"
/** How often the page asks for new approvals (the script reads it from the page). */
export const APPROVAL_POLL_MS = 2000
export const CHART_DAYS = 30

/** Integer cents as dollars ("$1,234.56"); money stays in cents everywhere else. */
export const usd = (cents: number): string => {
  const abs = Math.abs(cents)
  return `${cents < 0 ? "-" : ""}$${Math.floor(abs / 100).toLocaleString("en-US")}.${String(abs % 100).padStart(2, "0")}`
}
/** Cents as the dollars an input shows ("12.50"), or "" for no limit. */
export const dollarsField = (cents: number | null): string =>
  cents === null ? "" : `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`

export const when = (iso: string | null): Html | string =>
  iso ? html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>` : "—"
export const agentPath = (agentId: string) => `${OWNER_PREFIX}/${encodeURIComponent(agentId)}`

/** What happened to the money, in the owner's words, for a transaction's status. */
export const moneyStatus = (status: string, priceCents: number, role: string): string => {
  const paid = role === "seller" ? "received" : "charged"
  switch (status) {
    case "completed":
      return `Completed — ${usd(priceCents)} ${paid}`
    case "failed":
      return role === "seller" ? "Failed — nothing received" : "Failed — not charged"
    case "refunded":
      return `Refunded — ${usd(priceCents)} ${role === "seller" ? "returned to the buyer" : "back in the wallet"}`
    case "pending":
      return `Waiting for the seller — ${usd(priceCents)} held`
    default:
      return status
  }
}

/** A dispute's state and what it means for the money (an open one has no refund yet). */
export const disputeStatus = (status: string, refundCents: number, priceCents: number | null): string => {
  switch (status) {
    case "open":
    case "under_review":
      return priceCents === null ? "Refund pending" : `Refund pending — up to ${usd(priceCents)}`
    case "resolved_refunded":
      return `Refunded ${usd(refundCents)}`
    case "resolved_rejected":
      return "Rejected — no refund"
    default:
      return status
  }
}

/** Why the wallet refused a debit, in the owner's words. */
const REFUSAL_REASONS: Readonly<Record<string, string>> = {
  frozen: "The agent is frozen",
  per_purchase_limit: "Over the per-purchase limit",
  daily_limit: "Over the daily limit",
  monthly_limit: "Over the monthly limit",
  category: "Category not allowed",
  seller_allowlist: "Seller not allowed",
  insufficient_balance: "Not enough balance"
}
export const refusalReason = (reason: string): string => REFUSAL_REASONS[reason] ?? reason

/** The form fields' names as the owner reads them (labels), for messages about what was typed. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  amount: "Top-up amount",
  perTransactionLimit: "Per purchase limit",
  perTransactionLimitCents: "Per purchase limit",
  dailyLimit: "Daily limit",
  dailyLimitCents: "Daily limit",
  monthlyLimit: "Monthly limit",
  monthlyLimitCents: "Monthly limit",
  approvalThreshold: "Approval threshold",
  approvalThresholdCents: "Approval threshold",
  autonomyLevel: "Autonomy",
  allowedCategories: "Allowed categories",
  allowedSellers: "Allowed sellers",
  autoRechargeThreshold: "Auto-recharge below",
  autoRechargeAmount: "Auto-recharge by",
  autoRecharge: "Auto-recharge",
  thresholdCents: "Auto-recharge below"
}

/**
 * A message for the owner: a leading field name (`dailyLimitCents: …`) as its label, and amounts a
 * service wrote in cents (`5000 cents`) in dollars.
 */
export const ownerMessage = (message: string): string => {
  const m = /^([A-Za-z.]+):\s*(.*)$/s.exec(message)
  const key = m?.[1]?.split(".").pop()
  const text = m && key && FIELD_LABELS[key] ? `${FIELD_LABELS[key]}: ${m[2]}` : message
  return text
    .replace(/\b(\d+) to (\d+) cents\b/g, (_, a: string, b: string) => `${usd(Number(a))} to ${usd(Number(b))}`)
    .replace(/\b(\d+) cents\b/g, (_, c: string) => usd(Number(c)))
}

/** "account:<id>" / "key:<id>" as the owner reads it. */
export const deciderText = (decidedBy: string | null, accountId: string): string =>
  decidedBy === null
    ? "—"
    : decidedBy === `account:${accountId}`
      ? "you (the account owner)"
      : decidedBy.startsWith("key:")
        ? `the agent's key ${decidedBy.slice(4)}`
        : decidedBy
