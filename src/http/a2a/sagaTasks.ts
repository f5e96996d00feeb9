// A purchase saga (docs/saga.md) as an A2A 1.0 Task: its id is the saga id, and its state is read
// from the caller's saga at every call, through the same route REST reads (GET /commerce/saga/:id):
// no task store, as for a buy's task (./tasks.ts).
import { isProblem, toRouteRequest } from "../descriptors/toolRequest.js"
import { agentTools } from "../descriptors/tools.js"
import { type A2aCalls, runRoute } from "./calls.js"
import { A2aErrors, isRecord, type Json, retryAfterOf, rpcError, type RpcError } from "./rpc.js"

/** The fields of a saga (the route's JSON, docs/saga.md) that make its task. */
export interface TaskSaga extends Json {
  readonly id: string
  readonly status: string
  readonly currentStep: string | null
  readonly transactionId: string | null
  readonly steps: ReadonlyArray<Json & { readonly name: string; readonly status: string }>
  readonly failure: { readonly step: string; readonly reason: string } | null
  readonly output?: unknown
  readonly createdAt: string
  readonly updatedAt: string
  readonly finishedAt: string | null
}

/** Whether a task id names a saga (`saga_…`) rather than a transaction or an approval. */
export const isSagaId = (id: unknown): id is string => typeof id === "string" && id.startsWith("saga_")

export const isSaga = (u: unknown): u is TaskSaga =>
  isRecord(u) &&
  isSagaId(u.id) &&
  typeof u.status === "string" &&
  (u.currentStep === null || typeof u.currentStep === "string") &&
  (u.transactionId === null || typeof u.transactionId === "string") &&
  Array.isArray(u.steps) &&
  u.steps.every((s) => isRecord(s) && typeof s.name === "string" && typeof s.status === "string") &&
  (u.failure === null ||
    (isRecord(u.failure) && typeof u.failure.step === "string" && typeof u.failure.reason === "string")) &&
  typeof u.createdAt === "string" &&
  typeof u.updatedAt === "string" &&
  (u.finishedAt === null || typeof u.finishedAt === "string")

const STATES: Readonly<Record<string, string>> = {
  running: "TASK_STATE_WORKING",
  completed: "TASK_STATE_COMPLETED",
  // Every step before the failure undone: the escrow given back, nothing charged.
  compensated: "TASK_STATE_FAILED"
}

/** The task state of a saga. */
export const sagaTaskState = (saga: TaskSaga) => STATES[saga.status] ?? "TASK_STATE_UNSPECIFIED"

/** The order a running saga's deliver step waits on (a real seller's: its id is the saga's transaction), if any. */
export const waitingOrder = (saga: TaskSaga): string | undefined =>
  saga.status === "running" && saga.currentStep === "deliver" && saga.transactionId !== null
    ? saga.transactionId
    : undefined

const summaryOf = (saga: TaskSaga) => {
  switch (saga.status) {
    case "running":
      return waitingOrder(saga) !== undefined
        ? `Waiting for the seller to deliver order ${saga.transactionId}: the price is held in escrow until it delivers, and given back in full if it fails or misses its deadline.`
        : `Step ${saga.currentStep ?? "quote"} is under way.`
    case "completed":
      return `Completed: the seller delivered (the output is the task's artifact) and was paid from the escrow; the purchase is transaction ${saga.transactionId ?? "(none)"}.`
    default:
      return saga.failure !== null
        ? `Failed at step ${saga.failure.step}: ${saga.failure.reason}. Compensated: nothing was charged.`
        : "Compensated: nothing was charged."
  }
}

/**
 * The Task of a saga (proto JSON): the saga, exactly as GET /saga/:id answers it, as a data part of
 * the status message; the seller's output as the artifact once completed; each step's state in the
 * metadata. Context and task are both the saga.
 */
export const sagaTaskOf = (saga: TaskSaga, metadata: Json = {}) => ({
  id: saga.id,
  contextId: saga.id,
  status: {
    state: sagaTaskState(saga),
    message: {
      messageId: `${saga.id}.${saga.status}.${saga.currentStep ?? "end"}`,
      contextId: saga.id,
      taskId: saga.id,
      role: "ROLE_AGENT",
      parts: [
        { text: summaryOf(saga), mediaType: "text/plain" },
        { data: saga, mediaType: "application/json" }
      ]
    },
    timestamp: saga.finishedAt ?? saga.updatedAt
  },
  artifacts:
    saga.status === "completed"
      ? [
          {
            artifactId: "output",
            name: "output",
            description: "The seller's delivery (the saga's output).",
            parts: [{ data: saga.output ?? null, mediaType: "application/json" }]
          }
        ]
      : [],
  metadata: {
    skill: "buy_saga",
    sagaStatus: saga.status,
    currentStep: saga.currentStep,
    steps: Object.fromEntries(saga.steps.map((s) => [s.name, s.status])),
    ...(saga.transactionId !== null ? { transactionId: saga.transactionId } : {}),
    ...(saga.failure !== null ? { failure: saga.failure } : {}),
    ...metadata
  }
})

const getSagaTool = agentTools.find((t) => t.name === "get_saga")!

/**
 * The caller's saga `id` (GET /saga/:id with its key), or the error to answer: another agent's, an
 * id that is no saga, or a key without commerce:read is TaskNotFound, as GetTask answers for a buy.
 */
export const readSagaTask = async (
  rpcId: unknown,
  id: string,
  calls: A2aCalls
): Promise<{ readonly saga: TaskSaga } | { readonly error: RpcError }> => {
  const route = toRouteRequest(getSagaTool, { id })
  const answer = isProblem(route) ? { status: 404, json: {}, headers: new Headers() } : await runRoute(calls, route)
  if (answer.status === 200 && isSaga(answer.json)) return { saga: answer.json }
  if (answer.status === 403)
    return {
      error: rpcError(rpcId, A2aErrors.taskNotFound, `task ${id} is not accessible: reading a task needs commerce:read`)
    }
  if (answer.status < 500 && answer.status !== 429)
    return {
      error: rpcError(rpcId, A2aErrors.taskNotFound, `no task ${id}: a saga task is one of your sagas, named by its id`)
    }
  return {
    error: rpcError(rpcId, A2aErrors.internal, `task ${id} could not be read now (${answer.status})`, {
      httpStatus: answer.status,
      ...retryAfterOf(answer.headers)
    })
  }
}

/** How often a running saga is read again when no order's signal tells of its next step. */
export const SAGA_POLL_MS = 500

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

/**
 * Waits, at most `maxMs`, for a running saga's next move: on its seller's order's outcome signal
 * while deliver waits on one (then a poll's time for a saga worker to take the answer up), else
 * SAGA_POLL_MS.
 */
export const sagaTick = async (calls: A2aCalls, saga: TaskSaga, maxMs: number) => {
  const order = waitingOrder(saga)
  if (order !== undefined && !(await calls.awaitOutcome(order, maxMs))) return
  await sleep(Math.min(SAGA_POLL_MS, maxMs))
}

/**
 * A saga started by a blocking SendMessage: followed until it ends or `untilMs` (the message's arrival
 * plus ORDER_WAIT_MS) has passed, then answered as it stands.
 */
export const awaitSaga = async (calls: A2aCalls, saga: TaskSaga, untilMs: number): Promise<TaskSaga> => {
  let current = saga
  while (current.status === "running" && Date.now() < untilMs) {
    await sagaTick(calls, current, untilMs - Date.now())
    const read = await readSagaTask(null, current.id, calls)
    if ("error" in read) return current
    current = read.saga
  }
  return current
}
