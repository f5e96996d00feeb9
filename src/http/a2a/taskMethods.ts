// ListTasks and CancelTask over the caller's purchases (docs/a2a.md "Tasks"). A task is a purchase
// the caller bought (its transaction), one waiting on its owner (its approval), or one of its sagas,
// read through the same routes and services REST reads: no task store.
import { encodeTimeCursor } from "../../schema/platform/common.js"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import { type A2aCalls, readTransaction, runRoute } from "./calls.js"
import { A2aErrors, isRecord, type Json, retryAfterOf, type RpcError, rpcError, rpcResult } from "./rpc.js"
import {
  approvalTaskOf,
  isApproval,
  isTransaction,
  readTask,
  type TaskTransaction,
  taskOf,
  taskState
} from "./tasks.js"
import { isSaga, isSagaId, readSagaTask, sagaTaskOf, type TaskSaga } from "./sagaTasks.js"

/** ListTasks' page size: the spec's default and its most. */
export const LIST_TASKS_DEFAULT = 50
const LIST_TASKS_MAX = 100

/** The transaction status a task state is read from (the route filters by it; the state is then checked). */
const STATUS_OF_STATE: Readonly<Record<string, string | undefined>> = {
  TASK_STATE_WORKING: "pending",
  TASK_STATE_COMPLETED: undefined, // completed, and refunded after delivery
  TASK_STATE_FAILED: "failed",
  TASK_STATE_CANCELED: "failed"
}
/** The states an approval's own task is in (an approved one is listed as its purchase). */
const APPROVAL_TASK_STATES = [
  "TASK_STATE_AUTH_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED"
]
/** The states a saga's task is in: running, completed, compensated. */
const SAGA_TASK_STATES = ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED"]
const SERVED_STATES = [...new Set([...Object.keys(STATUS_OF_STATE), ...APPROVAL_TASK_STATES, ...SAGA_TASK_STATES])]
/** The proto enum's numbers, for a client that sends them. */
const STATE_NUMBERS: Readonly<Record<number, string>> = {
  2: "TASK_STATE_WORKING",
  3: "TASK_STATE_COMPLETED",
  4: "TASK_STATE_FAILED",
  5: "TASK_STATE_CANCELED",
  7: "TASK_STATE_REJECTED",
  8: "TASK_STATE_AUTH_REQUIRED"
}

/**
 * A page token: where each of the three lists (the caller's purchases, its approvals, its sagas)
 * stands — a keyset cursor ("" before the first row), or null once that list is read to its end —
 * and how many tasks the pages before it held (so `totalSize` counts up as a client pages on; the
 * last page's is the total).
 */
interface Page {
  readonly purchases: string | null
  readonly approvals: string | null
  readonly sagas: string | null
  readonly seen: number
}
const encodeToken = (page: Page) =>
  Buffer.from(JSON.stringify({ c: page.purchases, a: page.approvals, s: page.sagas, n: page.seen })).toString(
    "base64url"
  )
const decodeToken = (token: string): Page | undefined => {
  try {
    const v: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"))
    if (!isRecord(v) || typeof v.n !== "number" || !Number.isInteger(v.n) || v.n < 0) return undefined
    const cursor = (u: unknown) => (u === null || typeof u === "string" ? u : undefined)
    const purchases = cursor(v.c)
    // A token from before approvals (or sagas) were listed: the lists it has go on, without the others.
    const approvals = v.a === undefined ? null : cursor(v.a)
    const sagas = v.s === undefined ? null : cursor(v.s)
    return purchases === undefined || approvals === undefined || sagas === undefined
      ? undefined
      : { purchases, approvals, sagas, seen: v.n }
  } catch {
    return undefined
  }
}

const invalid = (id: unknown, field: string, message: string) =>
  rpcError(id, A2aErrors.invalidParams, `${field}: ${message}`, { field })

/** A task without its artifacts (ListTasks' includeArtifacts false, the default). */
const withoutArtifacts = <T extends { readonly artifacts: ReadonlyArray<unknown> }>(task: T) => ({
  ...task,
  artifacts: []
})

type Row =
  | { readonly kind: "purchase"; readonly createdAt: string; readonly id: string; readonly tx: TaskTransaction }
  | { readonly kind: "approval"; readonly createdAt: string; readonly id: string; readonly approval: Approval }
  | { readonly kind: "saga"; readonly createdAt: string; readonly id: string; readonly saga: TaskSaga }
