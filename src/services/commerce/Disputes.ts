// Disputes: a buyer contests a completed purchase within the filing window; the seller accepts
// (refund) or contests (review by a documented rule); a refund reverses the purchase's ledger
// entry exactly. A worker resolves disputes whose deadline passed. Storage port: DisputeStore.ts.
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { cents, decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { Dispute, type DisputeRecord } from "../../schema/commerce/disputes.js"
import { type TransactionRecord } from "../../schema/commerce/transactions.js"
import { Conflict, Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Catalog } from "./Catalog.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import { DisputeStore } from "./DisputeStore.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Settlement } from "../purchases/Settlement.js"
import { RefundListeners } from "./RefundListeners.js"

export interface DisputesService {
  /** The buyer opens a dispute on a completed purchase within FILING_WINDOW_MS of it. */
  readonly open: (
    agentId: string,
    body: { readonly transactionId: string; readonly reason: string }
  ) => Effect.Effect<Dispute, Conflict | Forbidden | NotFound | StorageUnavailable>
  /** One of the agent's disputes (as buyer or seller); anyone else's is NotFound. */
  readonly get: (agentId: string, id: string) => Effect.Effect<Dispute, NotFound | StorageUnavailable>
  /** The agent's disputes, newest first, a keyset page. */
  readonly list: (
    agentId: string,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<{ data: Array<Dispute>; nextCursor: string | null }, InvalidInput | StorageUnavailable>
  /** The seller accepts (refund now) or contests (under_review; decided after REVIEW_MS). */
  readonly respond: (
    agentId: string,
    id: string,
    body: { readonly action: "accept" | "contest"; readonly note?: string }
  ) => Effect.Effect<Dispute, Conflict | Forbidden | InvalidInput | NotFound | StorageUnavailable>
  /** Resolves every due dispute and counts them (the worker runs this; tests after moving the clock). */
  readonly resolveDue: Effect.Effect<number, StorageUnavailable>
}

/** Numbers of the lifecycle (docs/commerce.md, "Disputes"). */
export const FILING_WINDOW_MS = 14 * 86_400_000
export const SELLER_RESPONSE_MS = 72 * 3_600_000
export const REVIEW_MS = 24 * 3_600_000

const notFound = (id: string) => new NotFound({ message: `dispute ${id} not found`, resource: "dispute", id })

export const toDispute = (d: DisputeRecord, viewer: string): Dispute =>
  Dispute.make(
    { ...d, role: d.buyerAgentId === viewer ? "buyer" : "seller", refundCents: cents(d.refundCents) },
    { disableChecks: true }
  )

const make = Effect.gen(function* () {
  const { atomically } = yield* Transactor
  const store = yield* DisputeStore
  const commerce = yield* PurchaseStore
  const catalog = yield* Catalog
  const listeners = yield* RefundListeners
  const settlement = yield* Settlement
  const events = yield* Events
  const ids = yield* Ids
  const iso = (ms: number) => new Date(ms).toISOString()

  const announce = (d: DisputeRecord) =>
    Effect.forEach(
      [d.buyerAgentId, d.sellerAgentId],
      (agentId) =>
        events.emit(agentId, "dispute.updated", {
          disputeId: d.id,
          transactionId: d.transactionId,
          status: d.status,
          refundCents: d.refundCents,
          resolution: d.resolution
        }),
      { discard: true }
    )

  /**
   * Reverses the purchase exactly (buyer +price, seller −share, platform −fee) in the caller's
   * unit of work. Fails with InsufficientFunds when the seller has already spent its share.
   */
  const refund = Effect.fnUntraced(function* (
    d: DisputeRecord,
    tx: TransactionRecord,
    now: number,
    resolution: string
  ) {
    const memo = `dispute ${d.id}: refund`
    const { entry, tx: refunded } = yield* settlement.refund(tx, {
      disputeId: d.id,
      reason: resolution,
      at: iso(now),
      memo
    })
    yield* listeners.refunded(refunded)
    // A refunded purchase's review no longer counts: out of the service's rating (the reputation
    // counters take it out with the refund itself, docs/reputation.md).
    const review = (yield* commerce.getTransaction(tx.id))?.review
    if (review !== undefined) yield* catalog.addRating(tx.serviceId, review.rating, -1)
    const next: DisputeRecord = {
      ...d,
      status: "resolved_refunded",
      resolution,
      refundCents: tx.priceCents,
      refundEntryId: entry.id,
      updatedAt: iso(now),
      resolvedAt: iso(now)
    }
    yield* store.update(next)
    yield* announce(next)
    return next
  })

  const lockTx = (id: string) =>
    Effect.flatMap(commerce.lockTransaction(id), (tx) =>
      tx ? Effect.succeed(tx) : Effect.die(new Error(`dispute for missing transaction ${id}`))
    )

  const open = Effect.fnUntraced(
    function* (agentId: string, body: { readonly transactionId: string; readonly reason: string }) {
      const tx = yield* commerce.lockTransaction(body.transactionId)
      if (!tx || (tx.buyerAgentId !== agentId && tx.sellerAgentId !== agentId)) {
        const message = `transaction ${body.transactionId} not found`
        return yield* Effect.fail(new NotFound({ message, resource: "transaction", id: body.transactionId }))
      }
      if (tx.buyerAgentId !== agentId) {
        return yield* Effect.fail(new Forbidden({ message: "only the buyer may open a dispute" }))
      }
      if (tx.status !== "completed") {
        return yield* Effect.fail(
          new Conflict({ message: `a ${tx.status} transaction cannot be disputed`, state: tx.status })
        )
      }
      const now = yield* Clock.currentTimeMillis
      if (now - Date.parse(tx.createdAt) > FILING_WINDOW_MS) {
        const message = `the filing window of 14 days after the purchase (${tx.createdAt}) has closed`
        return yield* Effect.fail(new Conflict({ message, state: "filing_window_closed" }))
      }
      const d: DisputeRecord = {
        id: yield* ids.make("dsp"),
        transactionId: tx.id,
        buyerAgentId: tx.buyerAgentId,
        sellerAgentId: tx.sellerAgentId,
        reason: body.reason,
        status: "open",
        sellerResponse: null,
        sellerNote: null,
        resolution: null,
        refundCents: 0,
        refundEntryId: null,
        respondBy: iso(now + SELLER_RESPONSE_MS),
        reviewDueAt: null,
        createdAt: iso(now),
        updatedAt: iso(now),
        resolvedAt: null
      }
      yield* store.insert(d)
      yield* announce(d)
      return toDispute(d, agentId)
    },
    atomically,
    traced("Disputes.open")
  )

  const get = (agentId: string, id: string) =>
    Effect.flatMap(store.get(id), (d) =>
      d && (d.buyerAgentId === agentId || d.sellerAgentId === agentId)
        ? Effect.succeed(toDispute(d, agentId))
        : Effect.fail(notFound(id))
    )

  /** Default and most 100 a page, as before pages existed. */
  const list = Effect.fnUntraced(function* (
    agentId: string,
    options: { readonly limit?: number; readonly cursor?: string } = {}
  ) {
    const limit = options.limit ?? 100
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
    }
    const rows = yield* store.listForAgent(agentId, limit + 1, before)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map((d) => toDispute(d, agentId)),
      nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null
    }
  })

