// An order as it ends (delivered, failed, expired, cancelled): the pure record its answer writes.
import type { Order } from "../../schema/orders/orders.js"

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The order as it ends: answered now, no further push attempt. Its latency is the seller's, measured
 * by the platform from when the order reached it (its `offeredAt`: the pull seller's first listing, the
 * start of the push attempt that got the answer; an answer to an order never offered, from its
 * placing), to the answer; an expiry's, to the deadline; a cancel's, none (the buyer's time, not the
 * seller's). What the seller reports moves no figure.
 */
export const ended = (
  order: Order,
  status: "delivered" | "failed" | "expired" | "cancelled",
  nowMs: number,
  answer: { readonly output: unknown; readonly error: string | null; readonly reportedLatencyMs?: number | null }
): Order => {
  const from = Date.parse(order.offeredAt ?? order.createdAt)
  const to = status === "expired" ? Date.parse(order.deadlineAt) : nowMs
  return {
    ...order,
    status,
    answeredAt: iso(nowMs),
    output: answer.output,
    error: answer.error,
    latencyMs: status === "cancelled" ? null : Math.max(0, to - from),
    ...(answer.reportedLatencyMs !== undefined ? { reportedLatencyMs: answer.reportedLatencyMs } : {}),
    push: order.push === null ? null : { ...order.push, nextAttemptAt: null }
  }
}
