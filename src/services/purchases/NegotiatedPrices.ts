// NegotiatedPrices: the port through which a purchase redeems an accepted negotiation once and gives
// it back on compensation. The negotiation domain answers it (negotiation/NegotiatedPricesLive.ts);
// NoNegotiatedPrices answers "no negotiated price" for stacks built without negotiations.
import { Context, Effect, Layer } from "effect"
import { NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { NegotiationUnusable } from "../../schema/negotiation/negotiation.js"

export interface NegotiatedPricesService {
  readonly redeem: (input: {
    readonly agentId: string
    readonly negotiationId: string
    readonly serviceId: string
    readonly tierId: string
    readonly usedBy: string
  }) => Effect.Effect<{ readonly priceCents: number }, NotFound | NegotiationUnusable | StorageUnavailable>
  readonly release: (negotiationId: string, usedBy: string) => Effect.Effect<boolean, StorageUnavailable>
}

export class NegotiatedPrices extends Context.Service<NegotiatedPrices, NegotiatedPricesService>()(
  "agent-commerce/NegotiatedPrices"
) {}

/** No negotiations on this stack: every negotiation id is unknown, nothing is ever given back. */
export const NoNegotiatedPrices = Layer.succeed(NegotiatedPrices, {
  redeem: (input) =>
    Effect.fail(
      new NotFound({
        message: `negotiation ${input.negotiationId} not found`,
        resource: "negotiation",
        id: input.negotiationId
      })
    ),
  release: () => Effect.succeed(false)
})
