// CSV for the owner's exports (RFC 4180): fields with a comma, a quote or a line break are quoted,
// quotes doubled, rows end in CRLF. Text that a spreadsheet would read as a formula (a leading =, +,
// -, @, tab or carriage return: a hostile service name such as `=HYPERLINK(…)`) is prefixed with an
// apostrophe, the usual neutralisation; numbers this code writes itself are left as numbers.
import type { AuditEntry } from "../../schema/audit/audit.js"
import type { Transaction } from "../../schema/commerce/transactions.js"

const FORMULA_START = /^[=+\-@\t\r]/u
const NEEDS_QUOTES = /[",\r\n]/u

const quoted = (v: string) => (NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v)

/** A text field: neutralised against formulas, then quoted as needed; null → empty. */
export const textCell = (v: string | null | undefined): string =>
  v === null || v === undefined ? "" : quoted(FORMULA_START.test(v) ? `'${v}` : v)

/** Whole cents as dollars with two decimals ("12.34", "-0.05"); null → empty. */
export const dollars = (cents: number | null): string => {
  if (cents === null) return ""
  const abs = Math.abs(cents)
  return `${cents < 0 ? "-" : ""}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`
}

const int = (n: number | null): string => (n === null ? "" : String(n))

/** One CSV row, CRLF-terminated; cells already made by textCell / dollars / int. */
export const row = (cells: ReadonlyArray<string>): string => `${cells.join(",")}\r\n`

export const TRANSACTION_HEADER = row([
  "created_at",
  "transaction_id",
  "role",
  "status",
  "service_id",
  "service_name",
  "tier_id",
  "buyer_agent_id",
  "seller_agent_id",
  "price_cents",
  "price_dollars",
  "seller_cents",
  "seller_dollars",
  "fee_cents",
  "fee_dollars",
  "approval_id",
  "refunded_at"
])

export const transactionRow = (t: Transaction): string =>
  row([
    textCell(t.createdAt),
    textCell(t.id),
    textCell(t.role),
    textCell(t.status),
    textCell(t.serviceId),
    textCell(t.serviceName),
    textCell(t.tierId),
    textCell(t.buyerAgentId),
    textCell(t.sellerAgentId),
    int(t.priceCents),
    dollars(t.priceCents),
    int(t.sellerCents),
    dollars(t.sellerCents),
    int(t.feeCents),
    dollars(t.feeCents),
    textCell(t.approvalId),
    textCell(t.refundedAt)
  ])

export const AUDIT_HEADER = row([
  "created_at",
  "entry_id",
  "action",
  "actor_kind",
  "actor_id",
  "subject_id",
  "amount_cents",
  "amount_dollars",
  "before",
  "after"
])

/** The approval's quoted price, the amount an approval entry is about (null for policy entries). */
const amountOf = (e: AuditEntry): number | null => {
  const v = e.before?.quotedPriceCents
  return typeof v === "number" ? v : null
}

export const auditRow = (e: AuditEntry): string =>
  row([
    textCell(e.createdAt),
    textCell(e.id),
    textCell(e.action),
    textCell(e.actor.kind),
    textCell(e.actor.id),
    textCell(e.subjectId),
    int(amountOf(e)),
    dollars(amountOf(e)),
    textCell(e.before === null ? null : JSON.stringify(e.before)),
    textCell(e.after === null ? null : JSON.stringify(e.after))
  ])
