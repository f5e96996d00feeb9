// Owner approvals: the account owner approves (the purchase executes at the quoted price, or is
// void when what was quoted changed) or declines a purchase that waited; the account's list. A keyed
// decision commits its write receipt with it, so a retry whose answer was lost gets the decision
// made, not a 409 "already decided".
import { Clock, type Context, Effect } from "effect"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import type { Approval, ApprovalRecord, ApprovalStatus } from "../../schema/commerce/approvals.js"
import type { Transaction } from "../../schema/commerce/transactions.js"
import { Conflict, Forbidden, InvalidInput, NotFound } from "../../schema/platform/errors.js"
import { Audit } from "../audit/Audit.js"
import type { Caller } from "../keys/Caller.js"
import type { Transactor } from "../platform/Db.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import { traced } from "../platform/Tracing.js"
import { PurchaseStore } from "./PurchaseStore.js"
import type { NegotiatedPricesService } from "./NegotiatedPrices.js"
import { ApprovalVoid, type makePurchase } from "./Purchase.js"
import { effectiveApprovalStatus, toApproval, toTransaction } from "./views.js"

const approvalNotFound = (id: string) => new NotFound({ message: `approval ${id} not found`, resource: "approval", id })

/** An owner's decision: the approval as decided, and the transaction an approval executed. */
export interface ApprovalDecision {
  readonly approval: Approval
  readonly transaction: Transaction | null
}

