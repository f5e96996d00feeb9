// SendStreamingMessage and SubscribeToTask (docs/a2a.md "Streaming"): the answer is a text/event-stream
// of JSON-RPC responses, each a StreamResponse. A message that needs no task is one `message` event;
// a buy that waits on its seller is its `task` (working), then, when the seller answers (or the buyer
// cancels, or the deadline passes), the artifact (`artifactUpdate`, once delivered) and the final
// `statusUpdate`, and the stream ends. Nothing is kept: the stream follows the order's own outcome
// signal (Orders.awaitOutcome) and reads the task from the transaction, as GetTask does.
import { type A2aCalls, readTransaction } from "./calls.js"
import { A2aErrors, isRecord, type Json, rpcError, rpcResult } from "./rpc.js"
import { readTask, type TaskTransaction, taskOf, taskState } from "./tasks.js"

/** How often an open stream says it is alive (an SSE comment) while the seller has not answered. */
export const STREAM_KEEPALIVE_MS = 15_000

/** An event of the stream: a JSON-RPC response, or null for a keep-alive comment. */
export type StreamEvent = Json | null

/** What a streaming method answers: an error before any event (plain JSON), or the events. */
export type StreamAnswer = { readonly error: Json } | { readonly events: AsyncIterable<StreamEvent> }

const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"])

/**
 * The task's events from now until it ends: keep-alives while it waits, then its artifact (when
 * delivered) and its final status. A task that cannot be read any more ends the stream.
 */
async function* follow(rpcId: unknown, tx: TaskTransaction, calls: A2aCalls): AsyncGenerator<StreamEvent> {
  let current = tx
  while (!TERMINAL.has(taskState(current))) {
    await calls.awaitOutcome(current.id, STREAM_KEEPALIVE_MS)
    const read = await readTask(rpcId, current.id, readTransaction(calls))
    if ("error" in read) {
      yield read.error
      return
    }
    current = read.tx
    if (!TERMINAL.has(taskState(current))) yield null
  }
  const task = taskOf(current)
  for (const artifact of task.artifacts)
    yield rpcResult(rpcId, {
      artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact, append: false, lastChunk: true }
    })
  yield rpcResult(rpcId, {
    statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata }
  })
}

async function* once(event: Json): AsyncGenerator<StreamEvent> {
  yield event
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
  const read = await readTask(rpcId, task.id, readTransaction(calls))
  if ("error" in read) return { events: once(rpcResult(rpcId, result)) }
  return { events: taskThenFollow(rpcId, read.tx, task, calls) }
}

/** SubscribeToTask: the caller's working task now, then its events to its end. An ended task is -32004, as the spec says. */
export const subscribeToTask = async (rpcId: unknown, params: Json, calls: A2aCalls): Promise<StreamAnswer> => {
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
