// Commerce: the instant purchase (policy → approval → delivery → 85/15 settlement, in one unit of
// work), owner approvals, the transaction history and post-purchase reviews.
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { cents, decodeCursor, decodeTimeCursor, encodeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { Approval, type ApprovalRecord, type ApprovalStatus, type Purchase } from "../../schema/commerce/approvals.js"
import { type ReviewRecord } from "../../schema/commerce/reviews.js"
import { type ServiceRecord } from "../../schema/commerce/services.js"
import { Transaction, type TransactionRow, type TransactionStatus } from "../../schema/commerce/transactions.js"
import { type TransactionFilter } from "../../schema/commerce/filters.js"
import { Conflict, Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { walletAccount } from "../../schema/ledger/ledger.js"
import type { NegotiationUnusable } from "../../schema/negotiation/negotiation.js"
import type { Caller } from "../keys/Caller.js"
import { Catalog, simulateDelivery, tierOf } from "./Catalog.js"
import { traced } from "../platform/Tracing.js"
import { atomically, Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { currentIdempotencyKey } from "../idempotency/Idempotency.js"
import { Ledger } from "../ledger/Ledger.js"
import { Negotiations } from "../negotiation/Negotiation.js"
import { KeysStore } from "../keys/Keys.js"
import { deliveryModes } from "./Offers.js"
import { Wallet } from "../wallet/Wallet.js"

// The store port lives with its one writer (Settlement); re-exported for the stores and readers.
export { CommerceStore } from "./Settlement.js"
import { CommerceStore, noReferences, Settlement } from "./Settlement.js"

/** Negotiated prices (issue 6): redeem an accepted negotiation once, give it back on compensation. */
export class NegotiatedPrices extends Context.Service<
  NegotiatedPrices,
  {
    readonly redeem: (input: { readonly agentId: string; readonly negotiationId: string; readonly serviceId: string; readonly tierId: string; readonly usedBy: string }) => Effect.Effect<{ readonly priceCents: number }, NotFound | NegotiationUnusable | StorageUnavailable>
    readonly release: (negotiationId: string, usedBy: string) => Effect.Effect<boolean, StorageUnavailable>
  }
>()("NegotiatedPrices") {}

export const NegotiatedPricesLive = Layer.effect(
  NegotiatedPrices,
  Effect.gen(function* () {
    const n = yield* Negotiations
    const transactor = yield* Transactor
    return {
      redeem: (input) => n.redeem(input).pipe(Effect.provideService(Transactor, transactor)),
      release: (negotiationId, usedBy) => n.release(negotiationId, usedBy).pipe(Effect.provideService(Transactor, transactor))
    }
  })
)

/** How long an approval waits for the owner before it expires. */
export const APPROVAL_TTL_MS = 7 * 86_400_000

/** Built from stored rows without re-validation (a hot path; the rows were validated on the way in). */
export const toTransaction = (row: TransactionRow, viewer: string): Transaction =>
  Transaction.make({
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
    delivery: row.delivery
      ? { success: row.delivery.success, latencyMs: row.delivery.latencyMs, output: row.delivery.output, error: row.delivery.error, deliveredAt: row.delivery.deliveredAt }
      : null,
    review: row.review ? { ...row.review } : null,
    disputeId: row.disputeId,
    createdAt: row.tx.createdAt,
    refundedAt: row.tx.refundedAt
  }, { disableChecks: true })

const effectiveApprovalStatus = (a: ApprovalRecord, now: number): ApprovalStatus =>
  a.status === "pending" && Date.parse(a.expiresAt) <= now ? "expired" : a.status

export const toApproval = (a: ApprovalRecord, now: number): Approval =>
  Approval.make({
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
  }, { disableChecks: true })

/** What changed since an approval was requested (it binds the price, tier and service it quoted), or null. */
export const approvalChanged = (a: ApprovalRecord, service: ServiceRecord | undefined): string | null => {
  if (service === undefined || service.status !== "active") return `service ${a.serviceId} is no longer listed`
  const tier = service.tiers.find((t) => t.id === a.tierId)
  if (tier === undefined) return `tier ${a.tierId} of ${a.serviceId} no longer exists`
  // A negotiated price was redeemed for this approval: it stays what was quoted.
  if (a.negotiationId === null && tier.priceCents !== a.quotedPriceCents) return `the price of ${a.serviceId}/${a.tierId} changed from ${a.quotedPriceCents} to ${tier.priceCents} cents`
  return null
}

/** Internal: executing an approval whose quote no longer holds (never leaves this module). */
class ApprovalVoid extends Data.TaggedError("ApprovalVoid")<{ readonly changed: string }> {}

const txNotFound = (id: string) => new NotFound({ message: `transaction ${id} not found`, resource: "transaction", id })
const approvalNotFound = (id: string) => new NotFound({ message: `approval ${id} not found`, resource: "approval", id })

export interface BuyInput {
  readonly caller: Caller
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  /** A price agreed elsewhere (e.g. by a saga) overriding the list price; callers inside the platform only. */
  readonly priceCents?: number
  readonly negotiationId?: string
  /** Dedupe key; defaults to the request's Idempotency-Key. */
  readonly idempotencyReference?: string
}

interface Execute {
  readonly agentId: string
  readonly accountId: string
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  readonly priceCents?: number
  readonly negotiationId?: string
  readonly idempotencyKey: string | null
  /** Set when an owner approved it: no second approval, the policy limits still apply. */
  readonly approval?: ApprovalRecord
}

export class Commerce extends Context.Service<Commerce>()("Commerce", {
  make: Effect.gen(function* () {
    const store = yield* CommerceStore
    const catalog = yield* Catalog
    const wallet = yield* Wallet
    const ledger = yield* Ledger
    const events = yield* Events
    const ids = yield* Ids
    const negotiated = yield* Effect.serviceOption(NegotiatedPrices)
    const settlement = yield* Settlement
    const modeOf = deliveryModes(yield* KeysStore)

    const withNegotiations = <A, E>(f: (n: Context.Service.Shape<typeof NegotiatedPrices>) => Effect.Effect<A, E>) =>
      Option.match(negotiated, {
        onNone: () => Effect.fail(new InvalidInput({ message: "negotiated prices are not available on this server", field: "negotiationId" })),
        onSome: f
      })

    const replay = Effect.fnUntraced(function* (agentId: string, key: string | null) {
      if (key === null) return undefined
      const now = yield* Clock.currentTimeMillis
      const tx = yield* store.findByIdempotencyKey(agentId, key)
      if (tx) return { status: tx.tx.status === "failed" ? "failed" : "completed", transaction: toTransaction(tx, agentId), approval: null } as Purchase
      const approval = yield* store.findApprovalByKey(agentId, key)
      if (approval) return { status: "pending_approval", transaction: null, approval: toApproval(approval, now) } as Purchase
      return undefined
    })

    /** One purchase inside the caller's unit of work (the wallet row is locked first). */
    const execute = Effect.fnUntraced(function* (x: Execute) {
      // The wallet and its balance locked and the service read, at once (one statement on Postgres).
      const opened = yield* settlement.open(x.agentId, x.serviceId)
      if (x.approval) {
        const changed = approvalChanged(x.approval, opened.service)
        if (changed !== null) return yield* Effect.fail(new ApprovalVoid({ changed }))
      }
      const { service, tier } = yield* tierOf(opened.service, x.serviceId, x.tierId)
      if (service.status !== "active") return yield* Effect.fail(new NotFound({ message: `service ${service.id} is not listed`, resource: "service", id: service.id }))
      if (service.sellerAgentId === x.agentId) return yield* Effect.fail(new InvalidInput({ message: "an agent cannot buy its own service", field: "serviceId" }))
      const { balanceCents } = opened
      const policy = opened.wallet.policy
      if (!x.approval) {
        const earlier = yield* replay(x.agentId, x.idempotencyKey)
        if (earlier) return earlier
      }
      const now = yield* Clock.currentTimeMillis
      const at = new Date(now).toISOString()
      // An approved purchase gets the transaction id reserved when it was requested.
      const txId = x.approval?.reservedTransactionId ?? (yield* ids.make("tx"))
      // The price: a negotiation redeemed at request time, an override, or the current list price.
      let priceCents = x.priceCents ?? tier.priceCents
      // An approval charges what the owner saw (approvalChanged has checked it still is the price).
      if (x.approval) priceCents = x.approval.quotedPriceCents
      else if (x.negotiationId) {
        const negotiationId = x.negotiationId
        priceCents = (yield* withNegotiations((n) => n.redeem({ agentId: x.agentId, negotiationId, serviceId: service.id, tierId: tier.id, usedBy: txId }))).priceCents
      }
      if (!Number.isSafeInteger(priceCents) || priceCents < 0) return yield* Effect.fail(new InvalidInput({ message: "price must be a non-negative integer of cents", field: "priceCents" }))
      const needsApproval = yield* wallet.authorize(x.agentId, policy, { priceCents, category: service.category, sellerAgentId: service.sellerAgentId }, { approved: x.approval !== undefined })
      if (needsApproval !== null) {
        const approval: ApprovalRecord = {
          id: yield* ids.make("apr"),
          accountId: x.accountId,
          agentId: x.agentId,
          serviceId: service.id,
          tierId: tier.id,
          quotedPriceCents: priceCents,
          negotiationId: x.negotiationId ?? null,
          input: x.input,
          reason: needsApproval,
          status: "pending",
          idempotencyKey: x.idempotencyKey,
          reservedTransactionId: txId,
          transactionId: null,
          decidedBy: null,
          createdAt: at,
          decidedAt: null,
          expiresAt: new Date(now + APPROVAL_TTL_MS).toISOString()
        }
        yield* store.insertApproval(approval)
        yield* events.emit(x.agentId, "approval.requested", {
          approvalId: approval.id,
          serviceId: service.id,
          tierId: tier.id,
          priceCents,
          reason: needsApproval,
          expiresAt: approval.expiresAt
        })
        return { status: "pending_approval", transaction: null, approval: toApproval(approval, now) } as Purchase
      }
      const delivered = simulateDelivery(service, tier, x.input, txId, yield* modeOf(x.input, service.sellerAgentId))
      const negotiationId = x.negotiationId ?? x.approval?.negotiationId ?? null
      const purchase = {
        transactionId: txId,
        source: "buy" as const,
        buyerAgentId: x.agentId,
        offer: {
          serviceId: service.id,
          serviceName: service.name,
          category: service.category,
          pricingModel: service.pricingModel,
          sellerAgentId: service.sellerAgentId,
          tierId: tier.id,
          listPriceCents: tier.priceCents
        },
        priceCents,
        // The simulated latency is recorded, not waited: the delivery is in hand when the purchase answers.
        delivery: { latencyMs: delivered.latencyMs, output: delivered.output },
        references: { ...noReferences, negotiationId, approvalId: x.approval?.id ?? null, idempotencyKey: x.idempotencyKey },
        at
      }
      if (!delivered.success) {
        // Nothing delivered, nothing charged; a redeemed negotiation is given back.
        if (negotiationId) yield* withNegotiations((n) => n.release(negotiationId, txId))
        const failed = yield* settlement.recordFailed(purchase, delivered.error ?? "the seller did not deliver")
        const row = { tx: failed.tx, delivery: failed.delivery, review: undefined, disputeId: null }
        return { status: "failed", transaction: toTransaction(row, x.agentId), approval: null } as Purchase
      }
      const { tx, delivery } = yield* settlement
        .settle({ ...purchase, from: { _tag: "wallet", lockedBalanceCents: balanceCents }, memo: `${service.id}/${tier.id}` })
        .pipe(Effect.catchTag("InsufficientFunds", (e) => Effect.fail(wallet.insufficientCredits(e))))
      const buyer = walletAccount(x.agentId)
      if (policy.autoRecharge.thresholdCents > 0) {
        const after = yield* ledger.balance(buyer)
        yield* wallet.afterDebit(x.agentId, policy, after + priceCents, after)
      }
      return { status: "completed", transaction: toTransaction({ tx, delivery, review: undefined, disputeId: null }, x.agentId), approval: null } as Purchase
    })

    /**
     * POST /buy. One unit of work: policy (403 PolicyViolation), approval (pending), delivery,
     * ledger settlement (402 InsufficientCredits), transaction, events. A repeated idempotency
     * key answers the first outcome without charging again.
     */
    const buy = Effect.fnUntraced(function* (input: BuyInput) {
      const agentId = input.caller.agentId
      if (agentId === undefined || !input.caller.permissions.has("commerce:buy")) {
        return yield* Effect.fail(new Forbidden({ message: "buying needs an agent key with commerce:buy", permission: "commerce:buy" }))
      }
      const key = input.idempotencyReference ?? (yield* currentIdempotencyKey) ?? null
      return yield* atomically(
        execute({
          agentId,
          accountId: input.caller.accountId,
          serviceId: input.serviceId,
          tierId: input.tierId,
          input: input.input,
          priceCents: input.priceCents,
          negotiationId: input.negotiationId,
          idempotencyKey: key
        }).pipe(Effect.catchTag("ApprovalVoid", (e) => Effect.die(e)))
      )
    }, traced("Commerce.buy"))

    // ---- approvals -------------------------------------------------------------------------

    /** The approver: the account owner's dashboard session only (docs/commerce.md). */
    const decide = Effect.fnUntraced(function* (caller: Caller, id: string, decision: "approve" | "decline") {
        const a = yield* store.lockApproval(id)
        if (!a || a.accountId !== caller.accountId) return yield* Effect.fail(approvalNotFound(id))
        // Only the account owner decides (issue 5: "approval by the account owner"). No agent key
        // may, not even another agent of the account: an operator holding two keys could
        // otherwise approve its own spending, and manual mode would mean nothing.
        if (caller.via !== "session") {
          return yield* Effect.fail(
            new Forbidden({ message: "approvals are decided by the account owner in the dashboard (POST /api/dashboard/commerce/approvals/:id/approve | decline), not with an agent key" })
          )
        }
        const now = yield* Clock.currentTimeMillis
        const status = effectiveApprovalStatus(a, now)
        if (status !== "pending") return yield* Effect.fail(new Conflict({ message: `approval ${id} is ${status}`, state: status }))
        const decidedBy = `account:${caller.accountId}`
        const decided = { ...a, decidedBy, decidedAt: new Date(now).toISOString() }
        if (decision === "decline") {
          const negotiationId = a.negotiationId
          if (negotiationId) yield* withNegotiations((n) => n.release(negotiationId, a.reservedTransactionId))
          const next: ApprovalRecord = { ...decided, status: "declined" }
          yield* store.updateApproval(next)
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
          if (negotiationId) yield* withNegotiations((n) => n.release(negotiationId, a.reservedTransactionId))
          const next: ApprovalRecord = { ...decided, status: "void" }
          yield* store.updateApproval(next)
          return { approval: toApproval(next, now), transaction: null, voided: result.changed }
        }
        const next: ApprovalRecord = { ...decided, status: "approved", transactionId: result.transaction?.id ?? null }
        yield* store.updateApproval(next)
        return { approval: toApproval(next, now), transaction: result.transaction, voided: null }
      }, atomically, (effect, _caller, _id, decision) => traced("Commerce.decide", { attributes: { decision } })(effect))

    /** Approve: the void outcome is committed (the approval is spent), then answered as 409. */
    const approve = (caller: Caller, id: string) =>
      Effect.flatMap(decide(caller, id, "approve"), (r) =>
        r.voided === null
          ? Effect.succeed({ approval: r.approval, transaction: r.transaction })
          : Effect.fail(new Conflict({ message: `approval ${id} is void: ${r.voided} since it was requested; nothing was charged, the agent must ask again`, state: "void" }))
      )

    /**
     * The account's approvals, newest first, a keyset page (default and most: 100). "pending" and
     * "expired" are effective states: pending rows are read, then classified by expiry, so a page
     * may hold fewer than `limit` while `nextCursor` (the last row read) still leads on.
     */
    const listApprovals = Effect.fnUntraced(function* (caller: Caller, status: ApprovalStatus | undefined, options: { readonly limit?: number; readonly cursor?: string } = {}) {
      const limit = options.limit ?? 100
      const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
      if (options.cursor !== undefined && before === undefined) return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
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

    // ---- transactions and reviews -----------------------------------------------------------

    const getTransaction = (agentId: string, id: string) =>
      Effect.flatMap(store.getTransaction(id), (row) =>
        row && (row.tx.buyerAgentId === agentId || row.tx.sellerAgentId === agentId) ? Effect.succeed(toTransaction(row, agentId)) : Effect.fail(txNotFound(id))
      )

    const listTransactions = Effect.fnUntraced(function* (agentId: string, q: { readonly role?: "buyer" | "seller"; readonly serviceId?: string; readonly status?: TransactionStatus; readonly from?: string; readonly to?: string; readonly cursor?: string; readonly limit?: number }) {
      const limit = q.limit ?? 20
      let before: TransactionFilter["before"]
      if (q.cursor !== undefined) {
        const c = decodeCursor(q.cursor) as { c?: unknown; i?: unknown } | undefined
        if (!c || typeof c.c !== "string" || typeof c.i !== "string") return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
        before = { createdAt: c.c, id: c.i }
      }
      for (const [field, value] of [["from", q.from], ["to", q.to]] as const) {
        if (value !== undefined && !Number.isFinite(Date.parse(value))) return yield* Effect.fail(new InvalidInput({ message: `${field} must be an ISO 8601 time`, field }))
      }
      const iso = (v: string | undefined) => (v === undefined ? undefined : new Date(Date.parse(v)).toISOString())
      const rows = yield* store.listTransactions({ agentId, role: q.role, serviceId: q.serviceId, status: q.status, from: iso(q.from), to: iso(q.to), before, limit: limit + 1 })
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return { data: page.map((r) => toTransaction(r, agentId)), nextCursor: rows.length > limit && last ? encodeCursor({ c: last.tx.createdAt, i: last.tx.id }) : null }
    }, traced("Commerce.listTransactions"))

    /** One review per transaction, by its buyer, once it was delivered; moves the service rating. */
    const review = Effect.fnUntraced(function* (agentId: string, transactionId: string, body: { readonly rating: number; readonly text?: string }) {
        const tx = yield* store.lockTransaction(transactionId)
        if (!tx || (tx.buyerAgentId !== agentId && tx.sellerAgentId !== agentId)) return yield* Effect.fail(txNotFound(transactionId))
        if (tx.buyerAgentId !== agentId) return yield* Effect.fail(new Forbidden({ message: "only the buyer may review a transaction" }))
        if (tx.status === "failed") return yield* Effect.fail(new Conflict({ message: "nothing was delivered: a failed transaction cannot be reviewed", state: tx.status }))
        const record: ReviewRecord = {
          id: yield* ids.make("rev"),
          transactionId,
          serviceId: tx.serviceId,
          reviewerAgentId: agentId,
          sellerAgentId: tx.sellerAgentId,
          rating: body.rating,
          text: body.text ?? null,
          createdAt: new Date(yield* Clock.currentTimeMillis).toISOString()
        }
        yield* store.insertReview(record)
        yield* catalog.addRating(tx.serviceId, body.rating)
        yield* events.emit(tx.sellerAgentId, "review.created", { reviewId: record.id, transactionId, serviceId: tx.serviceId, rating: body.rating })
        return { ...record }
      }, atomically, traced("Commerce.review"))

    return {
      buy,
      approve,
      decline: (caller: Caller, id: string) => Effect.map(decide(caller, id, "decline"), (r) => ({ approval: r.approval, transaction: r.transaction })),
      listApprovals,
      getTransaction,
      listTransactions,
      review
    } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Commerce, Commerce.make).pipe(Layer.provide([Catalog.layer, Events.layer, Ledger.layer, Wallet.layer, Settlement.layer]))
}
