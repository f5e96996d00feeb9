// ACP order events (docs/acp.md "Order events"): the agent platform's receiver (ACP_ORDER_WEBHOOK_URL)
// is told of each completed checkout session's order — `order_create` first, then `order_update`
// whenever it moves (its status, a line delivered, a refund) — with the full Order as GET renders it, signed as the 2026-04-17
// webhook document asks (`Merchant-Signature: t=<unix seconds>,v1=<HMAC-SHA256 hex of "t.body">`),
// through the webhooks' transport (URL policy, SSRF guard), retried with backoff. Notices are kept in
// AcpOrderNoticeStore, so a restart forgets none.
import { createHmac } from "node:crypto"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import type { AcpOrderNotice } from "../../schema/acp/sessions.js"
import { AcpCheckout } from "./AcpCheckout.js"
import { AcpOrderNoticeStore } from "./AcpOrderNoticeStore.js"
import { AppConfig } from "../platform/AppConfig.js"
import { WebhookTransport } from "../webhooks/WebhookTransport.js"
import { batchLeaseMs } from "../webhooks/policy.js"
import { orderOf } from "./order.js"
// The sellers' order pushes' schedule: 1 s, 2 s, 4 s … at most 30 s.
import { pushBackoff } from "../purchases/push.js"

/** How often the worker looks for due notices, and how many it takes at once. */
export const ORDER_EVENTS_TICK_MS = 500
export const ORDER_EVENTS_BATCH = 20
/** Events sent at once in a pass; a claimed batch is leased for all of its waves (batchLeaseMs). */
export const ORDER_EVENTS_CONCURRENCY = 8
/** How long a pass's claimed notices are its own, under the transport's timeout. */
export const orderEventsLeaseMs = (timeoutMs: number): number =>
  batchLeaseMs(timeoutMs, ORDER_EVENTS_BATCH, ORDER_EVENTS_CONCURRENCY)
/** How often an order that has not moved is looked at again. */
export const ORDER_EVENTS_RECHECK_MS = 2_000
/** Events sent for one status without a 2xx before the notice is given up. */
export const ORDER_EVENTS_ATTEMPTS = 8
/**
 * Order statuses after which the worker stops looking. A completed order can still be refunded (a
 * dispute resolved for the buyer): the refund makes its notice due again (acp/AcpRefundListeners.ts)
 * and the order is sent once more, as an `order_update` carrying the refund adjustment.
 */
export const FINAL_ORDER_STATUSES: ReadonlySet<string> = new Set(["completed", "canceled"])

/**
 * The order's state as the receiver is told it, one key per event: its status, then how many lines
 * were delivered while others were not (an order of several items moves line by line), then its
 * refunds (`.refunded`, `.refunded-2` …). A one-item order's keys are `<status>` and
 * `<status>.refunded`, as they were before sessions held several items.
 */
export const stateKey = (order: ReturnType<typeof orderOf>) => {
  const delivered = order.line_items.filter((l) => l.quantity.fulfilled > 0).length
  const refunds = order.adjustments.filter((a) => a.type === "refund").length
  const partly = delivered > 0 && delivered < order.line_items.length ? `.delivered-${delivered}` : ""
  return `${order.status}${partly}${refunds === 0 ? "" : refunds === 1 ? ".refunded" : `.refunded-${refunds}`}`
}

/** The key a notice acknowledged last (a notice kept before stateKey: its status and whether refunded). */
const notifiedKey = (n: AcpOrderNotice) =>
  n.notifiedState ??
  (n.notifiedStatus === null ? null : `${n.notifiedStatus}${n.notifiedRefund === true ? ".refunded" : ""}`)

const iso = (ms: number) => new Date(ms).toISOString()

/** The spec's signature header: `t=<unix seconds>,v1=<HMAC-SHA256 hex of "<t>.<body>">`. */
export const merchantSignature = (secret: string, unixSeconds: number, body: string) =>
  `t=${unixSeconds},v1=${createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex")}`