type Approval = Json & { readonly id: string; readonly status: string; readonly createdAt: string }
const isListedApproval = (u: unknown): u is Approval => isApproval(u) && typeof u.createdAt === "string"

/** Whether `a` comes before `b` newest first (by creation, then id, as both lists are paged). */
const newer = (a: Row, b: Row) => {
  const ta = Date.parse(a.createdAt)
  const tb = Date.parse(b.createdAt)
  return ta !== tb ? ta > tb : a.id > b.id
}

/**
 * Up to `size` rows of newest-first lists, merged newest first: each list's own order is kept (only
 * the heads are compared), so what is taken of each is a prefix of it and its cursor the last row
 * taken.
 */
const mergeNewestFirst = (lists: ReadonlyArray<ReadonlyArray<Row>>, size: number) => {
  const out: Array<Row> = []
  const at = lists.map(() => 0)
  while (out.length < size) {
    let pick = -1
    for (let k = 0; k < lists.length; k++) {
      const head = lists[k]![at[k]!]
      if (head !== undefined && (pick < 0 || newer(head, lists[pick]![at[pick]!]!))) pick = k
    }
    if (pick < 0) break
    out.push(lists[pick]![at[pick]!++]!)
  }
  return out
}

/** Where a list stands after a page took `taken` of the `read` rows it offered (`more`: rows after them). */
const nextOf = (cursor: string | null, read: number, taken: ReadonlyArray<Row>, more: boolean): string | null => {
  if (cursor === null) return null
  const last = taken[taken.length - 1]
  if (last === undefined) return read === 0 && !more ? null : cursor
  return taken.length === read && !more ? null : encodeTimeCursor(last)
}

/**
 * ListTasks: the caller's tasks, newest first, in keyset pages (`pageToken`) — its purchases (each
 * transaction it bought) and its purchases waiting on its owner or never made (each approval not
 * approved: an approved one is listed as its purchase) — filtered by `status` (a task state),
 * `contextId` (a task's context is the task) and `statusTimestampAfter`. A filter a list cannot apply
 * is applied to each page read, so a page may hold fewer than `pageSize` while `nextPageToken` still
 * leads on.
 */
