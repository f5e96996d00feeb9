// Negotiation: a buyer proposes a price for a service tier, the seller answers (a live seller itself,
// within its window; otherwise automatically, by the deterministic policy in schema/negotiation, from
// a durable scheduled row any process may claim), the parties alternate until accept or reject, and
// an accepted price is redeemable once: a purchase (a buy or a saga's quote) redeems it, and gives it
// back when the purchase is undone. Every move is written with its history entry and announced to
// both parties. Pure rules: policy.ts.
import { Clock, Context, Effect, Layer } from "effect"
import {
  Forbidden,
  type IdempotencyKeyReused,
  InvalidInput,
  type NotFound,
  type StorageUnavailable
} from "../../schema/platform/errors.js"
import {
  canTransition,
  type HistoryEntry,
  InvalidOffer,
  type Negotiation,
  type NegotiateBody,
  type NegotiationClosed,
  type NegotiationRecord,
  NegotiationUnusable,
  OFFER_VALIDITY_MS,
  type Party,
  policyPrices,
  type RespondBody,
  sellerDecision,
  type Terms,
  turnOf
} from "../../schema/negotiation/negotiation.js"
import type { NegotiationsQuery } from "../../schema/negotiation/query.js"
import { decodeTimeCursor, encodeCursor } from "../../schema/platform/common.js"
import { Offers, type OfferService } from "../purchases/Offers.js"
import { Events } from "../events/Events.js"
import type { Caller } from "../keys/Caller.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Ids, Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import { NegotiationStore } from "./NegotiationStore.js"
import {
  closed,
  counterRefusal,
  effectiveDelayMs,
  effectiveStatus,
  isLiveSeller,
  iso,
  NEGOTIATION_BATCH,
  notFound,
  SELLER_WINDOW_MS,
  toNegotiation
} from "./policy.js"

type SellerAction = "accept" | "reject" | "counter"

/** What redeeming an accepted price gives the purchase: the price, and the negotiation as now used. */
export interface Redeemed {
  readonly priceCents: number
  readonly negotiation: Negotiation
}

export interface RedeemInput {
  readonly agentId: string
  readonly negotiationId: string
  readonly serviceId: string
  readonly tierId: string
  readonly usedBy: string
}

