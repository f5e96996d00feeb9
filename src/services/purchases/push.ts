// The push protocol (docs/fulfilment.md): what one push carries and how it is signed, what the
// seller's answer means, when the next attempt goes; and one attempt, claimed in the store under a
// lease so two processes do not push the same order at the same moment.
import { Clock, Effect, Schema } from "effect"
import { DeliverBody, FailBody, type Order } from "../../schema/orders/orders.js"
import type { StoredFulfilment } from "../../schema/commerce/services.js"
import type { OffersService } from "./Offers.js"
import type { TransactorService } from "../platform/Db.js"
import { signature } from "../webhooks/signing.js"
import type { WebhookResponse, WebhookTransportService } from "../webhooks/WebhookTransport.js"
import type { OrdersService } from "./Orders.js"
import type { OrderStoreService } from "./OrderStore.js"

/** Pushes of one seller in flight at once in a process: a slow endpoint holds at most these. */
export const PUSH_PER_SELLER = 4
/** Pushes in flight at once in a process, all sellers. */
export const PUSH_MAX_IN_FLIGHT = 32
/** Retry delays: 1 s after the first failed attempt, doubling, never more than 30 s. */
export const PUSH_BACKOFF_BASE_MS = 1_000
export const PUSH_BACKOFF_CAP_MS = 30_000
/**
 * A claimed attempt is its process's for this long (the transport gives up after 10 s); a process
 * that dies mid-attempt leaves the order to be pushed again once it ends.
 */
export const PUSH_LEASE_MS = 30_000

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

export interface PushDeps {
  readonly atomically: TransactorService["atomically"]
  readonly store: Pick<OrderStoreService, "getForUpdate" | "recordPushAttempt">
  readonly orders: Pick<OrdersService, "deliver" | "fail">
  readonly offers: Pick<OffersService, "fulfilmentOf">
  readonly transport: Pick<WebhookTransportService, "send">
}

const iso = (ms: number) => new Date(ms).toISOString()

export const makePush = ({ atomically, store, orders, offers, transport }: PushDeps) => {
  /**
   * Takes the order's next attempt if it is still due: counted and leased in one unit of work, so a
   * second process reading the same due row finds it leased and leaves it.
   */
  const claim = Effect.fnUntraced(function* (orderId: string, now: number) {
    return yield* atomically(
      Effect.gen(function* () {
        const order = yield* store.getForUpdate(orderId)
        const push = order?.push
        if (order === undefined || order.status !== "pending" || push == null || push.acceptedAt !== null) return null
        if (push.nextAttemptAt === null || Date.parse(push.nextAttemptAt) > now) return null
        if (Date.parse(order.deadlineAt) <= now) return null // the sweeper expires it
        const attempts = push.attempts + 1
        yield* store.recordPushAttempt(order.id, {
          attempts,
          nextAttemptAt: iso(now + PUSH_LEASE_MS),
          acceptedAt: null,
          lastError: push.lastError
        })
        return { order, attempts }
      })
    )
  })

  /** Records an attempt that did not deliver, unless another process has claimed the order since (fenced by the count). */
  const settleAttempt = Effect.fnUntraced(function* (
    orderId: string,
    attempts: number,
    outcome: { accepted: boolean; error: string | null }
  ) {
    const now = yield* Clock.currentTimeMillis
    yield* atomically(
      Effect.gen(function* () {
        const order = yield* store.getForUpdate(orderId)
        if (order === undefined || order.status !== "pending" || order.push?.attempts !== attempts) return
        yield* store.recordPushAttempt(orderId, {
          attempts,
          nextAttemptAt: outcome.accepted ? null : iso(now + pushBackoff(attempts)),
          acceptedAt: outcome.accepted ? iso(now) : null,
          lastError: outcome.error
        })
      })
    )
  })

  const target = (fulfilment: StoredFulfilment | undefined): { url: string; secret: string } | string => {
    if (fulfilment === undefined) return "the service no longer exists"
    const { mode, url, secret } = fulfilment
    if (mode !== "push" || url === null || secret === null) return `the service is now fulfilled by ${mode}, not push`
    return { url, secret }
  }

  /** One attempt of one due order: claim, post, act on the answer. Never fails (a storage error waits for the lease). */
  const attempt = Effect.fnUntraced(
    function* (due: Order) {
      const claimed = yield* claim(due.id, yield* Clock.currentTimeMillis)
      if (claimed === null) return
      const { order, attempts } = claimed
      const to = target(yield* offers.fulfilmentOf(order.serviceId))
      if (typeof to === "string") return yield* settleAttempt(order.id, attempts, { accepted: false, error: to })
      const body = pushBody(order)
      const now = yield* Clock.currentTimeMillis
      const response = yield* transport.send({
        url: to.url,
        headers: pushHeaders(to.secret, order.id, now, body),
        body,
        keepBody: true
      })
      const outcome = readAnswer(response)
      switch (outcome._tag) {
        case "Accepted":
          return yield* settleAttempt(order.id, attempts, { accepted: true, error: null })
        case "Retry":
          return yield* settleAttempt(order.id, attempts, { accepted: false, error: outcome.error })
        case "Delivered":
        case "Failed": {
          const answered =
            outcome._tag === "Delivered"
              ? orders.deliver(order.sellerAgentId, order.id, outcome.body)
              : orders.fail(order.sellerAgentId, order.id, outcome.body)
          // A closed order (the seller answered otherwise through the API, or the deadline passed) keeps its outcome.
          yield* answered.pipe(
            Effect.catchTag("OrderClosed", () => Effect.void),
            Effect.catch((e) =>
              settleAttempt(order.id, attempts, {
                accepted: false,
                error: `the seller's answer was refused: ${e.message}`
              })
            )
          )
        }
      }
    },
    (effect, due) =>
      effect.pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning(`order push of ${due.id} failed; retried after its lease`, cause)
        )
      )
  )

  return { attempt }
}