export const listTasks = async (id: unknown, params: Json, calls: A2aCalls): Promise<Json> => {
  const size = params.pageSize ?? LIST_TASKS_DEFAULT
  if (typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > LIST_TASKS_MAX)
    return invalid(id, "pageSize", `an integer from 1 to ${LIST_TASKS_MAX}`)
  const rawState = params.status ?? "TASK_STATE_UNSPECIFIED"
  const state = typeof rawState === "number" ? (STATE_NUMBERS[rawState] ?? String(rawState)) : rawState
  if (typeof state !== "string" || (state !== "TASK_STATE_UNSPECIFIED" && !SERVED_STATES.includes(state)))
    return invalid(id, "status", `one of ${SERVED_STATES.join(", ")} (a purchase is in no other state)`)
  const after = params.statusTimestampAfter
  if (after !== undefined && (typeof after !== "string" || Number.isNaN(Date.parse(after))))
    return invalid(id, "statusTimestampAfter", "an ISO 8601 time")
  const token = params.pageToken ?? ""
  const page: Page | undefined =
    typeof token === "string" && token !== ""
      ? decodeToken(token)
      : { purchases: "", approvals: "", sagas: "", seen: 0 }
  if (page === undefined) return invalid(id, "pageToken", "not a token this endpoint gave (start again without one)")
  const includeArtifacts = params.includeArtifacts === true
  const any = state === "TASK_STATE_UNSPECIFIED"
  const keep = <T extends { readonly status: { readonly state: string; readonly timestamp: string } } & Json>(
    task: T & { readonly artifacts: ReadonlyArray<unknown> }
  ) => {
    if (!any && task.status.state !== state) return undefined
    if (typeof after === "string" && Date.parse(task.status.timestamp) < Date.parse(after)) return undefined
    return includeArtifacts ? task : withoutArtifacts(task)
  }

  // contextId names one task (its context is the task): that task, if it is the caller's.
  const contextId = params.contextId
  if (typeof contextId === "string" && contextId !== "") {
    let task: Json | undefined
    if (isApprovalId(contextId)) {
      const read = await readApprovalTask(id, contextId, calls)
      if ("error" in read && read.error.error.code !== A2aErrors.taskNotFound) return read.error
      task = "task" in read ? keep(read.task) : undefined
    } else if (isSagaId(contextId)) {
      const read = await readSagaTask(id, contextId, calls)
      if ("error" in read && read.error.error.code !== A2aErrors.taskNotFound) return read.error
      task = "saga" in read ? keep(sagaTaskOf(read.saga)) : undefined
    } else {
      const read = await readTask(id, contextId, readTransaction(calls))
      if ("error" in read && read.error.error.code !== A2aErrors.taskNotFound) return read.error
      task = "tx" in read ? keep(taskOf(read.tx)) : undefined
    }
    const tasks = task === undefined ? [] : [task]
    return rpcResult(id, { tasks, nextPageToken: "", pageSize: size, totalSize: tasks.length })
  }

  // The purchases (a state no purchase is in: none read) …
  const purchasesCursor = any || state in STATUS_OF_STATE ? page.purchases : null
  let purchases: ReadonlyArray<Row> = []
  let morePurchases = false
  if (purchasesCursor !== null) {
    const query = new URLSearchParams({ role: "buyer", limit: String(size) })
    const status = any ? undefined : STATUS_OF_STATE[state]
    if (status !== undefined) query.set("status", status)
    if (purchasesCursor !== "") query.set("cursor", purchasesCursor)
    const answer = await runRoute(calls, { method: "GET", path: `${COMMERCE_PREFIX}/transactions?${query}` })
    if (answer.status === 400)
      return invalid(id, "pageToken", "not a token this endpoint gave (start again without one)")
    if (answer.status === 403)
      return rpcError(id, A2aErrors.invalidParams, "listing tasks needs commerce:read", { httpStatus: 403 })
    if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data))
      return rpcError(id, A2aErrors.internal, `tasks could not be listed now (${answer.status})`, {
        httpStatus: answer.status,
        ...retryAfterOf(answer.headers)
      })
    purchases = answer.json.data
      .filter(isTransaction)
      .map((tx) => ({ kind: "purchase" as const, createdAt: tx.createdAt, id: tx.id, tx }))
    morePurchases = typeof answer.json.nextCursor === "string"
  }
  // A saga's purchase (its transaction) is listed as the saga, not again as a purchase.
  const sagaPurchases =
    purchases.length === 0 ? new Set<string>() : await calls.sagaPurchases(purchases.map((r) => r.id))
  if (sagaPurchases === "unavailable")
    return rpcError(id, A2aErrors.internal, "tasks could not be listed now (503)", { httpStatus: 503 })
  // … and the approvals (a state no approval's own task is in: none read).
  const approvalsCursor = any || APPROVAL_TASK_STATES.includes(state) ? page.approvals : null
  let approvals: ReadonlyArray<Row> = []
  let moreApprovals = false
  if (approvalsCursor !== null) {
    const read = await calls.listApprovals(size, approvalsCursor === "" ? undefined : approvalsCursor)
    if (read === "invalid") return invalid(id, "pageToken", "not a token this endpoint gave (start again without one)")
    if (read === "forbidden")
      return rpcError(id, A2aErrors.invalidParams, "listing tasks needs commerce:read", { httpStatus: 403 })
    if (read === "unavailable")
      return rpcError(id, A2aErrors.internal, "tasks could not be listed now (503)", { httpStatus: 503 })
    approvals = read.data
      .filter(isListedApproval)
      .map((approval) => ({ kind: "approval" as const, createdAt: approval.createdAt, id: approval.id, approval }))
    moreApprovals = read.nextCursor !== null
  }

  // … and the sagas (a state no saga is in: none read).
  const sagasCursor = any || SAGA_TASK_STATES.includes(state) ? page.sagas : null
  let sagas: ReadonlyArray<Row> = []
  let moreSagas = false
  if (sagasCursor !== null) {
    const read = await calls.listSagas(size, sagasCursor === "" ? undefined : sagasCursor)
    if (read === "invalid") return invalid(id, "pageToken", "not a token this endpoint gave (start again without one)")
    if (read === "forbidden")
      return rpcError(id, A2aErrors.invalidParams, "listing tasks needs commerce:read", { httpStatus: 403 })
    if (read === "unavailable")
      return rpcError(id, A2aErrors.internal, "tasks could not be listed now (503)", { httpStatus: 503 })
    sagas = read.data
      .filter(isSaga)
      .map((saga) => ({ kind: "saga" as const, createdAt: saga.createdAt, id: saga.id, saga }))
    moreSagas = read.nextCursor !== null
  }

  const taken = mergeNewestFirst([purchases, approvals, sagas], size)
  const tasks = taken.flatMap((row) => {
    if (row.kind === "purchase") return sagaPurchases.has(row.id) ? [] : (keep(taskOf(row.tx)) ?? [])
    if (row.kind === "saga") return keep(sagaTaskOf(row.saga)) ?? []
    // An approved request is listed as its purchase (the transaction it made).
    return row.approval.status === "approved" ? [] : (keep(approvalTaskOf(row.approval)) ?? [])
  })
  const next: Page = {
    purchases: nextOf(
      purchasesCursor,
      purchases.length,
      taken.filter((r) => r.kind === "purchase"),
      morePurchases
    ),
    approvals: nextOf(
      approvalsCursor,
      approvals.length,
      taken.filter((r) => r.kind === "approval"),
      moreApprovals
    ),
    sagas: nextOf(
      sagasCursor,
      sagas.length,
      taken.filter((r) => r.kind === "saga"),
      moreSagas
    ),
    seen: page.seen + tasks.length
  }
  return rpcResult(id, {
    tasks,
    nextPageToken: next.purchases === null && next.approvals === null && next.sagas === null ? "" : encodeToken(next),
    pageSize: size,
    totalSize: next.seen
  })
}

