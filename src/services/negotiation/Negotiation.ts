// Negotiation: a buyer proposes a price for a service tier, the seller answers (automatically, by
// the deterministic policy in schema/negotiation.ts, from a durable scheduled row any process may
// claim), the parties alternate until accept or reject, and an accepted price is redeemable once.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { decodeTimeCursor, encodeCursor } from "../../schema/platform/common.js"
import { Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import {
  canTransition,
  type HistoryEntry,
  InvalidOffer,
  MAX_ROUNDS,
  Negotiation,
  type NegotiateBody,
  NegotiationClosed,
  type NegotiationRecord,
  type NegotiationStatus,
  NegotiationUnusable,
  OFFER_VALIDITY_MS,
  type Party,
  policyPrices,
  type RespondBody,
  SELLER_ANSWER_LIMIT_MS,
  sellerDecision,
  type Terms,
  turnOf
} from "../../schema/negotiation/negotiation.js"
import type { Caller } from "../keys/Caller.js"
import { atomically, Ids } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Offers } from "../commerce/Offers.js"

/** Storage port for negotiations. */
export class NegotiationStore extends Context.Service<
  NegotiationStore,
  {
    readonly insert: (record: NegotiationRecord) => Effect.Effect<void, StorageUnavailable>
    readonly get: (id: string) => Effect.Effect<NegotiationRecord | undefined, StorageUnavailable>
    /** The row, locked for this unit of work. */
    readonly getForUpdate: (id: string) => Effect.Effect<NegotiationRecord | undefined, StorageUnavailable>
    readonly update: (record: NegotiationRecord) => Effect.Effect<void, StorageUnavailable>
    /** Negotiations where the agent is buyer or seller, newest first, after the keyset cursor. */
    readonly listForAgent: (
      agentId: string,
      options: { readonly limit: number; readonly before?: { readonly createdAt: string; readonly id: string } }
    ) => Effect.Effect<ReadonlyArray<NegotiationRecord>, StorageUnavailable>
    /**
     * Up to `limit` negotiations whose automatic seller answer is due (sellerDueAt ≤ now), oldest
     * first, locked for this unit of work; rows another process holds are skipped (SKIP LOCKED).
     */
    readonly claimDue: (now: string, limit: number) => Effect.Effect<ReadonlyArray<NegotiationRecord>, StorageUnavailable>
  }
>()("NegotiationStore") {}

/** How often the worker looks for due answers, and how many it answers per pass. */
export const NEGOTIATION_TICK_MS = 200
export const NEGOTIATION_BATCH = 50
/** The seller's answer delay actually scheduled: the configured one, capped so that the answer lands within 30 s. */
export const effectiveDelayMs = (configured: number) => Math.max(0, Math.min(configured, SELLER_ANSWER_LIMIT_MS - 2 * NEGOTIATION_TICK_MS))

const iso = (ms: number) => new Date(ms).toISOString()

/** The status as of `now`: a counter-offer or an accepted price past its validity is expired. */
export const effectiveStatus = (r: NegotiationRecord, now: number): NegotiationStatus =>
  (r.status === "accepted" || r.status === "awaiting_buyer") && r.expiresAt !== null && Date.parse(r.expiresAt) <= now ? "expired" : r.status

export const toNegotiation = (r: NegotiationRecord, now: number): Negotiation => {
  const status = effectiveStatus(r, now)
  return Negotiation.make({
    id: r.id,
    serviceId: r.serviceId,
    tierId: r.tierId,
    buyerAgentId: r.buyerAgentId,
    sellerAgentId: r.sellerAgentId,
    status,
    turn: turnOf[status],
    round: r.round,
    maxRounds: MAX_ROUNDS,
    listPriceCents: r.listPriceCents as Negotiation["listPriceCents"],
    currentPriceCents: r.currentPriceCents as Negotiation["currentPriceCents"],
    agreedPriceCents: r.agreedPriceCents as Negotiation["agreedPriceCents"],
    terms: r.terms,
    history: [...r.history],
    sellerAnswerDueAt: r.sellerDueAt,
    expiresAt: r.expiresAt,
    usedBy: r.usedBy,
    usedAt: r.usedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt
  })
}

const notFound = (id: string) => new NotFound({ message: `negotiation ${id} not found`, resource: "negotiation", id })

