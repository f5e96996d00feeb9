// A2A push notifications (docs/a2a.md "Push notifications"): a buyer names a URL where it wants to
// be told that one of its tasks (a purchase, an approval, a saga) has ended; the worker below tells it once, with the task as GetTask
// answers it (artifacts included), through the webhooks' transport (its URL policy and SSRF guard),
// retried with backoff. The configurations are kept in PushConfigStore, so a restart forgets none.
import { Clock, Effect, Layer } from "effect"
import {
  PUSH_CONFIG_ID,
  PUSH_CONFIGS_OPEN_PER_AGENT,
  PUSH_CONFIGS_PER_TASK,
  PUSH_SECRET_MAX,
  type PushConfigRecord
} from "../../schema/a2a/push.js"
import { PushConfigStore } from "../../services/a2a/PushConfigStore.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Ids, Transactor } from "../../services/platform/Db.js"
import { WebhookTransport } from "../../services/webhooks/WebhookTransport.js"
import { batchLeaseMs } from "../../services/webhooks/policy.js"
import { A2aErrors, isRecord, type Json, rpcError, rpcResult } from "./rpc.js"
import { approvalTaskOf, isApproval, isTransaction, taskOf } from "./tasks.js"
import { Sagas } from "../../services/saga/Saga.js"
// The wait after the n-th failed notification: the order pushes' 1 s, 2 s, 4 s … at most 30 s.
import { pushBackoff } from "../../services/purchases/push.js"
import { isSaga, sagaTaskOf } from "./sagaTasks.js"

/** How often the worker looks for due configurations, and how many it takes at once. */
export const PUSH_NOTIFY_TICK_MS = 500
export const PUSH_NOTIFY_BATCH = 20
/** Notifications sent at once in a pass; a claimed batch is leased for all of its waves (batchLeaseMs). */
export const PUSH_NOTIFY_CONCURRENCY = 8
/** How long a pass's claimed configurations are its own, under the transport's timeout. */
export const pushNotifyLeaseMs = (timeoutMs: number): number =>
  batchLeaseMs(timeoutMs, PUSH_NOTIFY_BATCH, PUSH_NOTIFY_CONCURRENCY)
/** How often a configuration whose task is still waiting is looked at again. */
export const PUSH_NOTIFY_RECHECK_MS = 1_000
/** Notifications sent without a 2xx before the configuration is given up. */
export const PUSH_NOTIFY_ATTEMPTS = 8
/** The states a task ends in: the notification is sent when its task is in one. */
export const FINAL_TASK_STATES: ReadonlySet<string> = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED"
])
/** The notification's content type (A2A's JSON). */
export const A2A_JSON = "application/a2a+json"

const iso = (ms: number) => new Date(ms).toISOString()
const AUTH_SCHEME = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,31}$/
const HEADER_SAFE = /^[\x20-\x7e]*$/

/** A configuration as the spec's TaskPushNotificationConfig; the credentials are never read back. */
export const configWire = (r: PushConfigRecord) => ({
  tenant: "",
  id: r.id,
  taskId: r.taskId,
  url: r.url,
  token: r.token ?? "",
  ...(r.authScheme === null ? {} : { authentication: { scheme: r.authScheme, credentials: "" } })
})

const invalid = (id: unknown, field: string, message: string) =>
  rpcError(id, A2aErrors.invalidParams, `${field}: ${message}`, { field })
const unavailable = (id: unknown) =>
  rpcError(id, A2aErrors.internal, "push notification configurations cannot be read or written now", {
    httpStatus: 503
  })

/** What the methods need of the endpoint: who calls, and whether a task id names one of its tasks. */
export interface PushMethodContext {
  readonly agentId: string | undefined
  /** Undefined when `taskId` is one of the caller's tasks, else the JSON-RPC error to answer. */
  readonly ownTask: (taskId: string) => Promise<Json | undefined>
}

/**
 * The four push notification configuration methods. Create checks the task is the caller's, the URL
 * against the webhooks' URL policy, the id, token and authentication, and the limits (a task's
 * PUSH_CONFIGS_PER_TASK, an agent's PUSH_CONFIGS_OPEN_PER_AGENT not yet done); the configuration is
 * due at once (a task that has already ended is notified at the worker's next pass).
 */