export const makeApprovals = Effect.fnUntraced(function* (deps: {
  readonly execute: Effect.Success<typeof makePurchase>["execute"]
  readonly negotiated: NegotiatedPricesService
  readonly atomically: Context.Service.Shape<typeof Transactor>["atomically"]
}) {
  const store = yield* PurchaseStore
  const audit = yield* Audit
  const receipts = yield* WriteReceipts
  const { execute, negotiated, atomically } = deps

  /** The approver: the account owner's dashboard session only (docs/commerce.md). */
  const decideNow = Effect.fnUntraced(function* (caller: Caller, id: string, decision: "approve" | "decline") {
    const a = yield* store.lockApproval(id)
    if (!a || a.accountId !== caller.accountId) return yield* Effect.fail(approvalNotFound(id))
    // Only the account owner decides. No agent key may, not even another agent of the account:
    // an operator holding two keys could otherwise approve its own spending, and manual mode
    // would mean nothing.
    if (caller.via !== "session") {
      return yield* Effect.fail(
        new Forbidden({
          message:
            "approvals are decided by the account owner in the dashboard " +
            "(POST /api/dashboard/commerce/approvals/:id/approve | decline), not with an agent key"
        })
      )
    }
    const now = yield* Clock.currentTimeMillis
    const status = effectiveApprovalStatus(a, now)
    if (status !== "pending") {
      return yield* Effect.fail(new Conflict({ message: `approval ${id} is ${status}`, state: status }))
    }
    const decidedBy = `account:${caller.accountId}`
    const decided = { ...a, decidedBy, decidedAt: new Date(now).toISOString() }
    if (decision === "decline") {
      const negotiationId = a.negotiationId
      if (negotiationId) yield* negotiated.release(negotiationId, a.reservedTransactionId)
      const next: ApprovalRecord = { ...decided, status: "declined" }
      yield* store.updateApproval(next)
      yield* audit.approvalDecided(a, next)
      return { approval: toApproval(next, now), transaction: null, voided: null }
    }
    // Executes now at the quoted price, the policy limits checked again; or, when what the owner
    // saw has changed, is void and charges nothing.
    const result = yield* execute({
      agentId: a.agentId,
      accountId: a.accountId,
      serviceId: a.serviceId,
      tierId: a.tierId,
      input: a.input,
      idempotencyKey: a.idempotencyKey,
      approval: a
    }).pipe(Effect.catchTag("ApprovalVoid", (e) => Effect.succeed(e)))
    if (result instanceof ApprovalVoid) {
      const negotiationId = a.negotiationId
      if (negotiationId) yield* negotiated.release(negotiationId, a.reservedTransactionId)
      const next: ApprovalRecord = { ...decided, status: "void" }
      yield* store.updateApproval(next)
      yield* audit.approvalDecided(a, next)
      return { approval: toApproval(next, now), transaction: null, voided: result.changed }
    }
    const next: ApprovalRecord = { ...decided, status: "approved", transactionId: result.transaction?.id ?? null }
    yield* store.updateApproval(next)
    yield* audit.approvalDecided(a, next)
    return { approval: toApproval(next, now), transaction: result.transaction, voided: null }
  }, atomically)

  /** A decision that committed, read back for a retry of it: the approval and its transaction as they stand now. */
  const decidedNow = Effect.fnUntraced(function* (caller: Caller, id: string) {
    const a = yield* atomically(store.lockApproval(id))
    if (!a || a.accountId !== caller.accountId)
      return yield* Effect.die(new Error(`approval ${id} of a receipt is gone`))
    const now = yield* Clock.currentTimeMillis
    const row = a.transactionId ? yield* store.getTransaction(a.transactionId) : undefined
    const approval = toApproval(a, now)
    if (a.status === "void") return { approval, transaction: null, voided: "what was quoted changed" }
    return { approval, transaction: row ? toTransaction(row, a.agentId) : null, voided: null }
  })

  /**
   * The receipt goes inside the decision's own unit of work, not around the caller's: a refused
   * approval rolls back with its receipt (the key stays free for the retry after a top-up), while
   * the refusal's record, written after the rollback in a unit of work of its own, is kept.
   */
  const decide = (caller: Caller, id: string, decision: "approve" | "decline", keyed: KeyedRequest | undefined) =>
    receipts
      .once({
        keyed,
        kind: `approval.${decision}`,
        request: { account: caller.accountId, id },
        write: decideNow(caller, id, decision),
        idOf: (r) => r.approval.id,
        replay: (approvalId) => decidedNow(caller, approvalId)
      })
      .pipe(traced("Commerce.decide", { attributes: { decision } }))

  /** Approve: the void outcome is committed (the approval is spent), then answered as 409. */
  const approve = (caller: Caller, id: string, keyed?: KeyedRequest) =>
    Effect.flatMap(decide(caller, id, "approve", keyed), (r) =>
      r.voided === null
        ? Effect.succeed<ApprovalDecision>({ approval: r.approval, transaction: r.transaction })
        : Effect.fail(
            new Conflict({
              message:
                `approval ${id} is void: ${r.voided} since it was requested; nothing was charged, ` +
                "the agent must ask again",
              state: "void"
            })
          )
    )

  const decline = (caller: Caller, id: string, keyed?: KeyedRequest) =>
    Effect.map(decide(caller, id, "decline", keyed), (r): ApprovalDecision => ({
      approval: r.approval,
      transaction: r.transaction
    }))

  /**
   * The account's approvals, newest first, a keyset page (default and most: 100). "pending" and
   * "expired" are effective states: pending rows are read, then classified by expiry, so a page
   * may hold fewer than `limit` while `nextCursor` (the last row read) still leads on.
   */
  const listApprovals = Effect.fnUntraced(function* (
    caller: Caller,
    status: ApprovalStatus | undefined,
    options: { readonly limit?: number; readonly cursor?: string } = {}
  ) {
    const limit = options.limit ?? 100
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
    }
    const now = yield* Clock.currentTimeMillis
    const stored = status === "expired" ? "pending" : status
    const rows = yield* store.listApprovals(caller.accountId, stored, limit + 1, before)
    const read = rows.slice(0, limit)
    const last = read[read.length - 1]
    return {
      data: read.map((a) => toApproval(a, now)).filter((a) => status === undefined || a.status === status),
      nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null
    }
  })

  return { approve, decline, listApprovals } as const
})
