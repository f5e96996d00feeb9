// A purchase that waits on its seller, as an A2A 1.0 Task. There is no task store: the task's id is
// the transaction id, and its state is read from the caller's transaction at every call (through the
// same route REST and MCP read), so the three surfaces always agree and a task outlives the process
// that answered the buy.
import { ORDER_CANCELLED } from "../../schema/orders/orders.js"
import { A2aErrors, isRecord, type Json, retryAfterOf, rpcError, type RpcError } from "./rpc.js"

/** One Agent API route's answer, run in-process with the caller's key. */
export interface RouteAnswer {
  readonly status: number
  readonly json: unknown
  readonly headers: Headers
}

/** The fields of a transaction (the route's JSON, docs/commerce.md) that make its task. */
export interface TaskTransaction extends Json {
  readonly id: string
  readonly role: string
  readonly status: string
  readonly createdAt: string
  readonly serviceName?: string
  readonly delivery: {
    readonly output?: unknown
    readonly error?: string | null
    readonly deliveredAt?: string
  } | null
}

export const isTransaction = (u: unknown): u is TaskTransaction =>
  isRecord(u) &&
  typeof u.id === "string" &&
  typeof u.role === "string" &&
  typeof u.status === "string" &&
  typeof u.createdAt === "string" &&
  (u.delivery === null || isRecord(u.delivery))

const STATES: Readonly<Record<string, string>> = {
  pending: "TASK_STATE_WORKING",
  completed: "TASK_STATE_COMPLETED",
  // Delivered, then refunded after a dispute: the work was done (metadata.transactionStatus says refunded).
  refunded: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED"
}

/** Whether the purchase ended because its buyer cancelled it (CancelTask): a failed transaction saying so. */
export const wasCancelled = (tx: TaskTransaction) => tx.status === "failed" && tx.delivery?.error === ORDER_CANCELLED

/** The task state of a transaction. */
export const taskState = (tx: TaskTransaction) =>
  wasCancelled(tx) ? "TASK_STATE_CANCELED" : (STATES[tx.status] ?? "TASK_STATE_UNSPECIFIED")

const summaryOf = (tx: TaskTransaction) => {
  const name = typeof tx.serviceName === "string" ? tx.serviceName : "the service"
  switch (tx.status) {
    case "pending":
      return `Waiting for the seller of ${name}: the price is held until it delivers, and refunded if it fails or misses its deadline.`
    case "completed":
      return `Delivered by the seller of ${name}: the output is the task's artifact.`
    case "refunded":
      return `Delivered by the seller of ${name}, then refunded.`
    default:
      return wasCancelled(tx)
        ? "Cancelled by you before the seller answered: the price was refunded in full."
        : `Failed: ${tx.delivery?.error ?? "no delivery"}. The price was not charged.`
  }
}

/**
 * The Task of a purchase (proto JSON): the transaction as a data part of the status message, the
 * seller's output as the artifact once delivered; context and task are both the transaction.
 */
export const taskOf = (tx: TaskTransaction, metadata: Json = {}) => {
  const delivered = (tx.status === "completed" || tx.status === "refunded") && tx.delivery !== null
  return {
    id: tx.id,
    contextId: tx.id,
    status: {
      state: taskState(tx),
      message: {
        messageId: `${tx.id}.${tx.status}`,
        contextId: tx.id,
        taskId: tx.id,
        role: "ROLE_AGENT",
        parts: [
          { text: summaryOf(tx), mediaType: "text/plain" },
          { data: tx, mediaType: "application/json" }
        ]
      },
      timestamp: tx.delivery?.deliveredAt ?? tx.createdAt
    },
    artifacts: delivered
      ? [
          {
            artifactId: "output",
            name: "output",
            description: "The seller's delivery (the transaction's delivery.output).",
            parts: [{ data: tx.delivery?.output ?? null, mediaType: "application/json" }]
          }
        ]
      : [],
    metadata: { skill: "buy", transactionStatus: tx.status, ...metadata }
  }
}

/**
 * The caller's task `id`: one of its purchases (a transaction it is the buyer of), or the error to
 * answer. Anything else (another agent's transaction, a sale, an id that is no transaction) is
 * TaskNotFound, as the specification asks for a task that does not exist or is not accessible.
 */
