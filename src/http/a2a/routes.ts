// The A2A 1.0 JSON-RPC endpoint (POST /a2a): SendMessage runs one skill of the agent card as its
// Agent API route, in-process through this same router (auth, permissions, limits, validation,
// idempotency as REST and MCP), and answers with an agent Message carrying the route's JSON, or,
// for a buy that waits on its seller, with the purchase's Task (src/http/a2a/tasks.ts).
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Context, Effect, Option, Result, Stream } from "effect"
import { Unauthorized } from "../../schema/platform/errors.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../requestIdempotency.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { errorResponse } from "../errors.js"
import { presentedKey } from "../middleware/authLive.js"
import { currentRequestId } from "../requestId.js"
import { isProblem, toRouteRequest } from "../descriptors/toolRequest.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { Orders } from "../../services/purchases/Orders.js"
import { A2aErrors, isRecord, type Json, retryAfterOf, rpcError, rpcResult } from "./rpc.js"
import { approvalTaskOf, isApproval, isTransaction, readTask, taskOf, type TaskTransaction } from "./tasks.js"
import { type A2aCalls, type CancelOutcome, readTransaction, runRoute } from "./calls.js"
import { cancelTask, extendedCard, isApprovalId, listTasks, readApprovalTask } from "./taskMethods.js"
import { pushConfigMethod } from "./push.js"
import { awaitSaga, isSaga, isSagaId, readSagaTask, sagaTaskOf, type TaskSaga } from "./sagaTasks.js"
import { Sagas } from "../../services/saga/Saga.js"
import { PushConfigStore } from "../../services/a2a/PushConfigStore.js"
import { WebhookTransport } from "../../services/webhooks/WebhookTransport.js"
import { Ids, Transactor } from "../../services/platform/Db.js"
import { agentCard } from "../site/agentFiles/contents.js"
import { A2A_X402_EXTENSION } from "../../schema/a2a/x402Task.js"
import { KEYLESS, x402CallsFor } from "./x402Calls.js"
import { helpMessage, keylessCall, messageCall, messageIdempotencyKey, replyEnvelope } from "./messages.js"
import type { Caller } from "../../services/keys/Caller.js"
import { buysWithX402, cancelX402Task, isX402TaskId, openX402Buy, payX402Task, readX402Task } from "./x402Tasks.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { sendStreamingMessage, sseText, type StreamAnswer, subscribeToTask } from "./streaming.js"
import { A2A_ENDPOINT_PATH, A2A_PROTOCOL_VERSION } from "../descriptors/a2a.js"
import { intentText } from "./intents.js"

/**
 * A buy that came back pending is a task (its id the transaction id). Unless the message asks to
 * return at once, the answer waits for the seller up to ORDER_WAIT_MS from the call's start (a
 * push seller's inline answer was already awaited that long by the buy itself), then answers the
 * task as it is then: completed or failed, or still working when the seller has not answered yet.
 */
const pendingBuyTask = async (calls: A2aCalls, params: Json, tx: TaskTransaction, startedAt: number, meta: Json) => {
  const returnImmediately = isRecord(params.configuration) && params.configuration.returnImmediately === true
  const left = startedAt + calls.waitMs - Date.now()
  if (returnImmediately || left <= 0 || !(await calls.awaitOutcome(tx.id, left))) return taskOf(tx, meta)
  const read = await readTask(null, tx.id, readTransaction(calls))
  return taskOf("tx" in read ? read.tx : tx, meta)
}

/**
 * A saga is a task from its start (its id the saga id): its route drove it until it ended or waits
 * (on an agent's service, for its seller's delivery). Unless the message asks to return at once, a
 * running one is awaited up to ORDER_WAIT_MS from the call's start, then answered as it stands.
 */
const sagaTask = async (calls: A2aCalls, params: Json, saga: TaskSaga, startedAt: number, meta: Json) => {
  const returnImmediately = isRecord(params.configuration) && params.configuration.returnImmediately === true
  const now = returnImmediately ? saga : await awaitSaga(calls, saga, startedAt + calls.waitMs)
  return sagaTaskOf(now, meta)
}

