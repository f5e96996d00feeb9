// The audit trail: who decided what about an agent's money, and when. Each entry is one decision
// that took effect (an approval decided, a policy changed, a freeze set or lifted), written in the
// unit of work of the change itself, so a change without its entry (or the reverse) cannot be kept.
import { Schema } from "effect"
import { Cursor, PageLimit, Timestamp } from "../platform/common.js"

/**
 * What happened. `approval.void`: the owner approved, but what was quoted had changed since the
 * agent asked, so nothing was charged. `approval.withdrawn`: the agent took back its own request while
 * it waited (actor: its key). A policy change that also sets or lifts the freeze is
 * recorded as `agent.frozen` / `agent.unfrozen` (its other fields in the same before/after).
 */
export const AuditAction = Schema.Literals([
  "approval.approved",
  "approval.declined",
  "approval.void",
  "approval.withdrawn",
  "policy.changed",
  "agent.frozen",
  "agent.unfrozen"
])
export type AuditAction = typeof AuditAction.Type

/**
 * Who: the account owner (signed in to the dashboard; `id` the account) or one of the agent's own
 * keys (`id` the key; a key may only tighten). `id` is null when the caller did not say which.
 */
export const AuditActor = Schema.Struct({
  kind: Schema.Literals(["owner", "agent_key"]),
  id: Schema.NullOr(Schema.String)
})
export type AuditActor = typeof AuditActor.Type

/** Fields as they were and as they became: only the fields that changed. */
export const AuditFields = Schema.Record(Schema.String, Schema.Unknown)
export type AuditFields = typeof AuditFields.Type

/** What a caller hands to Audit.record; the id and the time are the service's. */
export interface AuditInput {
  readonly agentId: string
  readonly action: AuditAction
  readonly actor: AuditActor
  /** What the decision was about: the approval's id; null for the agent's policy. */
  readonly subjectId: string | null
  readonly before: AuditFields | null
  readonly after: AuditFields | null
}

export interface AuditRecord extends AuditInput {
  readonly id: string
  readonly createdAt: string
}

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  action: AuditAction,
  actor: AuditActor,
  subjectId: Schema.NullOr(Schema.String),
  before: Schema.NullOr(AuditFields),
  after: Schema.NullOr(AuditFields),
  createdAt: Timestamp
})
export type AuditEntry = typeof AuditEntry.Type

export const AuditUrlParams = Schema.Struct({
  /** The previous page's `nextCursor`: the page after it (older entries). */
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit)
})

/** A keyset page of an agent's audit trail, newest first; `nextCursor` is null on the last page. */
export const AuditPage = Schema.Struct({
  entries: Schema.Array(AuditEntry),
  nextCursor: Schema.NullOr(Schema.String)
})
export type AuditPage = typeof AuditPage.Type

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The fields of two flat records that differ, as before/after (null when none differs). Nested
 * values (an allow-list, auto-recharge) count as one field and are compared whole.
 */
export const changedFields = (
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>
): { readonly before: AuditFields; readonly after: AuditFields } | null => {
  const was: Record<string, unknown> = {}
  const now: Record<string, unknown> = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[key], after[key])) continue
    was[key] = before[key] ?? null
    now[key] = after[key] ?? null
  }
  return Object.keys(now).length === 0 ? null : { before: was, after: now }
}
