// DelegatedPayments: the port that charges a delegated payment token, such as an Agentic Commerce
// Protocol Shared Payment Token (docs/acp.md, "Payment handlers"), and refunds a charge whose
// purchase could not be made. Adapters: src/layers/payments/DelegatedPayments.{fake,stripe}.ts,
// chosen by PAYMENTS as the PaymentProcessor is.
import { Context, type Effect } from "effect"
import type { CardDeclined, ProcessorUnavailable } from "../../schema/payments/payments.js"

export interface DelegatedCharge {
  /** The delegated token (`spt_…`). */
  readonly token: string
  readonly amountCents: number
  /** Lowercase ISO currency code. */
  readonly currency: string
  readonly description: string
  readonly metadata: Readonly<Record<string, string>>
  /** Passed to the processor: the same key is the same charge. One per attempt. */
  readonly idempotencyKey: string
}

export interface DelegatedPaymentsService {
  /** The processor's name, as ACP's `psp`. */
  readonly psp: "fake" | "stripe"
  /** Charges the token; the processor's charge id. */
  readonly charge: (
    request: DelegatedCharge
  ) => Effect.Effect<{ readonly chargeId: string }, CardDeclined | ProcessorUnavailable>
  /** Refunds a charge in full (its purchase was not made). */
  readonly refund: (chargeId: string, idempotencyKey: string) => Effect.Effect<void, ProcessorUnavailable>
}

export class DelegatedPayments extends Context.Service<DelegatedPayments, DelegatedPaymentsService>()(
  "agent-commerce/DelegatedPayments"
) {}