export const readTask = async (
  rpcId: unknown,
  id: unknown,
  read: (transactionId: string) => Promise<RouteAnswer>
): Promise<{ readonly tx: TaskTransaction } | { readonly error: RpcError }> => {
  if (typeof id !== "string" || id === "")
    return { error: rpcError(rpcId, A2aErrors.invalidParams, "params.id: the task id is required", { field: "id" }) }
  const answer = await read(id)
  if (answer.status === 200 && isTransaction(answer.json) && answer.json.role === "buyer") return { tx: answer.json }
  if (answer.status === 403)
    return {
      error: rpcError(rpcId, A2aErrors.taskNotFound, `task ${id} is not accessible: reading a task needs commerce:read`)
    }
  if (answer.status < 500 && answer.status !== 429)
    return {
      error: rpcError(
        rpcId,
        A2aErrors.taskNotFound,
        `no task ${id}: a task is one of your purchases, named by its transaction id`
      )
    }
  return {
    error: rpcError(rpcId, A2aErrors.internal, `task ${id} could not be read now (${answer.status})`, {
      httpStatus: answer.status,
      ...retryAfterOf(answer.headers)
    })
  }
}

const APPROVAL_STATES: Readonly<Record<string, string>> = {
  pending: "TASK_STATE_AUTH_REQUIRED",
  declined: "TASK_STATE_REJECTED",
  expired: "TASK_STATE_FAILED",
  void: "TASK_STATE_FAILED",
  withdrawn: "TASK_STATE_CANCELED"
}

const approvalSummary = (status: string) => {
  switch (status) {
    case "pending":
      return "Your owner must approve this purchase in the dashboard; nothing is charged until they do. The task resumes when they decide."
    case "declined":
      return "Your owner declined this purchase: nothing was charged."
    case "expired":
      return "Your owner did not decide in time: the approval expired and nothing was charged."
    case "withdrawn":
      return "You withdrew this purchase before your owner decided: nothing was charged."
    default:
      return "The approval is void (what was quoted changed before the owner approved): nothing was charged."
  }
}

/**
 * The Task of a purchase waiting on the owner's approval (docs/a2a.md "Approval"): named by the
 * approval id. Pending is TASK_STATE_AUTH_REQUIRED (an authorization only the owner can give, out of
 * band); declined TASK_STATE_REJECTED; expired or void TASK_STATE_FAILED; withdrawn by its agent
 * (CancelTask) TASK_STATE_CANCELED. Once approved it is the
 * purchase's own task (`tx`), still named by the approval id, `metadata.transactionId` the purchase.
 */
export const approvalTaskOf = (
  approval: Json & { readonly id: string; readonly status: string },
  tx?: TaskTransaction,
  metadata: Json = {}
) => {
  const meta = { approvalStatus: approval.status, ...metadata }
  if (approval.status === "approved" && tx !== undefined) {
    const task = taskOf(tx, { ...meta, transactionId: tx.id })
    return { ...task, id: approval.id, contextId: approval.id }
  }
  const status = approval.status === "approved" ? "approved" : approval.status
  return {
    id: approval.id,
    contextId: approval.id,
    status: {
      state: APPROVAL_STATES[status] ?? "TASK_STATE_WORKING",
      message: {
        messageId: `${approval.id}.${status}`,
        contextId: approval.id,
        taskId: approval.id,
        role: "ROLE_AGENT",
        parts: [
          {
            text:
              status === "approved" ? "Approved by your owner: the purchase is under way." : approvalSummary(status),
            mediaType: "text/plain"
          },
          { data: { approval }, mediaType: "application/json" }
        ]
      },
      timestamp: typeof approval.decidedAt === "string" ? approval.decidedAt : String(approval.createdAt)
    },
    artifacts: [],
    metadata: { skill: "buy", ...meta }
  }
}

export const isApproval = (u: unknown): u is Json & { readonly id: string; readonly status: string } =>
  isRecord(u) && typeof u.id === "string" && u.id.startsWith("apr_") && typeof u.status === "string"
