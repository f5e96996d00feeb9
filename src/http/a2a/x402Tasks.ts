// A buy over A2A paid with x402: the a2a-x402 extension's standalone flow (x402 v2's A2A transport)
// as a thin adapter over the paid call, `POST /commerce/services/:id/invoke?tier=`, which verifies,
// settles, runs the purchase and keeps it exactly once, as over HTTP and MCP (docs/a2a.md "Paying
// with x402"). The buy is answered with a task in TASK_STATE_INPUT_REQUIRED carrying the
// PaymentRequired (`x402.payment.required`); the payment message names that task and carries the
// signed PaymentPayload (`x402.payment.payload`); the task then follows the payment and its purchase.
import {
  X402_PAYLOAD_KEY,
  X402_STATUS_KEY,
  X402_SUBMISSION_LEASE_MS,
  X402_TASK_TTL_MS,
  type X402TaskRecord
} from "../../schema/a2a/x402Task.js"
import { isProblem, toRouteRequest } from "../descriptors/toolRequest.js"
import { agentTools } from "../descriptors/tools.js"
import { type A2aCalls, type A2aX402, runRoute } from "./calls.js"
import {
  ended,
  errorCodeOf,
  PAY_TEXT,
  PAYLOAD_FIELD,
  type TaskView,
  viewOfX402Task,
  x402TaskOf
} from "./x402TaskView.js"
import { A2aErrors, isRecord, type Json, retryAfterOf, rpcError, type RpcError, rpcResult } from "./rpc.js"
import { decodedX402Header } from "../x402/headers.js"

const INVOKE = agentTools.find((t) => t.name === "mpp_invoke")!
export const X402_TASK_PREFIX = "x402t_"
export const isX402TaskId = (id: unknown): id is string => typeof id === "string" && id.startsWith(X402_TASK_PREFIX)

const metadataOf = (message: unknown): Json => (isRecord(message) && isRecord(message.metadata) ? message.metadata : {})

/** Whether a buy is paid with x402: always for a keyless caller; for a keyed one that activated the extension. */
export const buysWithX402 = (calls: A2aCalls): calls is A2aCalls & { readonly x402: A2aX402 } =>
  calls.x402 !== undefined && (calls.caller.agentId === undefined || calls.x402.activated)

const unavailable = (rpcId: unknown) =>
  rpcError(rpcId, A2aErrors.internal, "storage is unavailable: retry shortly", { httpStatus: 503 })

/** GetTask of an x402 task: the caller's own, as it stands. */
export const readX402Task = async (
  rpcId: unknown,
  id: string,
  calls: A2aCalls
): Promise<{ readonly error: RpcError } | { readonly task: ReturnType<typeof x402TaskOf> }> => {
  const task = calls.x402 === undefined ? undefined : await calls.x402.get(id)
  if (task === "unavailable") return { error: unavailable(rpcId) }
  if (task === undefined || calls.x402 === undefined)
    return { error: rpcError(rpcId, A2aErrors.taskNotFound, `task ${id} not found`) }
  const view = await viewOfX402Task(calls.x402, task)
  return view === "unavailable" ? { error: unavailable(rpcId) } : { task: x402TaskOf(task, view) }
}

/**
 * A buy paid with x402 (no payment yet): the paid call is asked without one, and its 402's
 * PAYMENT-REQUIRED opens a task waiting for the payment. Any other answer (an unknown service, a tier
 * that is not per call) is the route's refusal, answered as every skill's is (undefined here).
 */
