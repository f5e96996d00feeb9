// FakeCheckout: the fake processor's hosted page (what it shows, and what Pay / Cancel / Renew do).
// Provided by src/layers/payments/PaymentProcessor.fake.ts; PaymentProcessor.stripe.ts disables it.
import { Context, type Effect } from "effect"
import type { Conflict, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type { FakeDelivery, FakeSession } from "./FakeProcessorStore.js"

/** The fake processor's hosted page: what it shows, and what Pay / Cancel do. */
export interface FakeCheckoutOutcome {
  /** Where the buyer's browser goes next (the checkout's success or cancel address). */
  readonly redirectUrl: string
  /** The signed event to deliver to the webhook handler (absent when nothing changed). */
  readonly delivery: FakeDelivery | undefined
  readonly session: FakeSession
}

/** Who asks the fake processor for an owner-only action: the account behind a key or dashboard session. */
export interface FakeRequester {
  readonly accountId: string
}

export interface FakeCheckoutService {
  /** False under PAYMENTS=stripe: the fake pages answer 404. */
  readonly enabled: boolean
  /** The session (an open session past its expiry is expired first, emitting its event). */
  readonly view: (
    sessionId: string
  ) => Effect.Effect<
    { readonly session: FakeSession; readonly delivery: FakeDelivery | undefined },
    NotFound | StorageUnavailable
  >
  /** Completes the session: paid, or failed with `failure` (a test card's decline code). */
  readonly pay: (
    sessionId: string,
    options: { readonly failure?: string }
  ) => Effect.Effect<FakeCheckoutOutcome, NotFound | Conflict | StorageUnavailable>
  readonly cancel: (sessionId: string) => Effect.Effect<FakeCheckoutOutcome, NotFound | Conflict | StorageUnavailable>
  /**
   * The next period of a paid subscription: an `invoice.paid` event (billing_reason
   * subscription_cycle). Only for the account the subscription belongs to (another account gets
   * NotFound), and once per billing period: renewal n is due `n` periods after the payment
   * (FAKE_BILLING_PERIOD_SECONDS); earlier is a Conflict naming when it is due.
   */
  readonly renew: (
    sessionId: string,
    requester: FakeRequester
  ) => Effect.Effect<FakeCheckoutOutcome, NotFound | Conflict | StorageUnavailable>
  /**
   * The signed events sent for a session. A session opened for an account (plans, recharges,
   * acquisitions) shows them to that account only (NotFound to anyone else); an anonymous one
   * (a knowledge purchase) to whoever holds its id, as its hosted page is.
   */
  readonly deliveries: (
    sessionId: string,
    requester: FakeRequester | undefined
  ) => Effect.Effect<ReadonlyArray<FakeDelivery>, NotFound | StorageUnavailable>
}

export class FakeCheckout extends Context.Service<FakeCheckout, FakeCheckoutService>()("agent-commerce/FakeCheckout") {}
