// A buy over A2A paid with x402 (the a2a-x402 extension, docs/a2a.md "Paying with x402"): the task
// the payment-required answer opens, kept so the payment message that follows (naming the task)
// pays exactly the call that was quoted, and so the task can be read back after it is paid.
import { Schema } from "effect"

/** The a2a-x402 extension, as declared on the card and activated in `A2A-Extensions`. */
export const A2A_X402_EXTENSION = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2"
/** Earlier URIs of the same extension a client may still activate (x402's A2A transport names v0.1). */
export const A2A_X402_EXTENSION_ALIASES: ReadonlyArray<string> = [
  "https://github.com/google-a2a/a2a-x402/v0.1",
  "https://google-a2a.github.io/A2A/extensions/payments/x402/v0.1",
  "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.1"
]
/** The metadata keys of the extension (section 7). */
export const X402_STATUS_KEY = "x402.payment.status"
export const X402_REQUIRED_KEY = "x402.payment.required"
export const X402_PAYLOAD_KEY = "x402.payment.payload"
export const X402_RECEIPTS_KEY = "x402.payment.receipts"
export const X402_ERROR_KEY = "x402.payment.error"

/** A task not paid within this long is expired (its quote is stale); its row is then removed. */
export const X402_TASK_TTL_MS = 60 * 60 * 1000
/**
 * How long an authorization submitted for a task holds it while it has no payment yet (being
 * verified and settled): another authorization for the task waits this long, so two are never
 * settled at once. One refused is taken off its task at once; this bounds only a crash mid-attempt.
 */
export const X402_SUBMISSION_LEASE_MS = 60 * 1000

/**
 * Where a task stands before its payment decides it: waiting for a payment, one submitted (the
 * payment then says the rest), or ended unpaid — declined by the payer (`payment-rejected`, or
 * `canceled` by CancelTask), refused by the owner's policy before any settle (`refused`), or not
 * paid within X402_TASK_TTL_MS (`expired`).
 */
export const X402TaskState = Schema.Literals([
  "payment-required",
  "payment-submitted",
  "payment-rejected",
  "canceled",
  "refused",
  "expired"
])
export type X402TaskState = typeof X402TaskState.Type

export const X402TaskRecord = Schema.Struct({
  /** `x402t_…`: unguessable, so a keyless payer's task is read by whoever holds its id alone. */
  id: Schema.String,
  /** The keyed caller that opened it; null for a keyless payer. */
  agentId: Schema.NullOr(Schema.String),
  serviceId: Schema.String,
  tierId: Schema.NullOr(Schema.String),
  /** The paid call's request body, as sent to the route (the payment's fingerprint covers it). */
  body: Schema.String,
  state: X402TaskState,
  /** The authorization submitted for it (lower case), recorded before it is sent to be settled. */
  payer: Schema.NullOr(Schema.String),
  nonce: Schema.NullOr(Schema.String),
  /** The x402 payment once the route named it (PAYMENT-RESPONSE). */
  paymentId: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type X402TaskRecord = typeof X402TaskRecord.Type
