// PaymentProcessor: the port to the payment processor (hosted checkout sessions, signed events).
// Adapters: src/layers/payments/PaymentProcessor.{fake,stripe}.ts.
import { Context, type Effect } from "effect"
import type { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type {
  CheckoutMode,
  InvalidSignature,
  ProcessorEvent,
  ProcessorSession,
  ProcessorUnavailable
} from "../../schema/payments/payments.js"

export interface CheckoutSessionRequest {
  readonly mode: CheckoutMode
  readonly amountCents: number
  /** Lowercase ISO currency code. */
  readonly currency: string
  readonly description: string
  /** May contain `{CHECKOUT_SESSION_ID}`, replaced by the processor. */
  readonly successUrl: string
  readonly cancelUrl: string
  readonly metadata: Readonly<Record<string, string>>
  readonly customerEmail?: string
  /** Passed to the processor: the same key returns the same session. */
  readonly idempotencyKey: string
}

/** The payment processor: hosted checkout sessions and signed events. */
export interface PaymentProcessorService {
  readonly kind: "fake" | "stripe"
  readonly createCheckoutSession: (
    request: CheckoutSessionRequest
  ) => Effect.Effect<
    { readonly sessionId: string; readonly checkoutUrl: string },
    ProcessorUnavailable | StorageUnavailable
  >
  readonly retrieveSession: (
    sessionId: string
  ) => Effect.Effect<ProcessorSession, NotFound | ProcessorUnavailable | StorageUnavailable>
  /** Verifies `Stripe-Signature` over the exact raw body, then parses the event. */
  readonly verifyEvent: (
    rawBody: string,
    signatureHeader: string | undefined
  ) => Effect.Effect<ProcessorEvent, InvalidSignature | InvalidInput>
}

export class PaymentProcessor extends Context.Service<PaymentProcessor, PaymentProcessorService>()(
  "agent-commerce/PaymentProcessor"
) {}