export const openX402Buy = async (
  rpcId: unknown,
  calls: A2aCalls & { readonly x402: A2aX402 },
  args: Json
): Promise<Json> => {
  const { serviceId, tierId, input, ...rest } = args
  const extra = Object.keys(rest)[0]
  if (extra !== undefined)
    return rpcError(
      rpcId,
      A2aErrors.invalidParams,
      `${extra}: is not an argument of a buy paid with x402 (serviceId, tierId, input)`,
      { field: extra }
    )
  const route = toRouteRequest(INVOKE, { id: serviceId, tier: tierId, ...(input === undefined ? {} : { input }) })
  if (isProblem(route)) {
    const field = route.field === "id" ? "serviceId" : route.field === "tier" ? "tierId" : route.field
    return rpcError(rpcId, A2aErrors.invalidParams, route.message.replace(/^(id|tier):/, `${field}:`), { field })
  }
  const answer = await runRoute(calls, route)
  const required = answer.status === 402 ? decodedX402Header(answer.headers, "payment-required") : undefined
  if (required === undefined) {
    const message = isRecord(answer.json) && typeof answer.json.message === "string" ? answer.json.message : ""
    return rpcResult(rpcId, {
      message: {
        messageId: `${calls.requestId}.reply`,
        role: "ROLE_AGENT",
        parts: [
          { text: `Buy: refused (${answer.status}) ${message}`.trim(), mediaType: "text/plain" },
          { data: answer.json, mediaType: "application/json" }
        ],
        metadata: {
          skill: "buy",
          paidWith: "x402",
          httpStatus: answer.status,
          ok: false,
          ...retryAfterOf(answer.headers)
        }
      }
    })
  }
  const task = await calls.x402.open({
    serviceId: String(serviceId),
    tierId: typeof tierId === "string" ? tierId : null,
    body: route.body ?? "{}"
  })
  if (task === "unavailable") return unavailable(rpcId)
  return rpcResult(rpcId, {
    task: x402TaskOf(
      task,
      {
        state: "TASK_STATE_INPUT_REQUIRED",
        x402Status: "payment-required",
        text: PAY_TEXT(task),
        required,
        receipts: []
      },
      { httpStatus: 402, ok: false }
    )
  })
}

/** The task as stored now, or as last read when it cannot be read again (gone, or the store unavailable). */
const reread = async (x402: A2aX402, id: string, last: X402TaskRecord): Promise<X402TaskRecord> => {
  const now = await x402.get(id)
  return now === undefined || now === "unavailable" ? last : now
}

/** The authorization a PaymentPayload carries (payer and nonce, lower case), or undefined. */
const authorizationOf = (payload: unknown): { readonly payer: string; readonly nonce: string } | undefined => {
  const authorization =
    isRecord(payload) && isRecord(payload.payload) && isRecord(payload.payload.authorization)
      ? payload.payload.authorization
      : undefined
  if (authorization === undefined) return undefined
  const { from, nonce } = authorization
  return typeof from === "string" && typeof nonce === "string" && from !== "" && nonce !== ""
    ? { payer: from.toLowerCase(), nonce: nonce.toLowerCase() }
    : undefined
}

/**
 * The Idempotency-Key an authorization for a task is sent under: the same message again is answered
 * by the route's first answer (one per authorization: a refused one does not answer the next).
 */
/** The paid call a task pays: its path and query, as the route is asked and as PAYMENT-REQUIRED names it. */
export const paidCallOf = (task: X402TaskRecord) =>
  `${INVOKE._meta.path.replace(":id", encodeURIComponent(task.serviceId))}${
    task.tierId === null ? "" : `?tier=${encodeURIComponent(task.tierId)}`
  }`

const taskPaymentKey = (task: X402TaskRecord) => `a2a-x402:${task.id}:${task.nonce}`

/**
 * A message naming an x402 task: its payment (`x402.payment.payload`), or the payer declining it
 * (`x402.payment.status: "payment-rejected"`). A task whose submitted payment still stands is
 * answered as it stands, never paid twice.
 */