const closed = (status: NegotiationStatus, party: Party) => {
  const turn = turnOf[status]
  const message =
    turn === null
      ? `the negotiation is ${status}; no further responses are possible`
      : `it is the ${turn}'s turn, not the ${party}'s (status ${status})`
  return new NegotiationClosed({ message, status, turn })
}

export class Negotiations extends Context.Service<Negotiations>()("Negotiations", {
  make: Effect.gen(function* () {
    const store = yield* NegotiationStore
    const offers = yield* Offers
    const events = yield* Events
    const ids = yield* Ids
    const config = yield* AppConfig
    const delayMs = effectiveDelayMs(config.negotiationDelayMs)

    const announce = (r: NegotiationRecord, entry: HistoryEntry) =>
      Effect.forEach(
        [...new Set([r.buyerAgentId, r.sellerAgentId])],
        (agentId) =>
          events.emit(agentId, "negotiation.updated", {
            negotiationId: r.id,
            serviceId: r.serviceId,
            tierId: r.tierId,
            status: r.status,
            round: r.round,
            by: entry.by,
            action: entry.action,
            priceCents: entry.priceCents,
            automatic: entry.automatic,
            agreedPriceCents: r.agreedPriceCents
          }),
        { discard: true }
      )

    /** The automatic seller's answer to a row awaiting the seller (inside the caller's unit of work). */
    const answerAsSeller = Effect.fnUntraced(function* (r: NegotiationRecord, now: number) {
      const offer = yield* Effect.result(offers.get(r.serviceId, r.tierId))
      if (offer._tag === "Failure") {
        // The service or tier was withdrawn while the proposal waited: the seller declines.
        if (offer.failure._tag === "StorageUnavailable") return yield* Effect.fail(offer.failure)
        return yield* applySeller(r, now, "reject", null, true, "the service or tier is no longer offered")
      }
      const policy = offer.success.service.negotiation
      const round = r.round + 1
      const decision = sellerDecision({
        offerCents: r.currentPriceCents,
        round,
        previousAskCents: r.sellerAskCents ?? undefined,
        prices: policyPrices(r.listPriceCents, policy),
        policy
      })
      return yield* applySeller(r, now, decision.action, decision.action === "reject" ? null : decision.priceCents, true, decision.reason)
    })

    /** Writes the seller's move (automatic or by a real seller agent). */
    const applySeller = Effect.fnUntraced(function* (r: NegotiationRecord, now: number, action: "accept" | "reject" | "counter", priceCents: number | null, automatic: boolean, reason: string | null) {
      const to = canTransition(r.status, "seller", action)
      if (to === undefined) return yield* Effect.fail(closed(effectiveStatus(r, now), "seller"))
      const round = r.round + 1
      const at = iso(now)
      const entry: HistoryEntry = { round, by: "seller", action, priceCents: action === "accept" ? r.currentPriceCents : priceCents, terms: r.terms, automatic, reason, at }
      const next: NegotiationRecord = {
        ...r,
        status: to,
        round,
        currentPriceCents: action === "counter" ? priceCents! : r.currentPriceCents,
        sellerAskCents: action === "counter" ? priceCents! : r.sellerAskCents,
        agreedPriceCents: action === "accept" ? r.currentPriceCents : null,
        history: [...r.history, entry],
        sellerDueAt: null,
        expiresAt: to === "rejected" ? null : iso(now + OFFER_VALIDITY_MS),
        updatedAt: at
      }
      yield* store.update(next)
      yield* announce(next, entry)
      return next
    })

    const open = Effect.fnUntraced(function* (caller: Pick<Caller, "agentId">, body: NegotiateBody) {
      const buyer = caller.agentId!
      const offer = yield* offers.get(body.serviceId, body.tierId)
      if (offer.service.sellerAgentId === buyer) {
        return yield* Effect.fail(new InvalidInput({ message: "you sell this service; an agent cannot negotiate with itself", field: "serviceId" }))
      }
      const list = offer.tier.priceCents
      if (body.proposedPriceCents > list) {
        return yield* Effect.fail(
          new InvalidOffer({ message: `proposedPriceCents ${body.proposedPriceCents} is above the list price of ${list} cents; buy at list price instead`, field: "proposedPriceCents" })
        )
      }
      const terms: Terms = body.terms ?? {}
      return yield* atomically(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const at = iso(now)
          const entry: HistoryEntry = { round: 0, by: "buyer", action: "propose", priceCents: body.proposedPriceCents, terms, automatic: false, reason: null, at }
          const record: NegotiationRecord = {
            id: yield* ids.make("neg"),
            buyerAgentId: buyer,
            sellerAgentId: offer.service.sellerAgentId,
            serviceId: offer.service.id,
            tierId: offer.tier.id,
            listPriceCents: list,
            terms,
            status: "awaiting_seller",
            round: 0,
            currentPriceCents: body.proposedPriceCents,
            sellerAskCents: null,
            agreedPriceCents: null,
            history: [entry],
            sellerDueAt: iso(now + delayMs),
            expiresAt: null,
            usedBy: null,
            usedAt: null,
            createdAt: at,
            updatedAt: at
          }
          yield* store.insert(record)
          yield* announce(record, entry)
          return toNegotiation(record, now)
        })
      )
    }, traced("Negotiations.open"))

    const respond = Effect.fnUntraced(function* (caller: Pick<Caller, "agentId" | "permissions">, id: string, body: RespondBody) {
        const agentId = caller.agentId!
        const r = yield* store.getForUpdate(id)
        if (!r || (r.buyerAgentId !== agentId && r.sellerAgentId !== agentId)) return yield* Effect.fail(notFound(id))
        const party: Party = r.buyerAgentId === agentId ? "buyer" : "seller"
        if (party === "seller" && !caller.permissions.has("commerce:sell")) {
          return yield* Effect.fail(new Forbidden({ message: "answering as the seller needs the commerce:sell permission", permission: "commerce:sell" }))
        }
        const now = yield* Clock.currentTimeMillis
        const status = effectiveStatus(r, now)
        if (turnOf[status] !== party || canTransition(status, party, body.action) === undefined) return yield* Effect.fail(closed(status, party))
        if (body.action === "counter" && body.counterPriceCents === undefined) {
          return yield* Effect.fail(new InvalidOffer({ message: "a counter needs counterPriceCents (integer cents)", field: "counterPriceCents" }))
        }
        if (party === "seller") {
          if (body.action === "counter") {
            const price = body.counterPriceCents!
            if (r.round + 1 >= MAX_ROUNDS) return yield* Effect.fail(new InvalidOffer({ message: `round ${MAX_ROUNDS} is the last: accept or reject`, field: "action" }))
            const ceiling = r.sellerAskCents ?? r.listPriceCents
            if (price <= r.currentPriceCents || price > ceiling) {
              return yield* Effect.fail(
                new InvalidOffer({ message: `a seller counter must be above the buyer's offer of ${r.currentPriceCents} and at most ${ceiling} cents`, field: "counterPriceCents" })
              )
            }
          }
          const next = yield* applySeller(r, now, body.action, body.counterPriceCents ?? null, false, null)
          return toNegotiation(next, now)
        }
        // The buyer's move.
        const at = iso(now)
        const to = canTransition(status, "buyer", body.action)!
        if (body.action === "counter") {
          const price = body.counterPriceCents!
          if (price >= r.currentPriceCents) {
            return yield* Effect.fail(
              new InvalidOffer({ message: `a counter must be below the seller's ask of ${r.currentPriceCents} cents (accept it instead)`, field: "counterPriceCents" })
            )
          }
        }
        const terms = body.action === "counter" && body.terms !== undefined ? body.terms : r.terms
        const price = body.action === "counter" ? body.counterPriceCents! : body.action === "accept" ? r.currentPriceCents : null
        const entry: HistoryEntry = { round: r.round, by: "buyer", action: body.action, priceCents: price, terms, automatic: false, reason: null, at }
        const next: NegotiationRecord = {
          ...r,
          status: to,
          terms,
          currentPriceCents: body.action === "counter" ? price! : r.currentPriceCents,
          agreedPriceCents: body.action === "accept" ? r.currentPriceCents : null,
          history: [...r.history, entry],
          sellerDueAt: to === "awaiting_seller" ? iso(now + delayMs) : null,
          expiresAt: to === "accepted" ? iso(now + OFFER_VALIDITY_MS) : null,
          updatedAt: at
        }
        yield* store.update(next)
        yield* announce(next, entry)
        return toNegotiation(next, now)
      }, atomically, traced("Negotiations.respond"))

    /** Answers every negotiation whose automatic seller answer is due; returns how many were answered. */
    const runDue = Effect.fnUntraced(function* (limit: number = NEGOTIATION_BATCH) {
        const now = yield* Clock.currentTimeMillis
        const due = yield* store.claimDue(iso(now), limit)
        for (const r of due) yield* answerAsSeller(r, now)
        return due.length
      }, atomically, traced("Negotiations.runDue"))

    const get = Effect.fnUntraced(function* (agentId: string, id: string) {
      const r = yield* store.get(id)
      if (!r || (r.buyerAgentId !== agentId && r.sellerAgentId !== agentId)) return yield* Effect.fail(notFound(id))
      return toNegotiation(r, yield* Clock.currentTimeMillis)
    })

    const list = Effect.fnUntraced(function* (agentId: string, options: { readonly limit?: number; readonly cursor?: string }) {
      const limit = options.limit ?? 20
      // A validated time: a forged one would otherwise reach the SQL cast.
      const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
      if (options.cursor !== undefined && before === undefined) return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
      const rows = yield* store.listForAgent(agentId, { limit: limit + 1, before })
      const now = yield* Clock.currentTimeMillis
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return {
        data: page.map((r) => toNegotiation(r, now)),
        nextCursor: rows.length > limit && last ? encodeCursor({ c: last.createdAt, i: last.id }) : null
      }
    })

    /**
     * Uses an accepted price once (inside the caller's unit of work, so a failed purchase un-uses
     * it): the buyer's own, for this service and tier, accepted and not expired. Returns the price.
     */
    const redeem = Effect.fnUntraced(function* (input: { readonly agentId: string; readonly negotiationId: string; readonly serviceId: string; readonly tierId: string; readonly usedBy: string }) {
        const r = yield* store.getForUpdate(input.negotiationId)
        if (!r || r.buyerAgentId !== input.agentId) return yield* Effect.fail(notFound(input.negotiationId))
        const now = yield* Clock.currentTimeMillis
        const status = effectiveStatus(r, now)
        const unusable = (message: string) => new NegotiationUnusable({ message, negotiationId: r.id, status })
        if (status === "used") return yield* Effect.fail(unusable(`negotiation ${r.id} was already used (by ${r.usedBy})`))
        if (status === "expired") return yield* Effect.fail(unusable(`negotiation ${r.id} expired at ${r.expiresAt}`))
        if (canTransition(status, "buyer", "redeem") === undefined || r.agreedPriceCents === null) {
          return yield* Effect.fail(unusable(`negotiation ${r.id} is ${status}, not accepted`))
        }
        if (r.serviceId !== input.serviceId || r.tierId !== input.tierId) {
          return yield* Effect.fail(unusable(`negotiation ${r.id} is for ${r.serviceId}/${r.tierId}, not ${input.serviceId}/${input.tierId}`))
        }
        const next: NegotiationRecord = { ...r, status: "used", usedBy: input.usedBy, usedAt: iso(now), updatedAt: iso(now) }
        yield* store.update(next)
        return { priceCents: r.agreedPriceCents, negotiation: toNegotiation(next, now) }
      }, atomically, traced("Negotiations.redeem"))

    /** Compensation: gives a used price back (accepted again, same expiry) when `usedBy` was undone. */
    const release = Effect.fnUntraced(function* (negotiationId: string, usedBy: string) {
        const r = yield* store.getForUpdate(negotiationId)
        if (!r || r.status !== "used" || r.usedBy !== usedBy || canTransition("used", "system", "release") === undefined) return false
        const now = yield* Clock.currentTimeMillis
        yield* store.update({ ...r, status: "accepted", usedBy: null, usedAt: null, updatedAt: iso(now) })
        return true
      }, atomically, traced("Negotiations.release"))

    return { open, respond, runDue, get, list, redeem, release, delayMs } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Negotiations, Negotiations.make).pipe(Layer.provide([Events.layer]))
}

/**
 * The negotiation worker: answers due negotiations every NEGOTIATION_TICK_MS (at once again after
 * a full batch). Runs only when AppConfig.workers; stops with the layer's scope.
 */
export const NegotiationWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const negotiations = yield* Negotiations
    const loop = negotiations.runDue().pipe(
      Effect.catchCause((cause) => Effect.logWarning("negotiation worker: a pass failed; retrying", cause).pipe(Effect.as(0))),
      Effect.flatMap((answered) => (answered >= NEGOTIATION_BATCH ? Effect.void : Effect.sleep(Duration.millis(NEGOTIATION_TICK_MS)))),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
  })
)
