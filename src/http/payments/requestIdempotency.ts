// The request's Idempotency-Key and its scope, as the global middleware set them: read here, in
// the HTTP layer, and handed to the payments methods that open a processor checkout.
import { Effect } from "effect"
import { currentIdempotencyKey, currentIdempotencyScope } from "../../services/idempotency/Idempotency.js"
import type { CheckoutIdempotency } from "../../services/payments/checkout.js"

export const requestIdempotency: Effect.Effect<CheckoutIdempotency> = Effect.map(
  Effect.zip(currentIdempotencyKey, currentIdempotencyScope),
  ([key, scope]) => ({ key, scope })
)