export const payX402Task = async (
  rpcId: unknown,
  calls: A2aCalls,
  params: Json,
  taskId: string,
  startedAt: number
): Promise<Json> => {
  const x402 = calls.x402
  const found = x402 === undefined ? undefined : await x402.get(taskId)
  if (found === "unavailable") return unavailable(rpcId)
  if (found === undefined || x402 === undefined)
    return rpcError(rpcId, A2aErrors.taskNotFound, `task ${taskId} not found`)
  const meta = metadataOf(params.message)
  const payload = meta[X402_PAYLOAD_KEY]
  const answer = async (task: X402TaskRecord, extra: Partial<TaskView> = {}, metadata: Json = {}) => {
    const view = await viewOfX402Task(x402, task)
    return view === "unavailable"
      ? unavailable(rpcId)
      : rpcResult(rpcId, { task: x402TaskOf(task, { ...view, ...extra }, metadata) })
  }
  let task = found
  if (task.state === "payment-required" && x402.now() - Date.parse(task.createdAt) > X402_TASK_TTL_MS) {
    const expired = { ...task, state: "expired" as const, updatedAt: new Date(x402.now()).toISOString() }
    const written = await x402.replace(task, expired)
    if (written === "unavailable") return unavailable(rpcId)
    task = written ? expired : await reread(x402, taskId, task)
  }
  if (task.state !== "payment-required" && task.state !== "payment-submitted")
    return rpcError(rpcId, A2aErrors.unsupportedOperation, `task ${task.id} has ended (${task.state}): send a new buy`)
  if (payload === undefined) {
    if (meta[X402_STATUS_KEY] !== "payment-rejected")
      return rpcError(
        rpcId,
        A2aErrors.invalidParams,
        `${PAYLOAD_FIELD}: the signed PaymentPayload is required (or ${X402_STATUS_KEY} "payment-rejected" to decline)`,
        { field: PAYLOAD_FIELD }
      )
    if (task.state === "payment-required") {
      const declined = { ...task, state: "payment-rejected" as const, updatedAt: new Date(x402.now()).toISOString() }
      const written = await x402.replace(task, declined)
      if (written === "unavailable") return unavailable(rpcId)
      if (written) return answer(declined)
    }
    // A payment was submitted (or is being): it decides, not the decline.
    return answer(await reread(x402, taskId, task))
  }
  const authorization = authorizationOf(payload)
  if (authorization === undefined)
    return rpcError(
      rpcId,
      A2aErrors.invalidParams,
      `${PAYLOAD_FIELD}: not an x402 v2 PaymentPayload (payload.authorization with from and nonce)`,
      { field: PAYLOAD_FIELD }
    )
  if (
    task.state === "payment-submitted" &&
    (task.payer !== authorization.payer || task.nonce !== authorization.nonce)
  ) {
    // Another authorization than the one submitted: only if that one never became a payment, and is
    // no longer being tried (refused ones are taken off at once; this is a crash mid-attempt).
    const standing = await x402.payment(task)
    if (standing === "unavailable") return unavailable(rpcId)
    if (standing !== undefined || x402.now() - Date.parse(task.updatedAt) < X402_SUBMISSION_LEASE_MS)
      return answer(task)
  }
  if (task.state !== "payment-submitted" || task.payer !== authorization.payer || task.nonce !== authorization.nonce) {
    const submitted: X402TaskRecord = {
      ...task,
      state: "payment-submitted",
      payer: authorization.payer,
      nonce: authorization.nonce,
      updatedAt: new Date(x402.now()).toISOString()
    }
    const written = await x402.replace(task, submitted)
    if (written === "unavailable") return unavailable(rpcId)
    // Another message recorded its payment first: the task as that one left it.
    if (!written) return answer(await reread(x402, taskId, task))
    task = submitted
  }
  const paid = await runRoute(
    calls,
    { method: "POST", path: paidCallOf(task), body: task.body },
    taskPaymentKey(task),
    { "payment-signature": Buffer.from(JSON.stringify(payload), "utf8").toString("base64") }
  )
  const settle = decodedX402Header(paid.headers, "payment-response")
  const ours = isRecord(settle?.extensions) ? settle.extensions["agent-commerce"] : undefined
  if (isRecord(ours) && typeof ours.paymentId === "string") {
    await x402.setPayment(task.id, ours.paymentId)
    task = { ...task, paymentId: ours.paymentId }
  }
  const routeMeta = { httpStatus: paid.status, ok: paid.status < 300, ...retryAfterOf(paid.headers) }
  // Refused before any money moved (malformed, the facilitator, another amount): the payment was
  // forgotten, so the task waits again with nothing submitted (a never-paid task, purged with the others).
  const unsubmitted: X402TaskRecord = { ...task, state: "payment-required", payer: null, nonce: null, paymentId: null }
  if (paid.status === 400 || paid.status === 402) {
    const reset = await x402.replace(task, unsubmitted)
    if (reset === true) task = unsubmitted
  }
  if (paid.status === 400)
    return rpcError(
      rpcId,
      A2aErrors.invalidParams,
      `${PAYLOAD_FIELD}: ${isRecord(paid.json) && typeof paid.json.message === "string" ? paid.json.message : "refused"}`,
      { field: PAYLOAD_FIELD, httpStatus: 400 }
    )
  if (paid.status === 402) {
    // The payer may sign again.
    const reason = typeof settle?.errorReason === "string" ? settle.errorReason : "invalid_payment"
    return answer(task, { error: errorCodeOf(reason), receipts: settle === undefined ? [] : [settle] }, routeMeta)
  }
  if (paid.status === 403 || paid.status === 404) {
    // The owner's policy (before any settle), or the service gone: this task ends unpaid.
    // Nothing was paid: the authorization is taken off it (and the task purged with the never-paid).
    const refused: X402TaskRecord = {
      ...task,
      state: "refused",
      payer: null,
      nonce: null,
      updatedAt: new Date(x402.now()).toISOString()
    }
    await x402.replace(task, refused)
    const message = isRecord(paid.json) && typeof paid.json.message === "string" ? paid.json.message : ""
    return rpcResult(rpcId, {
      task: x402TaskOf(
        refused,
        {
          ...ended("payment-failed", `Refused (${paid.status}) before any money moved: ${message}`),
          error: isRecord(paid.json) && typeof paid.json._tag === "string" ? paid.json._tag : "SETTLEMENT_FAILED",
          data: paid.json
        },
        routeMeta
      )
    })
  }
  if (paid.status === 409 && isRecord(paid.json) && paid.json._tag === "PaymentConflict") {
    // The authorization already paid another call (or this one, answered as it stands): an
    // authorization of another call's is taken off this task, which still asks to be paid.
    const standing = await x402.payment(task)
    if (standing === "unavailable") return unavailable(rpcId)
    if (standing !== undefined) return answer(task, {}, routeMeta)
    if ((await x402.replace(task, unsubmitted)) === true) task = unsubmitted
    return answer(task, { error: "DUPLICATE_NONCE" }, routeMeta)
  }
  if (paid.status === 429 || (paid.status >= 500 && paid.status !== 502))
    return rpcError(
      rpcId,
      A2aErrors.internal,
      `the paid call could not be run now (${paid.status}): retry the same message`,
      {
        httpStatus: paid.status,
        ...retryAfterOf(paid.headers)
      }
    )
  // Paid (200, 202), paid and then failed by its seller (502), or another message's payment (409):
  // the task as the payment stands. A purchase waiting on its seller is awaited as a buy is.
  const returnImmediately = isRecord(params.configuration) && params.configuration.returnImmediately === true
  const transactionId =
    isRecord(paid.json) && typeof paid.json.transactionId === "string" ? paid.json.transactionId : undefined
  const left = startedAt + calls.waitMs - Date.now()
  if (paid.status === 202 && transactionId !== undefined && !returnImmediately && left > 0)
    await calls.awaitOutcome(transactionId, left)
  return answer(task, {}, routeMeta)
}

