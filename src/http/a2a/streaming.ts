// SendStreamingMessage and SubscribeToTask (docs/a2a.md "Streaming"): the answer is a text/event-stream
// of JSON-RPC responses, each a StreamResponse. A message that needs no task is one `message` event;
// a buy that waits on its seller is its `task` (working), then, when the seller answers (or the buyer
// cancels, or the deadline passes), the artifact (`artifactUpdate`, once delivered) and the final
// `statusUpdate`, and the stream ends. Nothing is kept: the stream follows the order's own outcome
// signal (Orders.awaitOutcome) and reads the task from the transaction, as GetTask does. A buy waiting
// on its owner (an approval's task) is followed too: its approval read every second until the owner
// decides, then its purchase. A saga's task is followed step by step to its end (./sagaTasks.ts).
import { isX402TaskId } from "./x402Tasks.js"
import { type A2aCalls, readTransaction } from "./calls.js"
import { A2aErrors, isRecord, type Json, rpcError, rpcResult } from "./rpc.js"
import { isApprovalId, readApprovalTask } from "./taskMethods.js"
import { readTask, type TaskTransaction, taskOf, taskState } from "./tasks.js"
import { isSagaId, readSagaTask, SAGA_POLL_MS, sagaTaskOf, sagaTick, type TaskSaga } from "./sagaTasks.js"

/** How often an open stream says it is alive (an SSE comment) while the seller has not answered. */
export const STREAM_KEEPALIVE_MS = 15_000

/** An event of the stream: a JSON-RPC response, or null for a keep-alive comment. */
export type StreamEvent = Json | null

/** What a streaming method answers: an error before any event (plain JSON), or the events. */
export type StreamAnswer = { readonly error: Json } | { readonly events: AsyncIterable<StreamEvent> }

const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"])
/** An approval's task ends in these (REJECTED: declined), or as its purchase does. */
const APPROVAL_TERMINAL = new Set([...TERMINAL, "TASK_STATE_REJECTED"])
/** How often a stream of a buy waiting on its owner reads the approval again (no signal tells it). */
export const APPROVAL_POLL_MS = 1_000

type Task = Json & {
  readonly id: string
  readonly contextId: string
  readonly status: Json & { readonly state: string }
  readonly artifacts: ReadonlyArray<unknown>
  readonly metadata: Json
}

/** A task's end: its artifacts (once delivered), then its final status. */
function* ending(rpcId: unknown, task: Task): Generator<StreamEvent> {
  for (const artifact of task.artifacts)
    yield rpcResult(rpcId, {
      artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact, append: false, lastChunk: true }
    })
  yield rpcResult(rpcId, {
    statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata }
  })
}

/**
 * A buy waiting on its owner (an approval's task, AUTH_REQUIRED) from now until it ends: the approval
 * read every APPROVAL_POLL_MS; declined, expired, void or withdrawn → its final status; approved → a
 * WORKING status (the purchase under way, `metadata.transactionId` naming it), then the purchase
 * followed on its order's signal to its end, still under the approval's task id.
 */
async function* followApproval(rpcId: unknown, first: Task, calls: A2aCalls): AsyncGenerator<StreamEvent> {
  let state = first.status.state
  let quietSince = Date.now()
  for (;;) {
    const read = await readApprovalTask(rpcId, first.id, calls)
    if ("error" in read) {
      yield read.error
      return
    }
    const task = read.task as Task
    if (APPROVAL_TERMINAL.has(task.status.state)) {
      yield* ending(rpcId, task)
      return
    }
    if (task.status.state !== state) {
      state = task.status.state
      quietSince = Date.now()
      yield rpcResult(rpcId, {
        statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata }
      })
    }
    const purchase = task.metadata.transactionId
    if (typeof purchase === "string") await calls.awaitOutcome(purchase, STREAM_KEEPALIVE_MS)
    else await new Promise((resolve) => setTimeout(resolve, APPROVAL_POLL_MS))
    if (Date.now() - quietSince >= STREAM_KEEPALIVE_MS) {
      quietSince = Date.now()
      yield null
    }
  }
}

/**
 * The task's events from now until it ends: keep-alives while it waits, then its artifact (when
 * delivered) and its final status. A task that cannot be read any more ends the stream.
 */
async function* follow(rpcId: unknown, tx: TaskTransaction, calls: A2aCalls): AsyncGenerator<StreamEvent> {
  let current = tx
  while (!TERMINAL.has(taskState(current))) {
    const ended = await calls.awaitOutcome(current.id, STREAM_KEEPALIVE_MS)
    const read = await readTask(rpcId, current.id, readTransaction(calls))
    if ("error" in read) {
      yield read.error
      return
    }
    current = read.tx
    if (TERMINAL.has(taskState(current))) break
    // The order has ended but its purchase has not (a saga's order: the saga settles or fails it
    // next, in a worker): read again shortly, rather than at once and again (the signal stays set).
    if (ended) await new Promise((resolve) => setTimeout(resolve, SAGA_POLL_MS))
    else yield null
  }
  yield* ending(rpcId, taskOf(current))
}

/**
 * A saga's task from now until it ends: a WORKING status update each time its current step changes
 * (the steps' states in its metadata), keep-alives while it waits, then its artifact (completed) and
 * final status (COMPLETED, or FAILED when compensated). It waits on its seller's order's signal while
 * deliver waits on one, else reads the saga every SAGA_POLL_MS.
 */
