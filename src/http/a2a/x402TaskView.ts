// How an A2A task of a buy paid with x402 reads (docs/a2a.md "Paying with x402"): its A2A state and
// the a2a-x402 extension's metadata (status, required, receipts, error), from the task's row and,
// once a payment was submitted, from that payment.
import {
  X402_ERROR_KEY,
  X402_PAYLOAD_KEY,
  X402_RECEIPTS_KEY,
  X402_REQUIRED_KEY,
  X402_STATUS_KEY,
  X402_SUBMISSION_LEASE_MS,
  X402_TASK_TTL_MS,
  type X402TaskRecord
} from "../../schema/a2a/x402Task.js"
import type { A2aX402, X402TaskPayment } from "./calls.js"
import type { Json } from "./rpc.js"

/** The payment field, as the errors name it. */
export const PAYLOAD_FIELD = `message.metadata["${X402_PAYLOAD_KEY}"]`

/** a2a-x402's error codes (section 9.1) for an x402 failure reason. */
export const errorCodeOf = (reason: string) =>
  /insufficient/.test(reason)
    ? "INSUFFICIENT_FUNDS"
    : /valid_before|valid_after|expired/.test(reason)
      ? "EXPIRED_PAYMENT"
      : /nonce/.test(reason)
        ? "DUPLICATE_NONCE"
        : /network/.test(reason)
          ? "NETWORK_MISMATCH"
          : /signature/.test(reason)
            ? "INVALID_SIGNATURE"
            : /value|amount|requirements|recipient|token_name/.test(reason)
              ? "INVALID_AMOUNT"
              : "SETTLEMENT_FAILED"

/** What a task says at one moment: its A2A state, the extension's status, and what rides with them. */
export interface TaskView {
  readonly state: string
  readonly x402Status: string
  readonly text: string
  readonly required?: Json
  readonly error?: string
  readonly receipts: ReadonlyArray<Json>
  readonly data?: unknown
  readonly output?: unknown
  readonly transactionId?: string | null
}

/** The Task (A2A 1.0 proto JSON) of an x402 buy as it stands. */
export const x402TaskOf = (task: X402TaskRecord, view: TaskView, metadata: Json = {}) => ({
  id: task.id,
  contextId: task.id,
  status: {
    state: view.state,
    message: {
      messageId: `${task.id}.${view.x402Status}.${view.state}`,
      contextId: task.id,
      taskId: task.id,
      role: "ROLE_AGENT",
      parts: [
        { text: view.text, mediaType: "text/plain" },
        ...(view.data === undefined ? [] : [{ data: view.data, mediaType: "application/json" }])
      ],
      metadata: {
        [X402_STATUS_KEY]: view.x402Status,
        ...(view.required === undefined ? {} : { [X402_REQUIRED_KEY]: view.required }),
        ...(view.error === undefined ? {} : { [X402_ERROR_KEY]: view.error }),
        [X402_RECEIPTS_KEY]: view.receipts
      }
    },
    timestamp: task.updatedAt
  },
  artifacts:
    view.output === undefined
      ? []
      : [
          {
            artifactId: "output",
            name: "output",
            description: "The paid call's output.",
            parts: [{ data: view.output, mediaType: "application/json" }]
          }
        ],
  metadata: {
    skill: "buy",
    paidWith: "x402",
    serviceId: task.serviceId,
    tierId: task.tierId,
    ...(task.paymentId === null ? {} : { paymentId: task.paymentId }),
    ...(view.transactionId ? { transactionId: view.transactionId } : {}),
    ...metadata
  }
})

