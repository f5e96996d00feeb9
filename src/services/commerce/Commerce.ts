// Commerce: the buy as the API offers it (the agent's permission, the purchase in its own unit of
// work, the owner's record of a refusal, the wait for a push seller), the owner's approvals with their
// inbox names, the transaction history and post-purchase reviews. The purchase itself is the purchase
// domain's (Purchases): this is one of its doors.
import { Clock, Context, Effect, Layer, Option } from "effect"
import { decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import type { Approval, ApprovalStatus, Purchase } from "../../schema/commerce/approvals.js"
import type { ReviewRecord } from "../../schema/commerce/reviews.js"
import type { Transaction, TransactionStatus } from "../../schema/commerce/transactions.js"
import type { TransactionFilter } from "../../schema/commerce/filters.js"
import { Conflict, Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { IdempotencyKeyReused } from "../../schema/platform/errors.js"
import type { KeyedRequest } from "../idempotency/WriteReceipts.js"
import type { Caller } from "../keys/Caller.js"
import { Catalog } from "./Catalog.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Refusals } from "../refusals/Refusals.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import { type Bought, type PurchaseError, Purchases } from "../purchases/Purchases.js"
import { Orders } from "../purchases/Orders.js"
import { type ApprovalDecision, Approvals, type ApprovalsService } from "../purchases/Approvals.js"
import { type InboxApproval, reasonText } from "../../schema/audit/inbox.js"
import { KeysStore } from "../keys/KeysStore.js"
import { toTransaction } from "../purchases/views.js"

const txNotFound = (id: string) => new NotFound({ message: `transaction ${id} not found`, resource: "transaction", id })

export interface BuyInput {
  readonly caller: Caller
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  /** A price agreed elsewhere (e.g. by a saga) overriding the list price; callers inside the platform only. */
  readonly priceCents?: number
  readonly negotiationId?: string
  /**
   * Dedupe key: a repeated key answers the first outcome without charging again. The HTTP handler
   * passes the request's Idempotency-Key; none: every call is a new purchase.
   */
  readonly idempotencyReference?: string | undefined
}

export interface TransactionQuery {
  readonly role?: "buyer" | "seller"
  readonly serviceId?: string
  readonly status?: TransactionStatus
  readonly from?: string
  readonly to?: string
  readonly cursor?: string
  readonly limit?: number
}

/** What a purchase can answer besides its outcome. */
export type BuyError = Forbidden | PurchaseError

type DecideError = BuyError | Conflict | IdempotencyKeyReused

export interface CommerceService {
  /**
   * POST /buy. One unit of work: policy (403 PolicyViolation), approval (pending), delivery,
   * ledger settlement (402 InsufficientCredits), transaction, events. A repeated idempotency
   * key answers the first outcome without charging again.
   */
  readonly buy: (input: BuyInput) => Effect.Effect<Purchase, BuyError>
  /**
   * `buy`'s unit of work alone (joining the caller's); the caller commits, then calls `afterBuy`, so
   * nothing waits on a seller while a payment's unit of work holds the wallet.
   */
  readonly buyInUnit: (input: BuyInput) => Effect.Effect<Bought, BuyError>
  /** Committed: a pending order announced, a push seller's answer awaited up to ORDER_WAIT_MS. */
  readonly afterBuy: (bought: Bought) => Effect.Effect<Purchase, StorageUnavailable>
  /** The owner approves: the purchase executes at the quoted price (409 when it is void). A keyed decision is made once. */
  readonly approve: (caller: Caller, id: string, keyed?: KeyedRequest) => Effect.Effect<ApprovalDecision, DecideError>
  readonly decline: (caller: Caller, id: string, keyed?: KeyedRequest) => Effect.Effect<ApprovalDecision, DecideError>
  /** The agent that asked takes back its approval while it waits (Approvals.withdraw). */
  readonly withdrawApproval: ApprovalsService["withdraw"]
  /** One agent's own approvals, newest first (Approvals.agentApprovals: A2A's ListTasks). */
  readonly agentApprovals: ApprovalsService["agentApprovals"]
  readonly agentApproval: ApprovalsService["agentApproval"]
  /** The approvals inbox: listApprovals' page with the names an owner reads (the agent, service, tier, seller, why). */
  readonly approvalsInbox: (
    caller: Caller,
    status: ApprovalStatus | undefined,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<
    { readonly data: Array<InboxApproval>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  readonly listApprovals: (
    caller: Caller,
    status: ApprovalStatus | undefined,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<
    { readonly data: Array<Approval>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  readonly getTransaction: (agentId: string, id: string) => Effect.Effect<Transaction, NotFound | StorageUnavailable>
  /**
   * The buyer withdraws its purchase still waiting on its seller (Orders.cancel: refunded in full, not
   * the seller's failure) and reads it back; cancelled before, the same. Ended otherwise, or not an
   * order's money (a paid call, a saga step): Conflict naming its state. The seller: Forbidden.
   */
  readonly cancelPurchase: (
    agentId: string,
    id: string
  ) => Effect.Effect<Transaction, NotFound | Forbidden | Conflict | StorageUnavailable>
  readonly listTransactions: (
    agentId: string,
    q: TransactionQuery
  ) => Effect.Effect<
    { readonly data: Array<Transaction>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  /** One review per transaction, by its buyer, once it was delivered; moves the service rating. */
  readonly review: (
    agentId: string,
    transactionId: string,
    body: { readonly rating: number; readonly text?: string }
  ) => Effect.Effect<ReviewRecord, NotFound | Forbidden | Conflict | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* PurchaseStore
  const catalog = yield* Catalog
  const events = yield* Events
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const refusals = yield* Refusals
  const purchases = yield* Purchases
  const approvals = yield* Approvals
  const orders = yield* Orders
  const keys = yield* KeysStore

  /**
   * The approvals inbox's names: each approval with the agent that asked, the service and tier, the
   * seller, and why it waits, in the owner's words. The agents in one read and each distinct service
   * of the page once, so a page costs a bounded number of reads whatever its length.
   */
  const named = Effect.fnUntraced(function* (approvals: ReadonlyArray<Approval>) {
    const services = new Map(
      yield* Effect.forEach(
        [...new Set(approvals.map((a) => a.serviceId))],
        (id) => Effect.map(Effect.option(catalog.getRecord(id)), (s) => [id, Option.getOrUndefined(s)] as const),
        { concurrency: 4 }
      )
    )
    const sellers = [...services.values()].flatMap((s) => (s ? [s.sellerAgentId] : []))
    const ids = [...new Set([...approvals.map((a) => a.agentId), ...sellers])]
    const agents = new Map((yield* keys.getAgents(ids)).map((a) => [a.id, a] as const))
    return approvals.map((a): InboxApproval => {
      const service = services.get(a.serviceId)
      const sellerAgentId = service?.sellerAgentId ?? null
      return {
        ...a,
        agentName: agents.get(a.agentId)?.name ?? null,
        serviceName: service?.name ?? null,
        tierName: service?.tiers.find((t) => t.id === a.tierId)?.name ?? null,
        sellerAgentId,
        sellerName: sellerAgentId === null ? null : (agents.get(sellerAgentId)?.name ?? null),
        reasonText: reasonText(a.reason)
      }
    })
  })

  const buyInUnit = Effect.fnUntraced(function* (input: BuyInput) {
    const agentId = input.caller.agentId
    if (agentId === undefined || !input.caller.permissions.has("commerce:buy")) {
      return yield* new Forbidden({
        message: "buying needs an agent key with commerce:buy",
        permission: "commerce:buy"
      })
    }
    return yield* atomically(
      purchases.purchase({
        agentId,
        accountId: input.caller.accountId,
        serviceId: input.serviceId,
        tierId: input.tierId,
        input: input.input,
        ...(input.priceCents !== undefined ? { priceCents: input.priceCents } : {}),
        ...(input.negotiationId !== undefined ? { negotiationId: input.negotiationId } : {}),
        idempotencyKey: input.idempotencyReference ?? null
      })
    )
  })

  const buy = (input: BuyInput) =>
    buyInUnit(input).pipe(
      // After the refused unit of work rolled back: the owner's record of what was refused.
      refusals.recordingRefusal({
        agentId: input.caller.agentId ?? "",
        serviceId: input.serviceId,
        serviceName: null,
        tierId: input.tierId,
        priceCents: null,
        path: input.negotiationId === undefined ? "buy" : "negotiation"
      }),
      // Committed: a push seller's order may be answered within the buy's wait.
      Effect.flatMap(purchases.settled),
      traced("Commerce.buy")
    )

  /** An approval the wallet refused stays pending (its unit of work rolled back); the refusal is kept. */
  const approve = (caller: Caller, id: string, keyed?: KeyedRequest) =>
    approvals.approve(caller, id, keyed).pipe(
      refusals.recordingRefusal(() =>
        Effect.map(atomically(store.lockApproval(id)), (a) =>
          a === undefined
            ? undefined
            : {
                agentId: a.agentId,
                serviceId: a.serviceId,
                serviceName: null,
                tierId: a.tierId,
                priceCents: null,
                path: "approval" as const
              }
        )
      )
    )

  // ---- transactions and reviews -----------------------------------------------------------

  const getTransaction = (agentId: string, id: string) =>
    Effect.flatMap(store.getTransaction(id), (row) =>
      row && (row.tx.buyerAgentId === agentId || row.tx.sellerAgentId === agentId)
        ? Effect.succeed(toTransaction(row, agentId))
        : Effect.fail(txNotFound(id))
    )

  const cancelPurchase = Effect.fnUntraced(function* (agentId: string, id: string) {
    const tx = yield* getTransaction(agentId, id)
    if (tx.role !== "buyer") {
      return yield* new Forbidden({ message: "only the buyer may cancel a purchase (its seller fails the order)" })
    }
    const ended = (state: string) =>
      new Conflict({ message: `purchase ${id} has ended (${state}): nothing to cancel`, state })
    yield* orders.cancel(agentId, id).pipe(
      Effect.catchTags({
        // Ended otherwise: its outcome stands. (Cancelled before by this buyer, Orders.cancel answers
        // the cancelled order again: the same answer, no second refund.)
        OrderClosed: (e) => Effect.fail(ended(e.status)),
        NotFound: () =>
          Effect.fail(
            tx.status === "pending"
              ? new Conflict({
                  message: `purchase ${id} cannot be cancelled: its money is not an order's to give back (a paid call or a saga's step)`,
                  state: tx.status
                })
              : ended(tx.status)
          )
      })
    )
    return yield* getTransaction(agentId, id)
  }, traced("Commerce.cancelPurchase"))

  const listTransactions = Effect.fnUntraced(function* (agentId: string, q: TransactionQuery) {
    const limit = q.limit ?? 20
    let before: TransactionFilter["before"]
    if (q.cursor !== undefined) {
      const c = decodeCursor(q.cursor) as { c?: unknown; i?: unknown } | undefined
      if (!c || typeof c.c !== "string" || typeof c.i !== "string") {
        return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
      }
      before = { createdAt: c.c, id: c.i }
    }
    for (const [field, value] of [
      ["from", q.from],
      ["to", q.to]
    ] as const) {
      if (value !== undefined && !Number.isFinite(Date.parse(value))) {
        return yield* Effect.fail(new InvalidInput({ message: `${field} must be an ISO 8601 time`, field }))
      }
    }
    const iso = (v: string | undefined) => (v === undefined ? undefined : new Date(Date.parse(v)).toISOString())
    const rows = yield* store.listTransactions({
      agentId,
      role: q.role,
      serviceId: q.serviceId,
      status: q.status,
      from: iso(q.from),
      to: iso(q.to),
      before,
      limit: limit + 1
    })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map((r) => toTransaction(r, agentId)),
      nextCursor: rows.length > limit && last ? encodeCursor({ c: last.tx.createdAt, i: last.tx.id }) : null
    }
  }, traced("Commerce.listTransactions"))

  const review = Effect.fnUntraced(
    function* (agentId: string, transactionId: string, body: { readonly rating: number; readonly text?: string }) {
      const tx = yield* store.lockTransaction(transactionId)
      if (!tx || (tx.buyerAgentId !== agentId && tx.sellerAgentId !== agentId)) {
        return yield* Effect.fail(txNotFound(transactionId))
      }
      if (tx.buyerAgentId !== agentId) {
        return yield* Effect.fail(new Forbidden({ message: "only the buyer may review a transaction" }))
      }
      // A review rates a delivery that stands: none came of a failed one, none has come yet of a
      // pending one, and a refunded one was taken back (its buyer paid nothing for it).
      if (tx.status !== "completed") {
        const message =
          tx.status === "failed"
            ? "nothing was delivered: a failed transaction cannot be reviewed"
            : tx.status === "pending"
              ? "nothing delivered yet: a pending transaction can be reviewed once its seller delivers"
              : "the purchase was refunded: a refunded transaction cannot be reviewed"
        return yield* Effect.fail(new Conflict({ message, state: tx.status }))
      }
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
      const data = { reviewId: record.id, transactionId, serviceId: tx.serviceId, rating: body.rating }
      yield* events.emit(tx.sellerAgentId, "review.created", data)
      return { ...record }
    },
    atomically,
    traced("Commerce.review")
  )

  return {
    buy,
    buyInUnit,
    afterBuy: purchases.settled,
    approve,
    decline: approvals.decline,
    withdrawApproval: approvals.withdraw,
    agentApprovals: approvals.agentApprovals,
    agentApproval: approvals.agentApproval,
    listApprovals: approvals.listApprovals,
    approvalsInbox: (caller, status, options) =>
      Effect.flatMap(approvals.listApprovals(caller, status, options), (page) =>
        Effect.map(named(page.data), (data) => ({ data, nextCursor: page.nextCursor }))
      ),
    getTransaction,
    cancelPurchase,
    listTransactions,
    review
  } satisfies CommerceService
})

export class Commerce extends Context.Service<Commerce, CommerceService>()("agent-commerce/Commerce") {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Commerce, make).pipe(
    Layer.provide([Catalog.layer, Events.layer, Refusals.layer, Purchases.layer, Approvals.layer, Orders.layer])
  )
}