async function* followSaga(rpcId: unknown, first: TaskSaga, calls: A2aCalls): AsyncGenerator<StreamEvent> {
  let current = first
  let quietSince = Date.now()
  while (current.status === "running") {
    await sagaTick(calls, current, STREAM_KEEPALIVE_MS)
    const read = await readSagaTask(rpcId, current.id, calls)
    if ("error" in read) {
      yield read.error
      return
    }
    const moved = read.saga.currentStep !== current.currentStep
    current = read.saga
    if (current.status !== "running") break
    if (moved) {
      quietSince = Date.now()
      const task = sagaTaskOf(current)
      yield rpcResult(rpcId, {
        statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata }
      })
    } else if (Date.now() - quietSince >= STREAM_KEEPALIVE_MS) {
      quietSince = Date.now()
      yield null
    }
  }
  yield* ending(rpcId, sagaTaskOf(current) as Task)
}

async function* sagaThenFollow(rpcId: unknown, saga: TaskSaga, first: Json, calls: A2aCalls) {
  yield rpcResult(rpcId, { task: first })
  yield* followSaga(rpcId, saga, calls)
}

async function* once(event: Json): AsyncGenerator<StreamEvent> {
  yield event
}

async function* approvalThenFollow(rpcId: unknown, first: Task, calls: A2aCalls) {
  yield rpcResult(rpcId, { task: first })
  yield* followApproval(rpcId, first, calls)
}

async function* taskThenFollow(rpcId: unknown, tx: TaskTransaction, first: Json, calls: A2aCalls) {
  yield rpcResult(rpcId, { task: first })
  yield* follow(rpcId, tx, calls)
}

/**
 * SendStreamingMessage: the message runs as SendMessage does (the same skill, intent, key,
 * Idempotency-Key), returning at once; a task it answers is followed to its end.
 */
export const sendStreamingMessage = async (
  rpcId: unknown,
  params: Json,
  calls: A2aCalls,
  sendMessage: (params: Json) => Promise<Json>
): Promise<StreamAnswer> => {
  const configuration = isRecord(params.configuration) ? params.configuration : {}
  const answer = await sendMessage({ ...params, configuration: { ...configuration, returnImmediately: true } })
  if (isRecord(answer.error)) return { error: answer }
  const result = isRecord(answer.result) ? answer.result : {}
  if (!isRecord(result.task)) return { events: once(rpcResult(rpcId, result)) }
  const task = result.task
  // A buy waiting on its owner: followed until the owner decides, then as its purchase.
  if (isApprovalId(task.id)) return { events: approvalThenFollow(rpcId, task as Task, calls) }
  // A saga: followed to its end; one that ended at once (a platform seller's) is that one task.
  if (isSagaId(task.id)) {
    const working = isRecord(task.status) && task.status.state === "TASK_STATE_WORKING"
    const saga = working ? await readSagaTask(rpcId, task.id, calls) : undefined
    if (saga === undefined || "error" in saga) return { events: once(rpcResult(rpcId, result)) }
    return { events: sagaThenFollow(rpcId, saga.saga, task, calls) }
  }
  const read = await readTask(rpcId, task.id, readTransaction(calls))
  if ("error" in read) return { events: once(rpcResult(rpcId, result)) }
  return { events: taskThenFollow(rpcId, read.tx, task, calls) }
}

/** SubscribeToTask: the caller's working task now, then its events to its end. An ended task is -32004, as the spec says. */
export const subscribeToTask = async (rpcId: unknown, params: Json, calls: A2aCalls): Promise<StreamAnswer> => {
  if (isX402TaskId(params.id))
    return {
      error: rpcError(
        rpcId,
        A2aErrors.unsupportedOperation,
        `task ${params.id} is a buy paid with x402: follow it with GetTask (its purchase, metadata.transactionId, can be subscribed to)`
      )
    }
  if (isSagaId(params.id)) {
    const read = await readSagaTask(rpcId, params.id, calls)
    if ("error" in read) return { error: read.error }
    const task = sagaTaskOf(read.saga)
    if (read.saga.status !== "running")
      return {
        error: rpcError(
          rpcId,
          A2aErrors.unsupportedOperation,
          `task ${task.id} has ended (${task.status.state}): read it with GetTask; only a working task can be subscribed to`
        )
      }
    return { events: sagaThenFollow(rpcId, read.saga, task, calls) }
  }
  if (isApprovalId(params.id)) {
    const approval = await readApprovalTask(rpcId, params.id, calls)
    if ("error" in approval) return { error: approval.error }
    const task = approval.task as Task
    if (APPROVAL_TERMINAL.has(task.status.state))
      return {
        error: rpcError(
          rpcId,
          A2aErrors.unsupportedOperation,
          `task ${task.id} has ended (${task.status.state}): read it with GetTask; only a waiting task can be subscribed to`
        )
      }
    return { events: approvalThenFollow(rpcId, task, calls) }
  }
  const read = await readTask(rpcId, params.id, readTransaction(calls))
  if ("error" in read) return { error: read.error }
  const state = taskState(read.tx)
  if (TERMINAL.has(state))
    return {
      error: rpcError(
        rpcId,
        A2aErrors.unsupportedOperation,
        `task ${read.tx.id} has ended (${state}): read it with GetTask; only a working task can be subscribed to`
      )
    }
  return { events: taskThenFollow(rpcId, read.tx, taskOf(read.tx), calls) }
}

/** The SSE text of the events: `data:` lines of each response, a comment for a keep-alive. */
export async function* sseText(events: AsyncIterable<StreamEvent>): AsyncGenerator<string> {
  for await (const event of events) yield event === null ? ": keep-alive\n\n" : `data: ${JSON.stringify(event)}\n\n`
}