/**
 * CancelTask: a purchase still waiting on its seller is withdrawn (its order cancelled, the price
 * back from the escrow in full) and answered as the task, TASK_STATE_CANCELED; cancelling it again
 * answers the same. A task that has ended otherwise is TaskNotCancelable, as is a waiting purchase
 * whose money is not the order's to give back (a paid call's). Not the caller's: TaskNotFound.
 */
export const cancelTask = async (id: unknown, params: Json, calls: A2aCalls): Promise<Json> => {
  if (isSagaId(params.id)) return cancelSagaTask(id, params.id, calls)
  if (isApprovalId(params.id)) {
    const read = await readApprovalTask(id, params.id, calls)
    if ("error" in read) return read.error
    const tx = (read.task.metadata as Json).transactionId
    if (typeof tx === "string") {
      return rpcError(
        id,
        A2aErrors.taskNotCancelable,
        `task ${params.id} was approved: its purchase is task ${tx} (cancel that one while it waits on its seller)`
      )
    }
    const state = read.task.status.state
    if (state === "TASK_STATE_CANCELED") return rpcResult(id, read.task)
    if (state !== "TASK_STATE_AUTH_REQUIRED") {
      return rpcError(id, A2aErrors.taskNotCancelable, `task ${params.id} has ended (${state}): nothing to cancel`)
    }
    // Waiting on the owner: the agent takes its request back (nothing was charged; nothing is held).
    switch (await calls.withdrawApproval(params.id)) {
      case "forbidden":
        return rpcError(id, A2aErrors.taskNotCancelable, `cancelling task ${params.id} needs commerce:buy`, {
          httpStatus: 403
        })
      case "notFound":
        return rpcError(id, A2aErrors.taskNotFound, `task ${params.id} not found`)
      case "unavailable":
        return rpcError(id, A2aErrors.internal, `task ${params.id} could not be cancelled now`, { httpStatus: 503 })
      case "closed":
      case "cancelled": {
        // The owner's decision may have come first: the task as it stands then.
        const now = await readApprovalTask(id, params.id, calls)
        if ("error" in now) return now.error
        return now.task.status.state === "TASK_STATE_CANCELED"
          ? rpcResult(id, now.task)
          : rpcError(
              id,
              A2aErrors.taskNotCancelable,
              `task ${params.id} was decided before the cancel (${now.task.status.state}): nothing to cancel`
            )
      }
    }
  }
  const read = await readTask(id, params.id, readTransaction(calls))
  if ("error" in read) return read.error
  const { tx } = read
  if (taskState(tx) === "TASK_STATE_CANCELED") return rpcResult(id, taskOf(tx))
  if (tx.status !== "pending")
    return rpcError(id, A2aErrors.taskNotCancelable, `task ${tx.id} has ended (${taskState(tx)}): nothing to cancel`)
  const outcome = await calls.cancelOrder(tx.id)
  switch (outcome) {
    case "forbidden":
      return rpcError(id, A2aErrors.taskNotCancelable, `cancelling task ${tx.id} needs commerce:buy`, {
        httpStatus: 403
      })
    case "notFound":
      return rpcError(
        id,
        A2aErrors.taskNotCancelable,
        `task ${tx.id} cannot be cancelled: its money is not an order's to give back (a paid call or a saga's step)`
      )
    case "unavailable":
      return rpcError(id, A2aErrors.internal, `task ${tx.id} could not be cancelled now`, { httpStatus: 503 })
    case "closed":
    case "cancelled": {
      const now = await readTask(id, tx.id, readTransaction(calls))
      if ("error" in now) return now.error
      return taskState(now.tx) === "TASK_STATE_CANCELED"
        ? rpcResult(id, taskOf(now.tx))
        : rpcError(
            id,
            A2aErrors.taskNotCancelable,
            `task ${tx.id} ended before the cancel (${taskState(now.tx)}): nothing to cancel`
          )
    }
  }
}