  const respond = Effect.fnUntraced(
    function* (agentId: string, id: string, body: { readonly action: "accept" | "contest"; readonly note?: string }) {
      const d = yield* store.lock(id)
      if (!d || (d.buyerAgentId !== agentId && d.sellerAgentId !== agentId)) return yield* Effect.fail(notFound(id))
      if (d.sellerAgentId !== agentId) {
        return yield* Effect.fail(new Forbidden({ message: "only the seller answers a dispute" }))
      }
      if (d.status !== "open") {
        return yield* Effect.fail(new Conflict({ message: `dispute ${id} is ${d.status}`, state: d.status }))
      }
      const now = yield* Clock.currentTimeMillis
      const answered: DisputeRecord = {
        ...d,
        sellerResponse: body.action,
        sellerNote: body.note ?? null,
        updatedAt: iso(now)
      }
      if (body.action === "accept") {
        const tx = yield* lockTx(d.transactionId)
        const done = yield* refund(answered, tx, now, "the seller accepted the dispute: purchase refunded").pipe(
          Effect.catchTag("InsufficientFunds", (e) =>
            Effect.fail(
              new Conflict({
                message: `the seller's wallet cannot cover the refund yet (${e.missingCents} cents short)`,
                state: "refund_blocked"
              })
            )
          )
        )
        return toDispute(done, agentId)
      }
      const next: DisputeRecord = { ...answered, status: "under_review", reviewDueAt: iso(now + REVIEW_MS) }
      yield* store.update(next)
      yield* announce(next)
      return toDispute(next, agentId)
    },
    atomically,
    traced("Disputes.respond")
  )