/** The caller's task `id` as GetTask answers it (a purchase, an approval, or a saga), or the error. */
const readAnyTask = async (rpcId: unknown, id: unknown, calls: A2aCalls) => {
  if (isX402TaskId(id)) return readX402Task(rpcId, id, calls)
  if (isApprovalId(id)) return readApprovalTask(rpcId, id, calls)
  if (isSagaId(id)) {
    const read = await readSagaTask(rpcId, id, calls)
    return "error" in read ? read : { task: sagaTaskOf(read.saga) }
  }
  const read = await readTask(rpcId, id, readTransaction(calls))
  return "error" in read ? read : { task: taskOf(read.tx) }
}

/** Runs JSON-RPC request bodies. */
export const handleA2a = async (body: unknown, calls: A2aCalls): Promise<Json> => {
  if (!isRecord(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string")
    return rpcError(isRecord(body) ? body.id : null, A2aErrors.invalidRequest, "not a JSON-RPC 2.0 request")
  const { id, method } = body
  const params = isRecord(body.params) ? body.params : {}
  switch (method) {
    case "SendMessage": {
      const startedAt = Date.now()
      // A message naming an x402 task pays it (or declines to): x402Tasks.ts.
      if (isRecord(params.message) && isX402TaskId(params.message.taskId))
        return payX402Task(id, calls, params, params.message.taskId, startedAt)
      // Any other task here is a purchase the seller answers, not a conversation: it takes no further messages.
      if (isRecord(params.message) && typeof params.message.taskId === "string" && params.message.taskId !== "")
        return rpcError(
          id,
          A2aErrors.unsupportedOperation,
          "a task takes no further messages: follow it with GetTask, or send a new message without taskId"
        )
      const call = messageCall(params.message)
      if ("problem" in call) return rpcError(id, A2aErrors.invalidParams, call.problem)
      if (call.tool === undefined) return rpcResult(id, { message: helpMessage(calls, params, call.intent) })
      // A buy paid with x402 (a keyless caller's, or a keyed one's that activated the extension).
      if (call.tool.name === "buy" && buysWithX402(calls)) return openX402Buy(id, calls, call.args)
      const route = toRouteRequest(call.tool, call.args)
      if (isProblem(route)) return rpcError(id, A2aErrors.invalidParams, route.message, { field: route.field })
      const key = messageIdempotencyKey(params)
      if ("problem" in key) return rpcError(id, A2aErrors.invalidParams, key.problem, { field: key.field })
      const { status, json, headers } = await runRoute(calls, route, key.key)
      const ok = status < 400
      const meta = {
        ...(call.skill !== undefined ? { skill: call.skill.id } : {}),
        ...(call.intent !== undefined ? { intent: call.intent.intent } : {}),
        httpStatus: status,
        ok,
        ...retryAfterOf(headers)
      }
      // A buy waiting on the owner's approval is a task too, named by the approval.
      if (
        call.tool.name === "buy" &&
        ok &&
        isRecord(json) &&
        json.status === "pending_approval" &&
        isApproval(json.approval)
      )
        return rpcResult(id, { task: approvalTaskOf(json.approval, undefined, meta) })
      if (
        call.tool.name === "buy" &&
        ok &&
        isRecord(json) &&
        json.status === "pending" &&
        isTransaction(json.transaction)
      )
        return rpcResult(id, { task: await pendingBuyTask(calls, params, json.transaction, startedAt, meta) })
      // A saga is a task whatever it came to (running, completed or compensated), named by the saga.
      if (call.tool.name === "saga" && ok && isSaga(json))
        return rpcResult(id, { task: await sagaTask(calls, params, json, startedAt, meta) })
      const message = params.message as Json
      const name = call.skill?.name ?? call.tool.title
      const summary =
        call.intent !== undefined
          ? intentText(call.intent, status, json)
          : ok
            ? `${name}: done (${status})`
            : `${name}: refused (${status}) ${isRecord(json) && typeof json.message === "string" ? json.message : ""}`.trim()
      // Any other answer is one agent message (A2A allows a Message for a request that needs no
      // task): the route's JSON as a data part, a one-line summary as text.
      return rpcResult(id, {
        message: {
          ...replyEnvelope(calls, message),
          parts: [
            { text: summary, mediaType: "text/plain" },
            { data: json, mediaType: "application/json" }
          ],
          metadata: meta
        }
      })
    }
    case "GetTask": {
      const read = await readAnyTask(id, params.id, calls)
      return "error" in read ? read.error : rpcResult(id, read.task)
    }
    case "ListTasks":
      return listTasks(id, params, calls)
    case "CancelTask":
      return isX402TaskId(params.id) ? cancelX402Task(id, params.id, calls) : cancelTask(id, params, calls)
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
    case "ListTaskPushNotificationConfigs":
    case "DeleteTaskPushNotificationConfig":
      return calls.pushConfig(method, id, params, {
        agentId: calls.caller.agentId,
        // The task must be the caller's (and its key may read it), as GetTask asks.
        ownTask: async (taskId) => {
          if (isX402TaskId(taskId))
            return rpcError(
              id,
              A2aErrors.unsupportedOperation,
              "an x402 task is followed with GetTask: no push notifications"
            )
          const read = await readAnyTask(id, taskId, calls)
          return "error" in read ? read.error : undefined
        }
      })
    case "GetExtendedAgentCard":
      return extendedCard(id, agentCard(calls.baseUrl, { x402: calls.x402 !== undefined }), calls.caller)
    default:
      return rpcError(id, A2aErrors.methodNotFound, `unknown method ${method}`)
  }
}

/** The streaming methods' answer (an SSE stream, or an error before it), or undefined for any other body. */
const streamingCall = (body: unknown, calls: A2aCalls): Promise<StreamAnswer> | undefined => {
  if (!isRecord(body) || body.jsonrpc !== "2.0") return undefined
  const params = isRecord(body.params) ? body.params : {}
  if (body.method === "SubscribeToTask") return subscribeToTask(body.id, params, calls)
  if (body.method !== "SendStreamingMessage") return undefined
  return sendStreamingMessage(body.id, params, calls, (p) =>
    handleA2a({ jsonrpc: "2.0", id: body.id, method: "SendMessage", params: p }, calls)
  )
}

export const A2aRoutesLive = HttpRouter.use(
  Effect.fnUntraced(function* (router) {
    const post = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = yield* currentRequestId
      const keys = yield* Keys
      const limiter = yield* RateLimiter
      const orders = yield* Orders
      // A2A-Version (absent: 1.0 assumed); another major version is refused as the spec asks.
      const version = request.headers["a2a-version"]
      if (version !== undefined && version.trim().split(".")[0] !== A2A_PROTOCOL_VERSION.split(".")[0]) {
        return HttpServerResponse.jsonUnsafe(
          rpcError(
            null,
            A2aErrors.versionNotSupported,
            `A2A-Version ${version} is not supported; this agent speaks ${A2A_PROTOCOL_VERSION}`
          )
        )
      }
      const key = presentedKey(request.headers.authorization, request.headers["x-api-key"])
      const challenge = { "www-authenticate": `Bearer realm="agent-api", ApiKey realm="agent-api", header="X-API-Key"` }
      const config = yield* AppConfig
      const x402Offered = Option.isSome(config.x402)
      const missingKey = errorResponse(
        new Unauthorized({
          message: `missing API key: send Authorization: Bearer <key> (or X-API-Key)${x402Offered ? "; without one, only a buy paid with x402 (docs/a2a.md)" : ""}`
        }),
        requestId,
        challenge
      )
      if (key === undefined && !x402Offered) return missingKey
      let caller: Caller
      if (key === undefined) caller = KEYLESS
      else {
        const authenticated = yield* keys.authenticate(key).pipe(Effect.result)
        if (Result.isFailure(authenticated)) {
          const denied = authenticated.failure
          return errorResponse(denied, requestId, denied._tag === "Unauthorized" ? challenge : {})
        }
        caller = authenticated.success.caller
      }
      const text = yield* request.text
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        if (key === undefined) return missingKey
        return HttpServerResponse.jsonUnsafe(rpcError(null, A2aErrors.parse, "request body is not valid JSON"))
      }
      // Without a key: a buy paid with x402 and its task, nothing else (docs/a2a.md "Paying with x402").
      if (key === undefined && !keylessCall(body)) return missingKey
      if (key === undefined) {
        // Every keyless call spends the payer's address's requests (the paid call it runs spends its own
        // too), as a keyed one spends its key's: reading a task reconciles its payment against the chain.
        const address = Option.getOrElse(request.remoteAddress, () => "unknown")
        const limited = yield* limiter.take(`x402:${address}`).pipe(Effect.flip, Effect.option)
        if (Option.isSome(limited))
          return errorResponse(
            limited.value,
            requestId,
            limited.value._tag === "RateLimited" ? { "retry-after": String(limited.value.retryAfterSeconds) } : {}
          )
      }
      // Each message carries its own Idempotency-Key (`message.metadata.idempotencyKey`) or none:
      // nothing of the envelope's request may stand in for it.
      const context = Context.add(
        Context.add(yield* Effect.context<never>(), currentIdempotencyKey, undefined),
        currentIdempotencyScope,
        ""
      )
      // The in-process request comes from this request's address: a keyless payer's calls are
      // rate-limited (and their Idempotency-Keys scoped) per address, as over REST.
      const remoteAddress = request.remoteAddress
      const handler = HttpEffect.toWebHandler(
        router
          .asHttpEffect()
          .pipe(Effect.updateService(HttpServerRequest.HttpServerRequest, (inner) => inner.modify({ remoteAddress })))
      )
      const dispatch = (inner: Request) => handler(inner, context)
      // Each skill runs with the caller's key, in whichever header it came (a keyless payer's with none).
      const credentials: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` }
      const run = Effect.runPromiseWith(context)
      const awaitOutcome = (orderId: string, ms: number) =>
        run(
          orders.awaitOutcome(orderId, ms).pipe(
            Effect.map((order) => order !== undefined && order.status !== "pending"),
            Effect.orElseSucceed(() => false)
          )
        )
      const cancelOrder = (orderId: string): Promise<CancelOutcome> =>
        caller.agentId === undefined || !caller.permissions.has("commerce:buy")
          ? Promise.resolve("forbidden")
          : run(
              orders.cancel(caller.agentId, orderId).pipe(
                Effect.as("cancelled" as const),
                Effect.catchTags({
                  OrderClosed: () => Effect.succeed("closed" as const),
                  NotFound: () => Effect.succeed("notFound" as const),
                  StorageUnavailable: () => Effect.succeed("unavailable" as const)
                })
              )
            )
      const commerce = yield* Commerce
      const withdrawApproval = (approvalId: string): Promise<CancelOutcome> =>
        caller.agentId === undefined || !caller.permissions.has("commerce:buy")
          ? Promise.resolve("forbidden")
          : run(
              commerce.withdrawApproval(caller, approvalId).pipe(
                Effect.as("cancelled" as const),
                Effect.catchTags({
                  Conflict: () => Effect.succeed("closed" as const),
                  NotFound: () => Effect.succeed("notFound" as const),
                  Forbidden: () => Effect.succeed("forbidden" as const),
                  StorageUnavailable: () => Effect.succeed("unavailable" as const)
                })
              )
            )
      const listApprovals = (limit: number, cursor: string | undefined) =>
        caller.agentId === undefined || !caller.permissions.has("commerce:read")
          ? Promise.resolve("forbidden" as const)
          : run(
              commerce.agentApprovals(caller.agentId, { limit, cursor }).pipe(
                Effect.map(
                  (page) => JSON.parse(JSON.stringify(page)) as { data: Array<Json>; nextCursor: string | null }
                ),
                Effect.catchTags({
                  InvalidInput: () => Effect.succeed("invalid" as const),
                  StorageUnavailable: () => Effect.succeed("unavailable" as const)
                })
              )
            )
      const readApproval = (id: string) =>
        caller.agentId === undefined || !caller.permissions.has("commerce:read")
          ? Promise.resolve(undefined)
          : run(
              commerce.agentApproval(caller.agentId, id).pipe(
                Effect.map((a) => JSON.parse(JSON.stringify(a)) as Json),
                Effect.catchTags({
                  NotFound: () => Effect.succeed(undefined),
                  StorageUnavailable: () => Effect.succeed("unavailable" as const)
                })
              )
            )
      const sagas = yield* Sagas
      const listSagas = (limit: number, cursor: string | undefined) =>
        caller.agentId === undefined || !caller.permissions.has("commerce:read")
          ? Promise.resolve("forbidden" as const)
          : run(
              sagas.list(caller.agentId, { limit, cursor }).pipe(
                Effect.map(
                  (page) => JSON.parse(JSON.stringify(page)) as { data: Array<Json>; nextCursor: string | null }
                ),
                Effect.catchTags({
                  InvalidInput: () => Effect.succeed("invalid" as const),
                  StorageUnavailable: () => Effect.succeed("unavailable" as const)
                })
              )
            )
      const sagaPurchases = (transactionIds: ReadonlyArray<string>) =>
        caller.agentId === undefined
          ? Promise.resolve(new Set<string>())
          : run(
              sagas.sagasOfTransactions(caller.agentId, transactionIds).pipe(
                Effect.map((owned) => new Set(owned.keys())),
                Effect.catchTag("StorageUnavailable", () => Effect.succeed("unavailable" as const))
              )
            )
      const pushContext = yield* Effect.context<PushConfigStore | WebhookTransport | Ids | Transactor>()
      const pushConfig: A2aCalls["pushConfig"] = (method, rpcId, params, pushCaller) =>
        run(Effect.provideContext(pushConfigMethod(method, rpcId, params, pushCaller), pushContext))
      const x402Calls = x402Offered ? yield* x402CallsFor(caller, request.headers) : undefined
      const calls = {
        ...(x402Calls === undefined ? {} : { x402: x402Calls }),
        pushConfig,
        dispatch,
        credentials,
        requestId,
        awaitOutcome,
        waitMs: orders.waitMs,
        cancelOrder,
        withdrawApproval,
        listApprovals,
        readApproval,
        listSagas,
        sagaPurchases,
        caller,
        baseUrl: config.baseUrl
      }
      const headers: Record<string, string> = {
        "a2a-version": A2A_PROTOCOL_VERSION,
        // The extensions this answer used, as A2A asks of an activated one.
        ...(x402Calls?.activated ? { "a2a-extensions": A2A_X402_EXTENSION } : {})
      }
      const streamed = streamingCall(body, calls)
      if (streamed !== undefined) {
        const answer = yield* Effect.promise(() => streamed)
        if ("error" in answer) return HttpServerResponse.jsonUnsafe(answer.error, { headers })
        return HttpServerResponse.stream(
          Stream.fromAsyncIterable(sseText(answer.events), (e) => e).pipe(Stream.encodeText),
          { contentType: "text/event-stream", headers: { ...headers, "cache-control": "no-cache" } }
        )
      }
      const answer = yield* Effect.promise(() => handleA2a(body, calls))
      return HttpServerResponse.jsonUnsafe(answer, { headers })
    })
    yield* router.add("POST", A2A_ENDPOINT_PATH, post)
  })
)