/**
 * CancelTask of a saga: TaskNotCancelable. A saga has no cancel: it runs to its end on its own —
 * completed, or compensated (its escrow given back) when a step fails, its seller fails the order or
 * the deadline passes — and its seller's order is the saga's, not the buyer's to withdraw (the money
 * is in the saga's escrow, moved only by its own steps). Not the caller's: TaskNotFound.
 */
const cancelSagaTask = async (id: unknown, sagaId: string, calls: A2aCalls): Promise<Json> => {
  const read = await readSagaTask(id, sagaId, calls)
  if ("error" in read) return read.error
  const task = sagaTaskOf(read.saga)
  return read.saga.status === "running"
    ? rpcError(
        id,
        A2aErrors.taskNotCancelable,
        `task ${sagaId} cannot be cancelled: a saga runs to its end on its own (completed, or compensated with the price given back when its seller fails or misses its deadline); buy with the buy skill for a purchase you can cancel while it waits`,
        { state: task.status.state, currentStep: read.saga.currentStep }
      )
    : rpcError(id, A2aErrors.taskNotCancelable, `task ${sagaId} has ended (${task.status.state}): nothing to cancel`, {
        state: task.status.state
      })
}

/** Whether a task id names an approval (a purchase waiting on the owner) rather than a transaction. */
export const isApprovalId = (id: unknown): id is string => typeof id === "string" && id.startsWith("apr_")

/**
 * The task of the caller's approval `id`: waiting on the owner (AUTH_REQUIRED), decided, or, once
 * approved, its purchase's state read from the transaction. Not the caller's: TaskNotFound.
 */
export const readApprovalTask = async (
  rpcId: unknown,
  id: string,
  calls: A2aCalls
): Promise<{ readonly task: ReturnType<typeof approvalTaskOf> } | { readonly error: RpcError }> => {
  const approval = await calls.readApproval(id)
  if (approval === "unavailable")
    return { error: rpcError(rpcId, A2aErrors.internal, `task ${id} could not be read now`, { httpStatus: 503 }) }
  if (!isApproval(approval))
    return {
      error: rpcError(
        rpcId,
        A2aErrors.taskNotFound,
        `no task ${id}: an approval task is one of your purchases waiting on your owner`
      )
    }
  if (approval.status === "approved" && typeof approval.transactionId === "string") {
    const read = await readTask(rpcId, approval.transactionId, readTransaction(calls))
    return { task: approvalTaskOf(approval, "tx" in read ? read.tx : undefined) }
  }
  return { task: approvalTaskOf(approval) }
}

/** The permission a skill needs (its `commerce:…` tag). */
const permissionOf = (skill: { readonly tags: ReadonlyArray<string> }) =>
  skill.tags.find((t) => t.startsWith("commerce:"))

/**
 * GetExtendedAgentCard: the public card for the authenticated caller — its skills narrowed to those
 * its key may call (each skill's permission), and the agent it acts as named in the description.
 */
export const extendedCard = (
  id: unknown,
  card: Json & { readonly skills: ReadonlyArray<Json & { readonly tags: ReadonlyArray<string> }> },
  caller: { readonly agentId: string | undefined; readonly permissions: ReadonlySet<string> }
) =>
  rpcResult(id, {
    ...card,
    description: `${String(card.description)} This card is for agent ${caller.agentId ?? "(none)"}: the skills its key may call.`,
    skills: card.skills.filter((s) => {
      const needed = permissionOf(s)
      return needed === undefined || caller.permissions.has(needed)
    })
  })
