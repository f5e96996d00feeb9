// Approvals: the owner's decisions on the purchases that waited for them. The account owner (a
// dashboard session, never an agent key) approves — the purchase executes at the quoted price through
// the same purchase (Purchases.executeApproved), or is void when what was quoted changed — or
// declines; a redeemed negotiation is given back whenever nothing was bought. A keyed decision commits
// its write receipt with it, so a retry whose answer was lost gets the decision made, not a 409
// "already decided". The account's list of approvals.
import { Clock, Context, Effect, Layer } from "effect"
import type { Approval, ApprovalRecord, ApprovalStatus } from "../../schema/commerce/approvals.js"
import type { Transaction } from "../../schema/commerce/transactions.js"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import {
  Conflict,
  Forbidden,
  type IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  type StorageUnavailable
} from "../../schema/platform/errors.js"
import { Audit } from "../audit/Audit.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import type { Caller } from "../keys/Caller.js"
import { Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import { NegotiatedPrices } from "./NegotiatedPrices.js"
import { Orders } from "./Orders.js"
import { type Bought, type PurchaseError, Purchases } from "./Purchases.js"
import { PurchaseStore } from "./PurchaseStore.js"
import { effectiveApprovalStatus, toApproval, toTransaction } from "./views.js"

/** An owner's decision: the approval as decided, and the transaction an approval executed. */
export interface ApprovalDecision {
  readonly approval: Approval
  readonly transaction: Transaction | null
}

type DecideError = PurchaseError | Forbidden | Conflict | IdempotencyKeyReused

/** A decision as made (or read back for a retry of it): `voided` says what changed, `placed` what an approval bought. */
interface Decided {
  readonly approval: Approval
  readonly transaction: Transaction | null
  readonly voided: string | null
  readonly placed?: Bought
}

export interface ApprovalsService {
  /** The owner approves: the purchase executes at the quoted price (409 when it is void). A keyed decision is made once. */
  readonly approve: (caller: Caller, id: string, keyed?: KeyedRequest) => Effect.Effect<ApprovalDecision, DecideError>
  readonly decline: (caller: Caller, id: string, keyed?: KeyedRequest) => Effect.Effect<ApprovalDecision, DecideError>
  /**
   * The agent that asked takes its request back while it waits (A2A CancelTask): `withdrawn`, nothing
   * charged, a redeemed negotiation given back; withdrawing it again is the same approval. Another
   * agent's, or none: NotFound; decided or expired: Conflict naming its status.
   */
  readonly withdraw: (
    caller: Caller,
    id: string
  ) => Effect.Effect<Approval, NotFound | Conflict | Forbidden | StorageUnavailable>
  /**
   * The account's approvals, newest first, a keyset page (default and most: 100). "pending" and
   * "expired" are effective states: pending rows are read, then classified by expiry, so a page
   * may hold fewer than `limit` while `nextCursor` (the last row read) still leads on.
   */
  readonly listApprovals: (
    caller: Caller,
    status: ApprovalStatus | undefined,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<
    { readonly data: Array<Approval>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  /**
   * One agent's own approvals (every status, effective: a pending one past its expiry reads
   * expired), newest first, a keyset page (default and most: 100): what A2A's ListTasks lists beside
   * the agent's purchases.
   */
  /** One of the agent's own approvals as it stands (effective status); another's, or none: NotFound. */
  readonly agentApproval: (agentId: string, id: string) => Effect.Effect<Approval, NotFound | StorageUnavailable>
  readonly agentApprovals: (
    agentId: string,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<
    { readonly data: Array<Approval>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
}

const approvalNotFound = (id: string) => new NotFound({ message: `approval ${id} not found`, resource: "approval", id })

const make = Effect.gen(function* () {
  const store = yield* PurchaseStore
  const purchases = yield* Purchases
  const orders = yield* Orders
  const negotiated = yield* NegotiatedPrices
  const audit = yield* Audit
  const receipts = yield* WriteReceipts
  const { atomically } = yield* Transactor

  /** The approver: the account owner's dashboard session only (docs/commerce.md). */
  const decideNow = Effect.fnUntraced(function* (
    caller: Caller,
    id: string,
    decision: "approve" | "decline"
  ): Effect.fn.Return<Decided, DecideError> {
    const a = yield* store.lockApproval(id)
    if (!a || a.accountId !== caller.accountId) return yield* Effect.fail(approvalNotFound(id))
    // Only the account owner decides. No agent key may, not even another agent of the account:
    // an operator holding two keys could otherwise approve its own spending, and manual mode
    // would mean nothing.
    if (caller.via !== "session") {
      return yield* new Forbidden({
        message:
          "approvals are decided by the account owner in the dashboard " +
          "(POST /api/dashboard/commerce/approvals/:id/approve | decline), not with an agent key"
      })
    }
    const now = yield* Clock.currentTimeMillis
    const status = effectiveApprovalStatus(a, now)
    if (status !== "pending") return yield* new Conflict({ message: `approval ${id} is ${status}`, state: status })
    const decidedBy = `account:${caller.accountId}`
    const decided = { ...a, decidedBy, decidedAt: new Date(now).toISOString() }
    const end = Effect.fnUntraced(function* (next: ApprovalRecord) {
      if (next.status !== "approved" && a.negotiationId)
        yield* negotiated.release(a.negotiationId, a.reservedTransactionId)
      yield* store.updateApproval(next)
      yield* audit.approvalDecided(a, next)
    })
    if (decision === "decline") {
      const next: ApprovalRecord = { ...decided, status: "declined" }
      yield* end(next)
      return { approval: toApproval(next, now), transaction: null, voided: null }
    }
    // Executes now at the quoted price, the policy limits checked again; or, when what the owner
    // saw has changed, is void and charges nothing.
    const result = yield* purchases.executeApproved(a)
    if (result._tag === "Void") {
      const next: ApprovalRecord = { ...decided, status: "void" }
      yield* end(next)
      return { approval: toApproval(next, now), transaction: null, voided: result.changed }
    }
    const transaction = "purchase" in result ? result.purchase.transaction : null
    const next: ApprovalRecord = { ...decided, status: "approved", transactionId: transaction?.id ?? null }
    yield* end(next)
    return { approval: toApproval(next, now), transaction, voided: null, placed: result }
  }, atomically)

  /** A decision that committed, read back for a retry of it: the approval and its transaction as they stand now. */
  const decidedNow = Effect.fnUntraced(function* (
    caller: Caller,
    id: string
  ): Effect.fn.Return<Decided, StorageUnavailable> {
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
      .pipe(
        // Committed: an order the approval placed is announced (its seller waits on its list).
        Effect.tap((r) => ("placed" in r && r.placed !== undefined ? settledQuietly(r.placed) : Effect.void)),
        traced("Approvals.decide", { attributes: { decision } })
      )

  /** An approved order announced after its commit; the owner's answer does not wait for a push seller. */
  const settledQuietly = (bought: Bought) => (bought._tag === "Placed" ? orders.announce(bought.order) : Effect.void)

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
   * A keyset page of approvals (default and most: 100): `read(limit + 1, before)` gives the rows
   * newest first; the views are effective at this instant (`keep` filters them), and the next
   * cursor is the last row read, so a filtered page may hold fewer than `limit` while it leads on.
   */
  const approvalsPage = Effect.fnUntraced(function* (
    options: { readonly limit?: number; readonly cursor?: string },
    read: (
      limit: number,
      before: { readonly createdAt: string; readonly id: string } | undefined
    ) => Effect.Effect<ReadonlyArray<ApprovalRecord>, StorageUnavailable>,
    keep: (a: Approval) => boolean = () => true
  ) {
    const limit = options.limit ?? 100
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* new InvalidInput({ message: "cursor is not valid", field: "cursor" })
    }
    const now = yield* Clock.currentTimeMillis
    const rows = yield* read(limit + 1, before)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map((a) => toApproval(a, now)).filter(keep),
      nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null
    }
  })

  const listApprovals = (
    caller: Caller,
    status: ApprovalStatus | undefined,
    options: { readonly limit?: number; readonly cursor?: string } = {}
  ) =>
    approvalsPage(
      options,
      (limit, before) =>
        store.listApprovals(caller.accountId, status === "expired" ? "pending" : status, limit, before),
      (a) => status === undefined || a.status === status
    )

  const agentApproval = Effect.fnUntraced(function* (agentId: string, id: string) {
    // Read under the approval's lock: a decision being written is read once it has committed.
    const a = yield* atomically(store.lockApproval(id))
    if (a === undefined || a.agentId !== agentId) return yield* approvalNotFound(id)
    return toApproval(a, yield* Clock.currentTimeMillis)
  })

  const agentApprovals = (agentId: string, options: { readonly limit?: number; readonly cursor?: string } = {}) =>
    approvalsPage(options, (limit, before) => store.listAgentApprovals(agentId, limit, before))

  const withdraw = Effect.fnUntraced(
    function* (caller: Caller, id: string) {
      const a = yield* store.lockApproval(id)
      if (!a || caller.agentId === undefined || a.agentId !== caller.agentId)
        return yield* Effect.fail(approvalNotFound(id))
      if (caller.via !== "key" || caller.keyId === undefined) {
        return yield* new Forbidden({
          message: "an approval is withdrawn with its agent's own key",
          permission: "commerce:buy"
        })
      }
      const now = yield* Clock.currentTimeMillis
      const status = effectiveApprovalStatus(a, now)
      if (status === "withdrawn") return toApproval(a, now)
      if (status !== "pending") {
        return yield* new Conflict({
          message: `approval ${id} is ${status}: only an approval still waiting on the owner can be withdrawn`,
          state: status
        })
      }
      // The agent's own key decided (as a key's policy change is recorded): the audit names the key.
      const next: ApprovalRecord = {
        ...a,
        status: "withdrawn",
        decidedBy: `key:${caller.keyId}`,
        decidedAt: new Date(now).toISOString()
      }
      if (a.negotiationId) yield* negotiated.release(a.negotiationId, a.reservedTransactionId)
      yield* store.updateApproval(next)
      yield* audit.approvalDecided(a, next)
      return toApproval(next, now)
    },
    atomically,
    traced("Approvals.withdraw")
  )

  return Approvals.of({ approve, decline, withdraw, listApprovals, agentApproval, agentApprovals })
})

export class Approvals extends Context.Service<Approvals, ApprovalsService>()("agent-commerce/Approvals") {
  /** Provides the domain services it uses; only ports (stores, NegotiatedPrices, OrderOwners, config) stay open. */
  static readonly layer = Layer.effect(Approvals, make).pipe(
    Layer.provide([Purchases.layer, Orders.layer, Audit.layer, WriteReceipts.layer])
  )
}