/** CancelTask of an x402 task: while it waits for a payment it is cancelled; once one was submitted, that payment decides. */
export const cancelX402Task = async (rpcId: unknown, id: string, calls: A2aCalls) => {
  const x402 = calls.x402
  const task = x402 === undefined ? undefined : await x402.get(id)
  if (task === "unavailable") return unavailable(rpcId)
  if (task === undefined || x402 === undefined) return rpcError(rpcId, A2aErrors.taskNotFound, `task ${id} not found`)
  if (task.state === "payment-required") {
    const canceled = { ...task, state: "canceled" as const, updatedAt: new Date(x402.now()).toISOString() }
    const written = await x402.replace(task, canceled)
    if (written === "unavailable") return unavailable(rpcId)
    if (written) return rpcResult(rpcId, x402TaskOf(canceled, await viewOfX402TaskOrThrow(x402, canceled)))
  }
  const now = await reread(x402, id, task)
  if (now.state === "canceled") return rpcResult(rpcId, x402TaskOf(now, await viewOfX402TaskOrThrow(x402, now)))
  const view = await viewOfX402Task(x402, now)
  return rpcError(
    rpcId,
    A2aErrors.taskNotCancelable,
    now.state === "payment-submitted"
      ? `task ${id} was paid (or its payment is being settled): ${view !== "unavailable" && view.transactionId ? `cancel its purchase's task ${view.transactionId} while it waits on its seller` : "it cannot be cancelled"}`
      : `task ${id} has ended (${now.state})`,
    { state: view === "unavailable" ? undefined : view.state }
  )
}

const viewOfX402TaskOrThrow = async (x402: A2aX402, task: X402TaskRecord) => {
  const view = await viewOfX402Task(x402, task)
  if (view === "unavailable") throw new Error("unreachable: an ended task reads no payment")
  return view
}
