// Payment procedures: subscription.createCheckout (authenticated, spec §4.2) and the knowledge
// purchases publicApi.purchaseAccess / publicApi.purchaseStatus (public, spec §4.5).
import { Effect } from "effect"
import {
  CheckoutStarted,
  CreateSubscriptionCheckoutInput,
  PurchaseAccessInput,
  PurchaseStatus,
  PurchaseStatusInput
} from "../../schema/payments/payments.js"
import { AccessContentInput, KnowledgeContent } from "../../schema/knowledge/knowledge.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import type { Transactor } from "../../services/platform/Db.js"
import { Payments } from "../../services/payments/Payments.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { limitAnonymousWrite } from "../anonymousLimit.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { authenticated, mutation, publicAccess, query, type Procedure } from "../trpc/procedure.js"

export const paymentProcedures = {
  "subscription.createCheckout": mutation({
    description:
      "Create a payment-processor checkout session for a plan. The plan's monthly credits go to the calling key's agent, or (dashboard session) to the named agentId of the account",
    access: authenticated(),
    output: CheckoutStarted,
    input: CreateSubscriptionCheckoutInput,
    handler: Effect.fnUntraced(function* (input) {
      const caller = yield* CurrentCaller
      // A key's requests are already rate-limited; a dashboard session's checkouts count as anonymous writes.
      if (caller.via === "session") yield* limitAnonymousWrite
      const idempotency = yield* requestIdempotency
      return yield* Effect.flatMap(Payments, (p) => p.createSubscriptionCheckout(caller, input, idempotency))
    })
  }),
  "publicApi.purchaseAccess": mutation({
    description: "Buy access to a knowledge product: returns the hosted checkout address and its session id",
    access: publicAccess,
    output: CheckoutStarted,
    input: PurchaseAccessInput,
    handler: Effect.fnUntraced(function* (input) {
      yield* limitAnonymousWrite
      const idempotency = yield* requestIdempotency
      return yield* Effect.flatMap(Payments, (p) => p.purchaseAccess(input, idempotency))
    })
  }),
  "publicApi.purchaseStatus": query({
    description: "Where a knowledge purchase stands (pending, paid, expired, failed), by checkout session id",
    access: publicAccess,
    output: PurchaseStatus,
    input: PurchaseStatusInput,
    handler: (input) => Effect.flatMap(Payments, (p) => p.purchaseStatus(input.sessionId))
  }),
  "publicApi.accessContent": query({
    description:
      "Read a paid knowledge product: its access id (from purchaseStatus) and the checkout session id it was paid in",
    access: publicAccess,
    output: KnowledgeContent,
    input: AccessContentInput,
    handler: (input) => Effect.flatMap(Payments, (p) => p.accessContent(input.accessId, input.sessionId))
  })
} satisfies Record<string, Procedure<Payments | CurrentCaller | Transactor | RateLimiter>>
