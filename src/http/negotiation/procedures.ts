// Negotiation on the tRPC wire, for both parties: commerce.negotiations (a seller's inbox is
// role=seller, status=awaiting_seller) and commerce.respondNegotiation (accept, reject or counter on
// your turn). A negotiation is an agent's, so these take a key (a dashboard session has no agent).
import { Effect, Schema } from "effect"
import { Negotiation, NegotiationPage, RespondBody } from "../../schema/negotiation/negotiation.js"
import { NegotiationsQuery } from "../../schema/negotiation/query.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Negotiations } from "../../services/negotiation/Negotiation.js"
import { Id } from "../commerce/params.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { authenticated, mutation, query, type Procedure } from "../trpc/procedure.js"

/** The calling key, with its agent. */
const agentCaller = Effect.flatMap(CurrentCaller, (caller) =>
  caller.agentId === undefined
    ? Effect.fail(new InvalidInput({ message: "negotiations are an agent's: call with its key", field: "agentId" }))
    : Effect.succeed({ ...caller, agentId: caller.agentId })
)

export const negotiationProcedures = {
  "commerce.negotiations": query({
    description: "Your negotiations, newest first; role=seller&status=awaiting_seller lists those waiting for you",
    access: authenticated("commerce:read"),
    output: NegotiationPage,
    input: NegotiationsQuery,
    handler: (params) =>
      Effect.flatMap(agentCaller, (caller) => Effect.flatMap(Negotiations, (n) => n.list(caller.agentId, params)))
  }),
  "commerce.respondNegotiation": mutation({
    description: "Accept, reject or counter on your turn, as the buyer or (with commerce:sell) the seller",
    access: authenticated("commerce:negotiate"),
    output: Negotiation,
    input: Schema.Struct({ id: Id, ...RespondBody.fields }),
    handler: Effect.fnUntraced(function* ({ id, ...body }) {
      const caller = yield* agentCaller
      const keyed = yield* requestIdempotency
      return yield* Effect.flatMap(Negotiations, (n) => n.respond(caller, id, body, keyed))
    })
  })
} satisfies Record<string, Procedure<Negotiations | CurrentCaller>>