export const pushConfigMethod = Effect.fnUntraced(function* (
  method: string,
  id: unknown,
  params: Json,
  context: PushMethodContext
) {
  const store = yield* PushConfigStore
  const taskId = params.taskId
  if (typeof taskId !== "string" || taskId === "") return invalid(id, "taskId", "the task's id is required")
  if (context.agentId === undefined) return rpcError(id, A2aErrors.taskNotFound, `task ${taskId} not found`)
  const agentId = context.agentId
  const notOwned = yield* Effect.promise(() => context.ownTask(taskId))
  if (notOwned !== undefined) return notOwned
  const guarded = <A>(effect: Effect.Effect<A, { readonly _tag: "StorageUnavailable" }>) =>
    Effect.map(Effect.result(effect), (r) => (r._tag === "Success" ? r.success : undefined))

  switch (method) {
    case "GetTaskPushNotificationConfig": {
      if (typeof params.id !== "string" || params.id === "")
        return invalid(id, "id", "the configuration's id is required")
      const read = yield* Effect.result(store.get(taskId, params.id))
      if (read._tag === "Failure") return unavailable(id)
      const r = read.success
      return r === undefined || r.agentId !== agentId
        ? rpcError(id, A2aErrors.taskNotFound, `no push notification configuration ${params.id} on task ${taskId}`)
        : rpcResult(id, configWire(r))
    }
    case "ListTaskPushNotificationConfigs": {
      if (params.pageToken !== undefined && params.pageToken !== "")
        return invalid(id, "pageToken", "not a token this endpoint gave (a task's configurations fit on one page)")
      const read = yield* Effect.result(store.listForTask(taskId))
      if (read._tag === "Failure") return unavailable(id)
      const configs = read.success.filter((r) => r.agentId === agentId).map(configWire)
      return rpcResult(id, { configs, nextPageToken: "" })
    }
    case "DeleteTaskPushNotificationConfig": {
      if (typeof params.id !== "string" || params.id === "")
        return invalid(id, "id", "the configuration's id is required")
      const configId = params.id
      const deleted = yield* guarded(
        Effect.flatMap(store.get(taskId, configId), (r) =>
          r === undefined || r.agentId !== agentId ? Effect.succeed(false) : store.delete(taskId, configId)
        )
      )
      // Gone already (or never there): deleted all the same, so a retried delete succeeds.
      return deleted === undefined ? unavailable(id) : rpcResult(id, {})
    }
  }

  // CreateTaskPushNotificationConfig: the config's fields flat (v1), or nested as `pushNotificationConfig`.
  const body = isRecord(params.pushNotificationConfig) ? { ...params, ...params.pushNotificationConfig } : params
  const configId = body.id ?? ""
  if (typeof configId !== "string" || (configId !== "" && !PUSH_CONFIG_ID.test(configId)))
    return invalid(id, "id", "1 to 64 letters, digits, '.', '_', ':' or '-' (or none: one is made)")
  const url = body.url
  if (typeof url !== "string" || url === "") return invalid(id, "url", "the URL to notify is required")
  const checked = yield* Effect.result((yield* WebhookTransport).check(url))
  if (checked._tag === "Failure") return invalid(id, "url", checked.failure.message)
  const token = body.token ?? ""
  if (typeof token !== "string" || token.length > PUSH_SECRET_MAX || !HEADER_SAFE.test(token))
    return invalid(id, "token", `a string of at most ${PUSH_SECRET_MAX} printable ASCII characters`)
  const auth = body.authentication
  let authScheme: string | null = null
  let authCredentials: string | null = null
  if (auth !== undefined && auth !== null) {
    const scheme = isRecord(auth) ? auth.scheme : undefined
    const credentials = isRecord(auth) ? auth.credentials : undefined
    if (typeof scheme !== "string" || !AUTH_SCHEME.test(scheme))
      return invalid(id, "authentication.scheme", "an HTTP authentication scheme, e.g. Bearer")
    if (
      typeof credentials !== "string" ||
      credentials === "" ||
      credentials.length > PUSH_SECRET_MAX ||
      !HEADER_SAFE.test(credentials)
    )
      return invalid(
        id,
        "authentication.credentials",
        `the credentials, at most ${PUSH_SECRET_MAX} printable ASCII characters`
      )
    authScheme = scheme
    authCredentials = credentials
  }

  const { atomically } = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  const made = configId === "" ? yield* (yield* Ids).make("pnc") : configId
  const written = yield* Effect.result(
    atomically(
      Effect.gen(function* () {
        // Counted and written under the agent's lock: two creations at once cannot both take the last place.
        yield* store.lockAgent(agentId)
        const existing = yield* store.listForTask(taskId)
        const replaces = existing.find((r) => r.id === made)
        if (replaces !== undefined && replaces.agentId !== agentId) return "taken" as const
        if (replaces === undefined && existing.length >= PUSH_CONFIGS_PER_TASK) return "task full" as const
        if (replaces === undefined && (yield* store.countOpen(agentId)) >= PUSH_CONFIGS_OPEN_PER_AGENT)
          return "agent full" as const
        const record: PushConfigRecord = {
          taskId,
          id: made,
          agentId,
          url,
          token: token === "" ? null : token,
          authScheme,
          authCredentials,
          createdAt: iso(now),
          nextAttemptAt: iso(now),
          attempts: 0,
          lastError: null,
          pushedState: null,
          doneAt: null
        }
        yield* store.put(record)
        return record
      })
    )
  )
  if (written._tag === "Failure") return unavailable(id)
  switch (written.success) {
    case "taken":
      return invalid(id, "id", `configuration ${made} of task ${taskId} is not yours`)
    case "task full":
      return invalid(id, "taskId", `a task has at most ${PUSH_CONFIGS_PER_TASK} push notification configurations`)
    case "agent full":
      return invalid(
        id,
        "taskId",
        `at most ${PUSH_CONFIGS_OPEN_PER_AGENT} push notification configurations may wait at once; delete one, or wait for a task to end`
      )
    default:
      return rpcResult(id, configWire(written.success))
  }
})