  /**
   * Resolves one due dispute: an open one the seller left unanswered is refunded; a contested
   * one is refunded when its delivery breached the p95 latency it was sold with, otherwise rejected.
   */
  const resolveOne = Effect.fnUntraced(function* (id: string) {
    const d = yield* store.lock(id)
    const now = yield* Clock.currentTimeMillis
    if (!d) return false
    const dueOpen = d.status === "open" && Date.parse(d.respondBy) <= now
    const dueReview = d.status === "under_review" && d.reviewDueAt !== null && Date.parse(d.reviewDueAt) <= now
    if (!dueOpen && !dueReview) return false
    const tx = yield* lockTx(d.transactionId)
    if (dueOpen) {
      yield* refund(d, tx, now, "the seller did not answer within 72 hours: purchase refunded")
      return true
    }
    const row = yield* commerce.getTransaction(tx.id)
    const latency = row?.delivery?.latencyMs ?? 0
    // The delivery is judged by the promise it was sold under, not the tier as its seller set it since
    // (a purchase kept before promises were: the tier as it is now).
    const promised =
      tx.promisedP95LatencyMs ??
      Option.getOrUndefined(
        Option.map(yield* Effect.option(catalog.getTier(tx.serviceId, tx.tierId)), (t) => t.tier.sla.p95LatencyMs)
      )
    if (promised === undefined || latency > promised) {
      const why =
        promised === undefined
          ? "the tier no longer exists to check the SLA against"
          : `the delivery took ${latency} ms, over the p95 of ${promised} ms it was sold with`
      yield* refund(d, tx, now, `review: ${why}: purchase refunded`)
      return true
    }
    const next: DisputeRecord = {
      ...d,
      status: "resolved_rejected",
      resolution: `review: the delivery took ${latency} ms, within the p95 of ${promised} ms it was sold with: dispute rejected`,
      updatedAt: iso(now),
      resolvedAt: iso(now)
    }
    yield* store.update(next)
    yield* announce(next)
    return true
  }, atomically)

  const resolveDue = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const due = yield* store.listDue(iso(now), 100)
    let resolved = 0
    for (const id of due) {
      const r = yield* Effect.result(resolveOne(id))
      if (r._tag === "Success" && r.success) resolved++
      // A refund the seller cannot cover yet stays due and is retried on the next pass.
      if (r._tag === "Failure") yield* Effect.logWarning(`dispute ${id} not resolved yet: ${r.failure.message}`)
    }
    return resolved
  }).pipe(traced("Disputes.resolveDue"))

  return Disputes.of({ open, get, list, respond, resolveDue })
})

export class Disputes extends Context.Service<Disputes, DisputesService>()("agent-commerce/Disputes") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, RefundListeners, config) stay open. */
  static readonly layer = Layer.effect(Disputes, make).pipe(
    Layer.provide([Catalog.layer, Events.layer, Settlement.layer])
  )
}

/** Background resolution of due disputes every 5 seconds (when WORKERS is on). */
export const DisputeWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const disputes = yield* Disputes
    yield* Effect.forkScoped(
      disputes.resolveDue.pipe(
        Effect.catchCause((cause) => Effect.logWarning("dispute worker pass failed", cause)),
        Effect.repeat(Schedule.spaced(Duration.seconds(5)))
      )
    )
  })
)