export interface NegotiationsService {
  /**
   * The buyer's proposal; the automatic seller answers after `delayMs`, or at the end of the
   * seller's window (SELLER_WINDOW_MS) when the service's own agent is a live seller.
   */
  readonly open: (
    caller: Pick<Caller, "agentId">,
    body: NegotiateBody,
    keyed?: KeyedRequest
  ) => Effect.Effect<Negotiation, NotFound | InvalidInput | InvalidOffer | IdempotencyKeyReused | StorageUnavailable>
  /** A party's move (accept, reject or counter) on its turn. */
  readonly respond: (
    caller: Pick<Caller, "agentId" | "permissions">,
    id: string,
    body: RespondBody,
    keyed?: KeyedRequest
  ) => Effect.Effect<
    Negotiation,
    NotFound | Forbidden | NegotiationClosed | InvalidOffer | IdempotencyKeyReused | StorageUnavailable
  >
  /** Answers every negotiation whose automatic seller answer is due; returns how many were answered. */
  readonly runDue: (limit?: number) => Effect.Effect<number, NegotiationClosed | StorageUnavailable>
  readonly get: (agentId: string, id: string) => Effect.Effect<Negotiation, NotFound | StorageUnavailable>
  /** The agent's negotiations, newest first; `role` and `status` narrow the page (a seller's inbox). */
  readonly list: (
    agentId: string,
    options: NegotiationsQuery
  ) => Effect.Effect<
    { readonly data: Array<Negotiation>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  /**
   * Uses an accepted price once (inside the caller's unit of work, so a failed purchase un-uses
   * it): the buyer's own, for this service and tier, accepted and not expired.
   */
  readonly redeem: (input: RedeemInput) => Effect.Effect<Redeemed, NotFound | NegotiationUnusable | StorageUnavailable>
  /** Compensation: gives a used price back (accepted again, same expiry) when `usedBy` was undone. */
  readonly release: (negotiationId: string, usedBy: string) => Effect.Effect<boolean, StorageUnavailable>
  /** The automatic seller's answer delay for a simulated (platform) seller, as scheduled. */
  readonly delayMs: number
}

const make = Effect.gen(function* () {
  const store = yield* NegotiationStore
  const offers = yield* Offers
  const ids = yield* Ids
  const config = yield* AppConfig
  const events = yield* Events
  const { atomically } = yield* Transactor
  const receipts = yield* WriteReceipts
  const delayMs = effectiveDelayMs(config.negotiationDelayMs)
  /** When the automatic seller answers: a live seller first has its whole window to answer itself. */
  const answerDelay = (service: OfferService) => (isLiveSeller(service) ? SELLER_WINDOW_MS : delayMs)
  /** The same for a buyer's counter; a withdrawn offer is declined by the automatic seller, after the delay. */
  const answerDelayOf = (r: NegotiationRecord) =>
    offers.get(r.serviceId, r.tierId).pipe(
      Effect.map((o) => answerDelay(o.service)),
      Effect.catchTag("NotFound", () => Effect.succeed(delayMs))
    )

  /** Tells both parties (once if they are the same agent) what the move was. */
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

  /** Writes the seller's move (automatic or by a real seller agent), inside the caller's unit of work. */
  const applySeller = Effect.fnUntraced(function* (
    r: NegotiationRecord,
    now: number,
    action: SellerAction,
    priceCents: number | null,
    automatic: boolean,
    reason: string | null
  ) {
    const to = canTransition(r.status, "seller", action)
    if (to === undefined) return yield* Effect.fail(closed(effectiveStatus(r, now), "seller"))
    const round = r.round + 1
    const at = iso(now)
    const entry: HistoryEntry = {
      round,
      by: "seller",
      action,
      priceCents: action === "accept" ? r.currentPriceCents : priceCents,
      terms: r.terms,
      automatic,
      reason,
      at
    }
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

  /**
   * The automatic seller's answer to a row awaiting the seller (inside the caller's unit of work), by
   * the deterministic policy in schema/negotiation (sellerDecision) from the service's negotiation
   * settings.
   */
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
    const price = decision.action === "reject" ? null : decision.priceCents
    return yield* applySeller(r, now, decision.action, price, true, decision.reason)
  })

  const open = Effect.fnUntraced(function* (
    caller: Pick<Caller, "agentId">,
    body: NegotiateBody,
    keyed?: KeyedRequest
  ) {
    const buyer = caller.agentId!
    const offer = yield* offers.get(body.serviceId, body.tierId)
    if (offer.service.sellerAgentId === buyer) {
      return yield* Effect.fail(
        new InvalidInput({
          message: "you sell this service; an agent cannot negotiate with itself",
          field: "serviceId"
        })
      )
    }
    const list = offer.tier.priceCents
    if (body.proposedPriceCents > list) {
      return yield* Effect.fail(
        new InvalidOffer({
          message:
            `proposedPriceCents ${body.proposedPriceCents} is above the list price of ${list} cents; ` +
            "buy at list price instead",
          field: "proposedPriceCents"
        })
      )
    }
    const terms: Terms = body.terms ?? {}
    const write = atomically(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const at = iso(now)
        const entry: HistoryEntry = {
          round: 0,
          by: "buyer",
          action: "propose",
          priceCents: body.proposedPriceCents,
          terms,
          automatic: false,
          reason: null,
          at
        }
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
          sellerDueAt: iso(now + answerDelay(offer.service)),
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
    // A retry whose proposal committed (its answer lost) gets that negotiation, as it stands now.
    return yield* receipts.once({
      keyed,
      kind: "negotiation.open",
      request: { buyer, body },
      write,
      idOf: (n) => n.id,
      replay: (id) => get(buyer, id)
    })
  }, traced("Negotiations.open"))

  const move = Effect.fnUntraced(function* (
    caller: Pick<Caller, "agentId" | "permissions">,
    id: string,
    body: RespondBody
  ) {
    const agentId = caller.agentId!
    const r = yield* store.getForUpdate(id)
    if (!r || (r.buyerAgentId !== agentId && r.sellerAgentId !== agentId)) return yield* Effect.fail(notFound(id))
    const party: Party = r.buyerAgentId === agentId ? "buyer" : "seller"
    if (party === "seller" && !caller.permissions.has("commerce:sell")) {
      return yield* Effect.fail(
        new Forbidden({
          message: "answering as the seller needs the commerce:sell permission",
          permission: "commerce:sell"
        })
      )
    }
    const now = yield* Clock.currentTimeMillis
    const status = effectiveStatus(r, now)
    if (turnOf[status] !== party || canTransition(status, party, body.action) === undefined) {
      return yield* Effect.fail(closed(status, party))
    }
    const refused = counterRefusal(r, party, body)
    if (refused) return yield* Effect.fail(refused)
    if (party === "seller") {
      const next = yield* applySeller(r, now, body.action, body.counterPriceCents ?? null, false, null)
      return toNegotiation(next, now)
    }
    // The buyer's move.
    const at = iso(now)
    const to = canTransition(status, "buyer", body.action)!
    const terms = body.action === "counter" && body.terms !== undefined ? body.terms : r.terms
    const price =
      body.action === "counter" ? body.counterPriceCents! : body.action === "accept" ? r.currentPriceCents : null
    const entry: HistoryEntry = {
      round: r.round,
      by: "buyer",
      action: body.action,
      priceCents: price,
      terms,
      automatic: false,
      reason: null,
      at
    }
    const next: NegotiationRecord = {
      ...r,
      status: to,
      terms,
      currentPriceCents: body.action === "counter" ? price! : r.currentPriceCents,
      agreedPriceCents: body.action === "accept" ? r.currentPriceCents : null,
      history: [...r.history, entry],
      sellerDueAt: to === "awaiting_seller" ? iso(now + (yield* answerDelayOf(r))) : null,
      expiresAt: to === "accepted" ? iso(now + OFFER_VALIDITY_MS) : null,
      updatedAt: at
    }
    yield* store.update(next)
    yield* announce(next, entry)
    return toNegotiation(next, now)
  }, atomically)

  /** A party's move; a retry whose move committed (its answer lost) gets the negotiation as it stands. */
  const respond = (
    caller: Pick<Caller, "agentId" | "permissions">,
    id: string,
    body: RespondBody,
    keyed?: KeyedRequest
  ) =>
    receipts
      .once({
        keyed,
        kind: "negotiation.respond",
        request: { agentId: caller.agentId, id, body },
        write: move(caller, id, body),
        idOf: (n) => n.id,
        replay: (negotiationId) => get(caller.agentId!, negotiationId)
      })
      .pipe(traced("Negotiations.respond"))

  const runDue = Effect.fnUntraced(
    function* (limit: number = NEGOTIATION_BATCH) {
      const now = yield* Clock.currentTimeMillis
      const due = yield* store.claimDue(iso(now), limit)
      for (const r of due) yield* answerAsSeller(r, now)
      return due.length
    },
    atomically,
    traced("Negotiations.runDue")
  )

  const get = Effect.fnUntraced(function* (agentId: string, id: string) {
    const r = yield* store.get(id)
    if (!r || (r.buyerAgentId !== agentId && r.sellerAgentId !== agentId)) return yield* Effect.fail(notFound(id))
    return toNegotiation(r, yield* Clock.currentTimeMillis)
  })

  const list = Effect.fnUntraced(function* (agentId: string, options: NegotiationsQuery) {
    const limit = options.limit ?? 20
    // A validated time: a forged one would otherwise reach the SQL cast.
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
    }
    const now = yield* Clock.currentTimeMillis
    const filter = { role: options.role, status: options.status, now: iso(now) }
    const rows = yield* store.listForAgent(agentId, { limit: limit + 1, before, filter })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map((r) => toNegotiation(r, now)),
      nextCursor: rows.length > limit && last ? encodeCursor({ c: last.createdAt, i: last.id }) : null
    }
  })

  const redeem = Effect.fnUntraced(
    function* (input: RedeemInput) {
      const r = yield* store.getForUpdate(input.negotiationId)
      if (!r || r.buyerAgentId !== input.agentId) return yield* Effect.fail(notFound(input.negotiationId))
      const now = yield* Clock.currentTimeMillis
      const status = effectiveStatus(r, now)
      const unusable = (message: string) => new NegotiationUnusable({ message, negotiationId: r.id, status })
      if (status === "used")
        return yield* Effect.fail(unusable(`negotiation ${r.id} was already used (by ${r.usedBy})`))
      if (status === "expired") return yield* Effect.fail(unusable(`negotiation ${r.id} expired at ${r.expiresAt}`))
      if (canTransition(status, "buyer", "redeem") === undefined || r.agreedPriceCents === null) {
        return yield* Effect.fail(unusable(`negotiation ${r.id} is ${status}, not accepted`))
      }
      if (r.serviceId !== input.serviceId || r.tierId !== input.tierId) {
        return yield* Effect.fail(
          unusable(`negotiation ${r.id} is for ${r.serviceId}/${r.tierId}, not ${input.serviceId}/${input.tierId}`)
        )
      }
      const next: NegotiationRecord = {
        ...r,
        status: "used",
        usedBy: input.usedBy,
        usedAt: iso(now),
        updatedAt: iso(now)
      }
      yield* store.update(next)
      return { priceCents: r.agreedPriceCents, negotiation: toNegotiation(next, now) }
    },
    atomically,
    traced("Negotiations.redeem")
  )

  const release = Effect.fnUntraced(
    function* (negotiationId: string, usedBy: string) {
      const r = yield* store.getForUpdate(negotiationId)
      if (
        !r ||
        r.status !== "used" ||
        r.usedBy !== usedBy ||
        canTransition("used", "system", "release") === undefined
      ) {
        return false
      }
      const now = yield* Clock.currentTimeMillis
      yield* store.update({ ...r, status: "accepted", usedBy: null, usedAt: null, updatedAt: iso(now) })
      return true
    },
    atomically,
    traced("Negotiations.release")
  )

  const service: NegotiationsService = { open, respond, runDue, get, list, redeem, release, delayMs }
  return service
})

export class Negotiations extends Context.Service<Negotiations, NegotiationsService>()("agent-commerce/Negotiations") {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Negotiations, make).pipe(Layer.provide([Events.layer, WriteReceipts.layer]))
}
