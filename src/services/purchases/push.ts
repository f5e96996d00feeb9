// The push protocol (docs/fulfilment.md), pure: what one push carries and how it is signed, what the
// seller's answer means, when the next attempt goes, and where it goes. The dispatcher that claims and
// sends the attempts is PushWorker.ts.
import { Schema } from "effect"
import { DeliverBody, FailBody, type Order } from "../../schema/orders/orders.js"
import type { StoredFulfilment } from "../../schema/commerce/services.js"
import { batchLeaseMs } from "../webhooks/policy.js"
import { signature } from "../webhooks/signing.js"
import type { WebhookResponse } from "../webhooks/WebhookTransport.js"

/** Pushes of one seller in flight at once in a process: a slow endpoint holds at most these. */
export const PUSH_PER_SELLER = 4
/** Pushes in flight at once in a process, all sellers. */
export const PUSH_MAX_IN_FLIGHT = 32
/** Retry delays: 1 s after the first failed attempt, doubling, never more than 30 s. */
export const PUSH_BACKOFF_BASE_MS = 1_000
export const PUSH_BACKOFF_CAP_MS = 30_000
/**
 * A claimed attempt is its process's for this long: the transport's timeout (WEBHOOK_TIMEOUT_MS, 10 s
 * by default, up to 60 s) and the sends' margin for recording the answer (a batch of one: batchLeaseMs), so no other process pushes the order
 * while an attempt can still be in flight; a process that dies mid-attempt leaves the order to be
 * pushed again once it ends. (It was a fixed 30 s: shorter than an attempt under a timeout above 30 s.)
 */
export const pushLeaseMs = (transportTimeoutMs: number): number => batchLeaseMs(transportTimeoutMs, 1, 1)

/** The delay before the next attempt once `attempts` attempts have failed. */
export const pushBackoff = (attempts: number): number =>
  Math.min(PUSH_BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1), PUSH_BACKOFF_CAP_MS)

/** The body: the same bytes on every attempt of an order. */
export const pushBody = (order: Order): string =>
  JSON.stringify({
    type: "order.created",
    data: {
      orderId: order.id,
      serviceId: order.serviceId,
      tierId: order.tierId,
      input: order.input,
      priceCents: order.priceCents,
      currency: "USD",
      buyerAgentId: order.buyerAgentId,
      deadlineAt: order.deadlineAt
    }
  })

/** Standard Webhooks headers with the service's fulfilment secret; the order id is the webhook id. */
export const pushHeaders = (secret: string, orderId: string, nowMs: number, body: string): Record<string, string> => {
  const ts = Math.floor(nowMs / 1000)
  return {
    "content-type": "application/json",
    "user-agent": "agent-commerce-orders/1.0",
    "webhook-id": orderId,
    "webhook-timestamp": String(ts),
    "webhook-signature": signature(secret, orderId, ts, body)
  }
}

const InlineAnswer = Schema.Union([
  Schema.Struct({ status: Schema.Literal("delivered"), ...DeliverBody.fields }),
  Schema.Struct({ status: Schema.Literal("failed"), ...FailBody.fields })
])
const decodeAnswer = Schema.decodeUnknownResult(Schema.fromJsonString(InlineAnswer))

/** What the seller's answer means for the order. */
export type PushOutcome =
  | { readonly _tag: "Delivered"; readonly body: DeliverBody }
  | { readonly _tag: "Failed"; readonly body: FailBody }
  | { readonly _tag: "Accepted" }
  | { readonly _tag: "Retry"; readonly error: string }

export const readAnswer = (response: WebhookResponse): PushOutcome => {
  if (response.status === 202) return { _tag: "Accepted" }
  if (response.status !== 200 || !response.ok || response.body === undefined) {
    return { _tag: "Retry", error: response.error ?? `HTTP ${response.status}: only 200 or 202 answers a push` }
  }
  const answer = decodeAnswer(response.body)
  if (answer._tag === "Failure") {
    return {
      _tag: "Retry",
      error: `HTTP 200 with a body that is not {"status":"delivered","output":…} or {"status":"failed","error":"…"}: ${answer.failure.message.slice(0, 300)}`
    }
  }
  const { status, ...rest } = answer.success
  return status === "delivered"
    ? { _tag: "Delivered", body: rest as DeliverBody }
    : { _tag: "Failed", body: rest as FailBody }
}

/** Where an order's next attempt goes (the service's fulfilment as it is now), or why it cannot go. */
export const pushTarget = (fulfilment: StoredFulfilment | undefined): { url: string; secret: string } | string => {
  if (fulfilment === undefined) return "the service no longer exists"
  const { mode, url, secret } = fulfilment
  if (mode !== "push" || url === null || secret === null) return `the service is now fulfilled by ${mode}, not push`
  return { url, secret }
}
