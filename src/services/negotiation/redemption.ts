// Using an accepted price: a purchase (a buy or a saga's quote) redeems it once, and gives it back
// when the purchase is undone.
import { Clock, Effect } from "effect"
import {
  canTransition,
  type Negotiation,
  NegotiationUnusable,
  type NegotiationRecord
} from "../../schema/negotiation/negotiation.js"
import { Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import { NegotiationStore } from "./NegotiationStore.js"
import { effectiveStatus, iso, notFound, toNegotiation } from "./policy.js"

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

export const makeRedemption = Effect.gen(function* () {
  const store = yield* NegotiationStore
  const { atomically } = yield* Transactor

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

  return { redeem, release } as const
})
