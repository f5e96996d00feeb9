// Opening a checkout: the processor session (outside any unit of work, with an idempotency key
// derived from the request's), then our pending record in one unit of work.
import { Clock, Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { CheckoutRecord, ProcessorUnavailable } from "../../schema/payments/payments.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Ids, Transactor } from "../platform/Db.js"
import {
  checkoutMetadata,
  type CheckoutIdempotency,
  type NewCheckout,
  pendingCheckout,
  processorIdempotencyKey
} from "./checkout.js"
import { PaymentProcessor } from "./PaymentProcessor.js"
import { PaymentsStore } from "./PaymentsStore.js"

/** A call without a request key opens a fresh processor session each time. */
const idempotencyOf = (given: CheckoutIdempotency | undefined): Effect.Effect<CheckoutIdempotency> =>
  Effect.succeed(given ?? { key: undefined, scope: "" })

export type OpenCheckout = (
  input: NewCheckout,
  idempotency: CheckoutIdempotency | undefined,
  /** Written with the record in its unit of work, when this call inserted it. */
  extra?: (checkout: CheckoutRecord) => Effect.Effect<void, StorageUnavailable>
) => Effect.Effect<CheckoutRecord, ProcessorUnavailable | StorageUnavailable>

/**
 * Opens a processor session and records it. The processor call happens outside any unit of
 * work; a retry with the same Idempotency-Key gets the same processor session back.
 */
export const makeOpenCheckout = Effect.gen(function* () {
  const store = yield* PaymentsStore
  const processor = yield* PaymentProcessor
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const config = yield* AppConfig
  const successUrl = `${config.baseUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`
  const cancelUrl = `${config.baseUrl}/checkout/cancelled?session_id={CHECKOUT_SESSION_ID}`

  const openCheckout: OpenCheckout = Effect.fnUntraced(function* (input, given, extra) {
    const idempotency = yield* idempotencyOf(given)
    const idempotencyKey = processorIdempotencyKey(input, idempotency) ?? (yield* ids.uuid)
    const session = yield* processor.createCheckoutSession({
      mode: input.mode,
      amountCents: input.amountCents,
      currency: input.currency,
      description: input.description,
      successUrl,
      cancelUrl,
      metadata: checkoutMetadata(input),
      customerEmail: input.customerEmail,
      idempotencyKey
    })
    const record = pendingCheckout(input, session, new Date(yield* Clock.currentTimeMillis).toISOString())
    return yield* atomically(
      Effect.gen(function* () {
        const stored = yield* store.insertCheckout(record)
        if (extra && stored.inserted) yield* extra(stored.checkout)
        return stored.checkout
      })
    )
  })
  return openCheckout
})