/** The task a configuration is about, as GetTask answers it (JSON), read as its agent. */
const taskNow = Effect.fnUntraced(function* (r: PushConfigRecord) {
  const commerce = yield* Commerce
  const asJson = (u: unknown) => JSON.parse(JSON.stringify(u)) as unknown
  if (r.taskId.startsWith("saga_")) {
    const saga = asJson(yield* (yield* Sagas).get(r.agentId, r.taskId))
    return isSaga(saga) ? sagaTaskOf(saga) : undefined
  }
  if (r.taskId.startsWith("apr_")) {
    const approval = asJson(yield* commerce.agentApproval(r.agentId, r.taskId))
    if (!isApproval(approval)) return undefined
    const txId = approval.transactionId
    if (approval.status === "approved" && typeof txId === "string") {
      const tx = asJson(yield* commerce.getTransaction(r.agentId, txId))
      return approvalTaskOf(approval, isTransaction(tx) ? tx : undefined)
    }
    return approvalTaskOf(approval)
  }
  const tx = asJson(yield* commerce.getTransaction(r.agentId, r.taskId))
  return isTransaction(tx) ? taskOf(tx) : undefined
})

/**
 * One claimed configuration: its task still waiting → looked at again in PUSH_NOTIFY_RECHECK_MS;
 * ended → notified (the task, as `{"task": …}`); a 2xx ends it, anything else is retried with
 * backoff, PUSH_NOTIFY_ATTEMPTS times in all.
 */
const notifyOne = Effect.fnUntraced(
  function* (r: PushConfigRecord) {
    const store = yield* PushConfigStore
    const transport = yield* WebhookTransport
    const read = yield* Effect.result(taskNow(r))
    const now = yield* Clock.currentTimeMillis
    if (read._tag === "Failure" || read.success === undefined) {
      const error =
        read._tag === "Failure" && read.failure._tag === "NotFound" ? "the task is gone" : "the task could not be read"
      // A task that cannot be read now is looked at again later; one that is gone ends the configuration.
      const gone = read._tag === "Failure" && read.failure._tag === "NotFound"
      return yield* store.update({
        ...r,
        nextAttemptAt: gone ? null : iso(now + PUSH_NOTIFY_RECHECK_MS),
        doneAt: gone ? iso(now) : null,
        lastError: error
      })
    }
    const task = read.success
    const state = task.status.state
    if (!FINAL_TASK_STATES.has(state))
      return yield* store.update({ ...r, nextAttemptAt: iso(now + PUSH_NOTIFY_RECHECK_MS) })
    const headers: Record<string, string> = { "content-type": A2A_JSON, "a2a-version": "1.0" }
    if (r.authScheme !== null && r.authCredentials !== null)
      headers.authorization = `${r.authScheme} ${r.authCredentials}`
    else if (r.token !== null) headers["x-a2a-notification-token"] = r.token
    const sent = yield* transport.send({ url: r.url, headers, body: JSON.stringify({ task }) })
    const at = yield* Clock.currentTimeMillis
    if (sent.ok) {
      return yield* store.update({ ...r, nextAttemptAt: null, doneAt: iso(at), pushedState: state, lastError: null })
    }
    const attempts = r.attempts + 1
    const error = sent.error ?? `answered ${sent.status ?? "nothing"}`
    const givenUp = attempts >= PUSH_NOTIFY_ATTEMPTS
    return yield* store.update({
      ...r,
      attempts,
      lastError: error,
      nextAttemptAt: givenUp ? null : iso(at + pushBackoff(attempts)),
      doneAt: givenUp ? iso(at) : null
    })
  },
  (effect, r) =>
    effect.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning(`a2a push notification ${r.taskId}/${r.id} failed; retried after its lease`, cause)
      )
    )
)

/** One pass: the due configurations claimed (leased) and looked at, a few at once; how many. */
export const notifyDue = Effect.gen(function* () {
  const store = yield* PushConfigStore
  const now = yield* Clock.currentTimeMillis
  // One statement (claim and lease together): no transaction around it, so an idle pass costs one.
  const lease = pushNotifyLeaseMs((yield* WebhookTransport).timeoutMs)
  const claimed = yield* store.claimDue(iso(now), iso(now + lease), PUSH_NOTIFY_BATCH)
  yield* Effect.forEach(claimed, notifyOne, { concurrency: PUSH_NOTIFY_CONCURRENCY, discard: true })
  return claimed.length
})

/** The worker: a pass every PUSH_NOTIFY_TICK_MS (at once again after a full batch), when WORKERS is on. */
export const A2aPushWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    yield* notifyDue.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("a2a push notifications: pass failed; retrying", cause).pipe(Effect.as(0))
      ),
      Effect.flatMap((n) => (n >= PUSH_NOTIFY_BATCH ? Effect.void : Effect.sleep(PUSH_NOTIFY_TICK_MS))),
      Effect.forever,
      Effect.forkScoped
    )
  })
)