/** The task as its payment stands (the payment exists: it was claimed). */
const paidView = (payment: X402TaskPayment): TaskView => {
  const { view, settle } = payment
  const base = { receipts: [settle], data: view, transactionId: view.transactionId }
  switch (view.status) {
    case "settling":
      return {
        ...base,
        state: "TASK_STATE_WORKING",
        x402Status: "payment-submitted",
        text: "Your payment is being verified and settled."
      }
    case "settlement_pending":
      return {
        ...base,
        state: "TASK_STATE_WORKING",
        x402Status: "payment-verified",
        text: "Your payment was sent to be settled and the answer was lost: do not pay again. It is reconciled from the chain, and the task follows."
      }
    case "held":
      return {
        ...base,
        state: "TASK_STATE_WORKING",
        x402Status: "payment-completed",
        text: "Paid, and held in escrow while the seller works: paid to the seller when it delivers, refunded to you on the chain if it fails or misses its deadline."
      }
    case "settled":
      return {
        ...base,
        state: "TASK_STATE_COMPLETED",
        x402Status: "payment-completed",
        text: "Paid and delivered: the output is the task's artifact.",
        output: view.output ?? null
      }
    case "refunding":
    case "refunded":
      return {
        ...base,
        state: "TASK_STATE_FAILED",
        x402Status: "payment-completed",
        text:
          view.status === "refunded"
            ? `The seller could not serve the call: your payment was refunded on the chain (transaction ${String(view.refundTransaction)}).`
            : "The seller could not serve the call: your payment is being refunded on the chain."
      }
    case "kept_as_credits":
      return {
        ...base,
        state: "TASK_STATE_FAILED",
        x402Status: "payment-completed",
        text: "The seller could not serve the call: its price went back to your agent's wallet as credits."
      }
    default:
      return {
        ...base,
        state: "TASK_STATE_FAILED",
        x402Status: "payment-failed",
        error: "SETTLEMENT_FAILED",
        text: "The payment was not settled (its authorization expired unused): nothing was charged."
      }
  }
}

export const ended = (x402Status: string, text: string, state = "TASK_STATE_FAILED", error?: string): TaskView => ({
  state,
  x402Status,
  text,
  receipts: [],
  ...(error === undefined ? {} : { error })
})
const EXPIRED = ended(
  "payment-failed",
  "Not paid within an hour: send the buy again for a fresh quote.",
  "TASK_STATE_FAILED",
  "EXPIRED_PAYMENT"
)

/** What paying the call asks now: the task waiting for a payment (or ended, when it can no longer be bought). */
const requiredView = async (x402: A2aX402, task: X402TaskRecord, text: string, extra: Partial<TaskView> = {}) => {
  // As the paid call words its own 402 (PAYMENT-REQUIRED.error), unless a refusal says more.
  const required = await x402.required(task, extra.error ?? "payment_required")
  return required === undefined
    ? ended("payment-failed", "This call can no longer be bought: nothing was charged.")
    : { state: "TASK_STATE_INPUT_REQUIRED", x402Status: "payment-required", text, required, receipts: [], ...extra }
}

export const PAY_TEXT = (task: X402TaskRecord) =>
  `Payment is required for ${task.serviceId}${task.tierId === null ? "" : ` (${task.tierId})`}: sign one of ` +
  `x402.payment.required's accepts and send it as ${PAYLOAD_FIELD} in a message naming this task (taskId), ` +
  `with ${X402_STATUS_KEY} "payment-submitted".`

/** The task as it stands: read from its row and, once a payment was submitted, from that payment. */
export const viewOfX402Task = async (x402: A2aX402, task: X402TaskRecord): Promise<TaskView | "unavailable"> => {
  switch (task.state) {
    case "payment-rejected":
      return ended("payment-rejected", "You declined the payment: nothing was charged.")
    case "canceled":
      return ended("payment-rejected", "Cancelled before any payment: nothing was charged.", "TASK_STATE_CANCELED")
    case "refused":
      return ended(
        "payment-failed",
        "Refused before any money moved (the owner's policy, or the seller): nothing was charged.",
        "TASK_STATE_FAILED",
        "SETTLEMENT_FAILED"
      )
    case "expired":
      return EXPIRED
    case "payment-required":
      return x402.now() - Date.parse(task.createdAt) > X402_TASK_TTL_MS
        ? EXPIRED
        : requiredView(x402, task, PAY_TEXT(task))
    case "payment-submitted": {
      const payment = await x402.payment(task)
      if (payment === "unavailable") return payment
      if (payment !== undefined) return paidView(payment)
      // Submitted and not yet a payment: being tried, or (past the lease) never tried to the end.
      return x402.now() - Date.parse(task.updatedAt) < X402_SUBMISSION_LEASE_MS
        ? {
            state: "TASK_STATE_WORKING",
            x402Status: "payment-submitted",
            text: "Your payment is being verified and settled.",
            receipts: []
          }
        : requiredView(x402, task, `The payment submitted was not settled: sign again. ${PAY_TEXT(task)}`)
    }
  }
}
