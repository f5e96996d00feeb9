// Audit: the trail of decisions about an agent's money (approvals decided, policy changes, freezes),
// each recorded by the code that makes the change, inside the same unit of work: the entry and the
// change are kept together or not at all.
import { Clock, Context, Effect, Layer } from "effect"
import {
  type AuditActor,
  type AuditInput,
  type AuditPage,
  type AuditRecord,
  changedFields
} from "../../schema/audit/audit.js"
import type { ApprovalRecord } from "../../schema/commerce/approvals.js"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { InvalidInput, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Ids } from "../platform/Db.js"
import { AuditStore } from "./AuditStore.js"

export interface AuditService {
  /** Appends an entry in the caller's unit of work (call it inside the change's `atomically`). */
  readonly record: (input: AuditInput, at?: string | null) => Effect.Effect<void, StorageUnavailable>
  /**
   * An approval as it was (pending) and as the owner's decision left it: one entry naming the
   * decider (`decidedBy`), the outcome and, when it ran, the transaction.
   */
  readonly approvalDecided: (previous: ApprovalRecord, next: ApprovalRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * A wallet policy replaced by another: one entry with the fields that changed (none: no entry).
   * Setting or lifting `frozen` makes it `agent.frozen` / `agent.unfrozen`.
   */
  readonly policyChanged: (
    agentId: string,
    actor: AuditActor,
    before: Readonly<Record<string, unknown>>,
    after: Readonly<Record<string, unknown>>
  ) => Effect.Effect<void, StorageUnavailable>
  /** The agent's entries, newest first, a keyset page (default and most: 100). */
  readonly list: (
    agentId: string,
    options: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
  ) => Effect.Effect<AuditPage, InvalidInput | StorageUnavailable>
}

/** `account:<id>` (the owner's dashboard session) or `key:<id>`, as approvals store their decider. */
export const actorOf = (decidedBy: string | null): AuditActor => {
  if (decidedBy?.startsWith("key:")) return { kind: "agent_key", id: decidedBy.slice(4) }
  return { kind: "owner", id: decidedBy?.startsWith("account:") ? decidedBy.slice(8) : decidedBy }
}

const make = Effect.gen(function* () {
  const store = yield* AuditStore
  const ids = yield* Ids

  /** `at`: the decision's own time when it has one (an approval's decidedAt), so both read the same. */
  const record = Effect.fnUntraced(function* (input: AuditInput, at?: string | null) {
    const id = yield* ids.make("aud")
    const createdAt = at ?? new Date(yield* Clock.currentTimeMillis).toISOString()
    const row: AuditRecord = { ...input, id, createdAt }
    yield* store.insert(row)
  })

  const approvalDecided = (previous: ApprovalRecord, next: ApprovalRecord) =>
    record(
      {
        agentId: next.agentId,
        action:
          next.status === "declined"
            ? "approval.declined"
            : next.status === "void"
              ? "approval.void"
              : next.status === "withdrawn"
                ? "approval.withdrawn"
                : "approval.approved",
        actor: actorOf(next.decidedBy),
        subjectId: next.id,
        before: {
          status: previous.status,
          serviceId: previous.serviceId,
          tierId: previous.tierId,
          quotedPriceCents: previous.quotedPriceCents
        },
        after: { status: next.status, transactionId: next.transactionId }
      },
      next.decidedAt
    )

  const policyChanged = (
    agentId: string,
    actor: AuditActor,
    before: Readonly<Record<string, unknown>>,
    after: Readonly<Record<string, unknown>>
  ) => {
    const diff = changedFields(before, after)
    if (diff === null) return Effect.void
    const frozen = "frozen" in diff.after ? diff.after.frozen === true : null
    const action = frozen === null ? "policy.changed" : frozen ? "agent.frozen" : "agent.unfrozen"
    return record({ agentId, action, actor, subjectId: null, before: diff.before, after: diff.after })
  }

  const list = Effect.fnUntraced(function* (
    agentId: string,
    options: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
  ) {
    const limit = options.limit ?? 100
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
    }
    const rows = yield* store.page(agentId, { before, limit: limit + 1 })
    const entries = rows.slice(0, limit)
    const last = entries[entries.length - 1]
    const page: AuditPage = {
      entries: entries.map(({ id, agentId, action, actor, subjectId, before, after, createdAt }) => ({
        id,
        agentId,
        action,
        actor,
        subjectId,
        before,
        after,
        createdAt
      })),
      nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null
    }
    return page
  })

  return { record, approvalDecided, policyChanged, list } satisfies AuditService
})

export class Audit extends Context.Service<Audit, AuditService>()("agent-commerce/Audit") {
  /** Only ports stay open: the store and ids. */
  static readonly layer = Layer.effect(Audit, make)
}