/** One claimed notice: the order read, sent when its status moved, the notice moved on. */
const noticeOne = Effect.fnUntraced(
  function* (n: AcpOrderNotice, url: string, secret: string) {
    const store = yield* AcpOrderNoticeStore
    const config = yield* AppConfig
    const view = yield* (yield* AcpCheckout).view(n.sessionId)
    const now = yield* Clock.currentTimeMillis
    // The claim's lease: a write is dropped when a refund reopened the notice since (store.update).
    const leasedUntil = n.nextAttemptAt ?? ""
    if (view === undefined)
      return yield* store.update(
        { ...n, nextAttemptAt: null, doneAt: iso(now), lastError: "the session is gone" },
        leasedUntil
      )
    const order = orderOf(view, config.baseUrl)
    const key = stateKey(order)
    if (key === notifiedKey(n)) {
      const final = FINAL_ORDER_STATUSES.has(order.status)
      return yield* store.update(
        {
          ...n,
          nextAttemptAt: final ? null : iso(now + ORDER_EVENTS_RECHECK_MS),
          doneAt: final ? iso(now) : null
        },
        leasedUntil
      )
    }
    const body = JSON.stringify({ type: n.notifiedStatus === null ? "order_create" : "order_update", data: order })
    const unix = Math.floor(now / 1000)
    const sent = yield* (yield* WebhookTransport).send({
      url,
      headers: {
        "content-type": "application/json",
        "merchant-signature": merchantSignature(secret, unix, body),
        // One event per state (stateKey), retried under one id: the refund's update is not the completion's.
        "request-id": `${n.sessionId}.${key}.${n.attempts + 1}`,
        timestamp: iso(now)
      },
      body
    })
    const at = yield* Clock.currentTimeMillis
    if (sent.ok) {
      const final = FINAL_ORDER_STATUSES.has(order.status)
      return yield* store.update(
        {
          ...n,
          notifiedStatus: order.status,
          notifiedRefund: order.adjustments.some((a) => a.type === "refund"),
          notifiedState: key,
          attempts: 0,
          lastError: null,
          nextAttemptAt: final ? null : iso(at + ORDER_EVENTS_RECHECK_MS),
          doneAt: final ? iso(at) : null
        },
        leasedUntil
      )
    }
    const attempts = n.attempts + 1
    const givenUp = attempts >= ORDER_EVENTS_ATTEMPTS
    return yield* store.update(
      {
        ...n,
        attempts,
        lastError: sent.error ?? `answered ${sent.status ?? "nothing"}`,
        nextAttemptAt: givenUp ? null : iso(at + pushBackoff(attempts)),
        doneAt: givenUp ? iso(at) : null
      },
      leasedUntil
    )
  },
  (effect, n) =>
    effect.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning(`acp order event for ${n.sessionId} failed; retried after its lease`, cause)
      )
    )
)

/** One pass: due notices claimed (leased) and looked at, a few at once; how many. */
export const noticeDue = Effect.gen(function* () {
  const config = yield* AppConfig
  if (Option.isNone(config.acpOrderWebhookUrl) || Option.isNone(config.acpOrderWebhookSecret)) return 0
  const url = config.acpOrderWebhookUrl.value
  const secret = Redacted.value(config.acpOrderWebhookSecret.value)
  const store = yield* AcpOrderNoticeStore
  const now = yield* Clock.currentTimeMillis
  // One statement (claim and lease together): no transaction around it, so an idle pass costs one.
  const lease = orderEventsLeaseMs((yield* WebhookTransport).timeoutMs)
  const claimed = yield* store.claimDue(iso(now), iso(now + lease), ORDER_EVENTS_BATCH)
  yield* Effect.forEach(claimed, (n) => noticeOne(n, url, secret), {
    concurrency: ORDER_EVENTS_CONCURRENCY,
    discard: true
  })
  return claimed.length
})

/** The worker: a pass every ORDER_EVENTS_TICK_MS (at once again after a full batch), with WORKERS on and a receiver set. */
export const AcpOrderEventsWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers || Option.isNone(config.acpOrderWebhookUrl)) return
    yield* noticeDue.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("acp order events: pass failed; retrying", cause).pipe(Effect.as(0))
      ),
      Effect.flatMap((n) => (n >= ORDER_EVENTS_BATCH ? Effect.void : Effect.sleep(ORDER_EVENTS_TICK_MS))),
      Effect.forever,
      Effect.forkScoped
    )
  })
)
