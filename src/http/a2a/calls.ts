// What the JSON-RPC methods run against: one Agent API route in-process with the caller's key (the
// same router as REST and MCP: auth, permissions, limits, validation, idempotency), and the few
// services the endpoint calls itself (an order's wait, a buyer's cancel).
import { isProblem, toRouteRequest } from "../descriptors/toolRequest.js"
import { agentTools } from "../descriptors/tools.js"
import type { RouteAnswer } from "./tasks.js"
import type { Json } from "./rpc.js"
import type { PushMethodContext } from "./push.js"
import type { X402TaskRecord } from "../../schema/a2a/x402Task.js"

const INTERNAL_ORIGIN = "http://a2a.internal"

/** What a cancel came to: done (or done before), too late, not the caller's own buy, no permission, not now. */
export type CancelOutcome = "cancelled" | "closed" | "notFound" | "forbidden" | "unavailable"

/** What a JSON-RPC body runs against: the router, with the caller's key, and the orders' wait. */
export interface A2aCalls {
  /** Runs one REST request through the router. */
  readonly dispatch: (request: Request) => Promise<Response>
  readonly credentials: Record<string, string>
  readonly requestId: string
  /** Resolves once the order has left pending (true) or `ms` has passed (false). */
  readonly awaitOutcome: (orderId: string, ms: number) => Promise<boolean>
  /** How long a buy may wait for its seller's answer (ORDER_WAIT_MS). */
  readonly waitMs: number
  /** Who calls (GetExtendedAgentCard narrows the skills to its permissions). */
  readonly caller: { readonly agentId: string | undefined; readonly permissions: ReadonlySet<string> }
  /** The public base URL (the card's links). */
  readonly baseUrl: string
  /** The caller's approval `id` as its view (GET /commerce/approvals shows it), undefined when not the caller's. */
  readonly readApproval: (id: string) => Promise<Json | undefined | "unavailable">
  /** The caller withdraws its pending order (Orders.cancel, with the key's commerce:buy). */
  readonly cancelOrder: (orderId: string) => Promise<CancelOutcome>
  /**
   * A page of the caller's own approvals, newest first (Approvals.agentApprovals, with commerce:read):
   * `cursor` a page's last row; "invalid" for a cursor it did not give.
   */
  readonly listApprovals: (
    limit: number,
    cursor: string | undefined
  ) => Promise<
    { readonly data: ReadonlyArray<Json>; readonly nextCursor: string | null } | "invalid" | "forbidden" | "unavailable"
  >
  /**
   * A page of the caller's own sagas, newest first (Sagas.list, with commerce:read): `cursor` a
   * page's last row; "invalid" for a cursor it did not give.
   */
  readonly listSagas: (
    limit: number,
    cursor: string | undefined
  ) => Promise<
    { readonly data: ReadonlyArray<Json>; readonly nextCursor: string | null } | "invalid" | "forbidden" | "unavailable"
  >
  /** Which of the caller's transactions `transactionIds` are its sagas' purchases (listed as the saga, not again). */
  readonly sagaPurchases: (transactionIds: ReadonlyArray<string>) => Promise<ReadonlySet<string> | "unavailable">
  /** One of the push notification configuration methods (./push.ts), with the services it runs on. */
  readonly pushConfig: (method: string, id: unknown, params: Json, context: PushMethodContext) => Promise<Json>
  /** The caller withdraws its approval still waiting on the owner (Approvals.withdraw, with commerce:buy). */
  readonly withdrawApproval: (approvalId: string) => Promise<CancelOutcome>
  /** Buying with x402 (./x402Tasks.ts), when x402 is configured. */
  readonly x402?: A2aX402
}

/** What a buy paid with x402 runs against: the caller's x402 tasks and their payments. */
export interface A2aX402 {
  /** Whether the request activated the a2a-x402 extension (`A2A-Extensions` or `X-A2A-Extensions`). */
  readonly activated: boolean
  /** Opens a task for the quoted call, the caller's (a keyless caller's has no agent). */
  readonly open: (call: {
    readonly serviceId: string
    readonly tierId: string | null
    readonly body: string
  }) => Promise<X402TaskRecord | "unavailable">
  /** The caller's own task, or undefined (none, or another caller's). */
  readonly get: (id: string) => Promise<X402TaskRecord | undefined | "unavailable">
  /** Compare and set (X402TaskStore.replace). */
  readonly replace: (expected: X402TaskRecord, next: X402TaskRecord) => Promise<boolean | "unavailable">
  readonly setPayment: (id: string, paymentId: string) => Promise<void>
  /** The payment the task submitted (X402.ofTask), undefined when there is none. */
  readonly payment: (task: X402TaskRecord) => Promise<X402TaskPayment | undefined | "unavailable">
  /** What paying the task's call asks now (a fresh PaymentRequired), or undefined when it cannot be bought. */
  readonly required: (task: X402TaskRecord, error?: string) => Promise<Json | undefined>
  readonly now: () => number
}

export interface X402TaskPayment {
  readonly view: Json & { readonly status: string; readonly transactionId: string | null }
  readonly settle: Json
}

/** Runs one Agent API route in-process with the caller's key (and the message's Idempotency-Key). */
export const runRoute = async (
  calls: A2aCalls,
  route: { readonly method: string; readonly path: string; readonly body?: string },
  idempotencyKey?: string,
  extraHeaders: Record<string, string> = {}
): Promise<RouteAnswer> => {
  const headers: Record<string, string> = {
    ...extraHeaders,
    ...calls.credentials,
    accept: "application/json",
    "x-request-id": `${calls.requestId}.a2a`.slice(0, 128)
  }
  if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey
  if (route.body !== undefined) {
    headers["content-type"] = "application/json"
    headers["content-length"] = String(Buffer.byteLength(route.body))
  }
  const response = await calls.dispatch(
    new Request(`${INTERNAL_ORIGIN}${route.path}`, { method: route.method, headers, body: route.body })
  )
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = text === "" ? {} : JSON.parse(text)
  } catch {
    json = { text }
  }
  return { status: response.status, json, headers: response.headers }
}

const transactionTool = agentTools.find((t) => t.name === "transaction")!
/** The caller's transaction, as the check_transaction skill (GET /transactions/:id) reads it. */
export const readTransaction = (calls: A2aCalls) => (id: string) => {
  const route = toRouteRequest(transactionTool, { id })
  return isProblem(route)
    ? Promise.resolve<RouteAnswer>({ status: 404, json: {}, headers: new Headers() })
    : runRoute(calls, route)
}
