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
