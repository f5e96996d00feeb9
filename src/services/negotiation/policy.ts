// The negotiation's pure rules beside the service: when the automatic seller answers, the status
// a stored row has as of now (offers expire without a write), and the API's view of a row.
import {
  InvalidOffer,
  MAX_ROUNDS,
  Negotiation,
  NegotiationClosed,
  type NegotiationRecord,
  type NegotiationStatus,
  type Party,
  type RespondBody,
  SELLER_ANSWER_LIMIT_MS,
  turnOf
} from "../../schema/negotiation/negotiation.js"
import { NotFound } from "../../schema/platform/errors.js"

/** How often the worker looks for due answers, and how many it answers per pass. */
export const NEGOTIATION_TICK_MS = 200
export const NEGOTIATION_BATCH = 50
/**
 * The longest a seller's answer may be scheduled after the buyer's move: the answer limit less the
 * worker's ticks, so that the automatic answer still lands within the limit.
 */
export const SELLER_WINDOW_MS = SELLER_ANSWER_LIMIT_MS - 2 * NEGOTIATION_TICK_MS
/** The seller's answer delay actually scheduled for a simulated seller: the configured one, capped. */
export const effectiveDelayMs = (configured: number) => Math.max(0, Math.min(configured, SELLER_WINDOW_MS))

/**
 * Whether the service's own agent is a live seller (its orders reach it: pull or push). A live seller
 * gets the whole window to answer for itself before the automatic seller does; the platform's
 * simulated sellers are answered after the configured delay. The catalog's offers carry the
 * fulfilment; an offer without one is a platform seller's.
 */
export const isLiveSeller = (service: { readonly id: string; readonly fulfilment?: { readonly mode: string } }) =>
  service.fulfilment?.mode === "pull" || service.fulfilment?.mode === "push"

export const iso = (ms: number) => new Date(ms).toISOString()

/** The status as of `now`: a counter-offer or an accepted price past its validity is expired. */
export const effectiveStatus = (r: NegotiationRecord, now: number): NegotiationStatus =>
  (r.status === "accepted" || r.status === "awaiting_buyer") && r.expiresAt !== null && Date.parse(r.expiresAt) <= now
    ? "expired"
    : r.status

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

export const notFound = (id: string) =>
  new NotFound({ message: `negotiation ${id} not found`, resource: "negotiation", id })

/** Why `party` cannot move now: the negotiation is over, or it is the other side's turn. */
export const closed = (status: NegotiationStatus, party: Party) => {
  const turn = turnOf[status]
  const message =
    turn === null
      ? `the negotiation is ${status}; no further responses are possible`
      : `it is the ${turn}'s turn, not the ${party}'s (status ${status})`
  return new NegotiationClosed({ message, status, turn })
}

/**
 * Why a party's counter cannot stand, or undefined: it needs a price; the seller's lies above the
 * buyer's offer and at most its own last ask (never past the last round); the buyer's lies below
 * the seller's ask.
 */
export const counterRefusal = (r: NegotiationRecord, party: Party, body: RespondBody): InvalidOffer | undefined => {
  if (body.action !== "counter") return undefined
  const price = body.counterPriceCents
  if (price === undefined)
    return new InvalidOffer({
      message: "a counter needs counterPriceCents (integer cents)",
      field: "counterPriceCents"
    })
  if (party === "buyer") {
    return price >= r.currentPriceCents
      ? new InvalidOffer({
          message: `a counter must be below the seller's ask of ${r.currentPriceCents} cents (accept it instead)`,
          field: "counterPriceCents"
        })
      : undefined
  }
  if (r.round + 1 >= MAX_ROUNDS)
    return new InvalidOffer({ message: `round ${MAX_ROUNDS} is the last: accept or reject`, field: "action" })
  const ceiling = r.sellerAskCents ?? r.listPriceCents
  return price <= r.currentPriceCents || price > ceiling
    ? new InvalidOffer({
        message: `a seller counter must be above the buyer's offer of ${r.currentPriceCents} and at most ${ceiling} cents`,
        field: "counterPriceCents"
      })
    : undefined
}
