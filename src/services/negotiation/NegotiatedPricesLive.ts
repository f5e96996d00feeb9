// The commerce port NegotiatedPrices, answered by the Negotiations service: a purchase redeems an
// accepted negotiation once and gives it back on compensation.
import { Effect, Layer } from "effect"
import { NegotiatedPrices, type NegotiatedPricesService } from "../purchases/NegotiatedPrices.js"
import { Negotiations } from "./Negotiation.js"

export const NegotiatedPricesLive = Layer.effect(
  NegotiatedPrices,
  Effect.gen(function* () {
    const n = yield* Negotiations
    return {
      redeem: (input) => n.redeem(input),
      release: (negotiationId, usedBy) => n.release(negotiationId, usedBy)
    } satisfies NegotiatedPricesService
  })
)
