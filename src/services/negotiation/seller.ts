// The seller's side of a negotiation: a move written with its history entry and announced to both
// parties, and the platform's automatic seller, which answers a due proposal by the deterministic
// policy in schema/negotiation (sellerDecision) from the service's negotiation settings.
import { Effect } from "effect"
import {
  canTransition,
  type HistoryEntry,
  type NegotiationRecord,
  OFFER_VALIDITY_MS,
  policyPrices,
  sellerDecision
} from "../../schema/negotiation/negotiation.js"
import { Offers } from "../purchases/Offers.js"
import { Events } from "../events/Events.js"
import { NegotiationStore } from "./NegotiationStore.js"
import { closed, effectiveStatus, iso } from "./policy.js"

export type SellerAction = "accept" | "reject" | "counter"

/** The seller's moves over the store; every one runs inside the caller's unit of work. */
export const makeSeller = Effect.gen(function* () {
  const store = yield* NegotiationStore
  const offers = yield* Offers
  const events = yield* Events

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

  /** Writes the seller's move (automatic or by a real seller agent). */
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

  /** The automatic seller's answer to a row awaiting the seller. */
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

  return { announce, applySeller, answerAsSeller } as const
})
