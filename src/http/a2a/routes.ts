// The A2A 1.0 JSON-RPC endpoint (POST /a2a): SendMessage runs one skill of the agent card as its
// Agent API route, in-process through this same router (auth, permissions, limits, validation,
// idempotency as REST and MCP), and answers with an agent Message carrying the route's JSON, or,
// for a buy that waits on its seller, with the purchase's Task (src/http/a2a/tasks.ts).
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Context, Effect, Result, Stream } from "effect"
import { Unauthorized } from "../../schema/platform/errors.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../requestIdempotency.js"
import { Keys } from "../../services/keys/Keys.js"
import { errorResponse } from "../errors.js"
import { presentedKey } from "../middleware/authLive.js"
import { currentRequestId } from "../requestId.js"
import { isProblem, toRouteRequest } from "../descriptors/toolRequest.js"
import { agentTools, type ApiTool } from "../descriptors/tools.js"
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
import { AppConfig } from "../../services/platform/AppConfig.js"
import { sendStreamingMessage, sseText, type StreamAnswer, subscribeToTask } from "./streaming.js"
import { A2A_ENDPOINT_PATH, A2A_PROTOCOL_VERSION, type A2aSkill, resolveSkills } from "../descriptors/a2a.js"
import { type Intent, intentExamples, intentOf, intentText, type NoIntent } from "./intents.js"

const skills = resolveSkills(agentTools)
const skillIds = skills.map((s) => s.skill.id).join(", ")

/**
 * The skill and its arguments a user message asks for: a data part `{skill, …arguments}`, or
 * `message.metadata.skill` with the arguments in a data part. Otherwise a reason.
 */
export const skillCall = (
  message: unknown
): { readonly skill: string; readonly args: Json } | { readonly problem: string } => {
  if (!isRecord(message)) return { problem: "params.message is required" }
  const parts = Array.isArray(message.parts) ? message.parts : []
  const data = parts.find((p): p is { data: Json } => isRecord(p) && isRecord(p.data))?.data
  const fromMeta =
    isRecord(message.metadata) && typeof message.metadata.skill === "string" ? message.metadata.skill : undefined
  const named = data && typeof data.skill === "string" ? data.skill : fromMeta
  if (named === undefined)
    return { problem: `name the skill: a data part {"skill": "<id>", …arguments} (skills: ${skillIds})` }
  const { skill: _skill, ...args } = data ?? {}
  void _skill
  return { skill: named, args }
}

/** A tool by name; fails at startup if it was renamed. */
const toolNamed = (name: string) => {
  const tool = agentTools.find((t) => t.name === name)
  if (!tool) throw new Error(`A2A: no tool named ${name}`)
  return tool
}
const intentTools = new Map(
  (["list_services", "get_service", "buy", "transaction"] as const).map((n) => [n, toolNamed(n)])
)

/** What a user message runs: a skill named in a data part, or the intent of its text (docs/a2a.md). */
type MessageCall =
  | {
      readonly tool: ApiTool
      readonly args: Json
      readonly skill?: A2aSkill
      readonly intent?: Intent
    }
  | { readonly tool?: undefined; readonly intent: NoIntent }
  | { readonly problem: string }

export const messageCall = (message: unknown): MessageCall => {
  const call = skillCall(message)
  if (!("problem" in call)) {
    const found = skills.find((s) => s.skill.id === call.skill)
    if (!found) return { problem: `unknown skill ${call.skill} (skills: ${skillIds})` }
    return { tool: found.tool, args: call.args, skill: found.skill }
  }
  const text = textOf(message)
  if (text === undefined) return call
  const intent = intentOf(text)
  if (intent.intent === "help") return { intent }
  return {
    tool: intentTools.get(intent.tool)!,
    args: intent.args,
    intent,
    ...(skillOfTool.has(intent.tool) ? { skill: skillOfTool.get(intent.tool)! } : {})
  }
}
const skillOfTool = new Map(skills.map((s) => [s.tool.name, s.skill]))

/** The message's text: its text parts joined, when it has any. */
const textOf = (message: unknown): string | undefined => {
  if (!isRecord(message) || !Array.isArray(message.parts)) return undefined
  const texts = message.parts.filter((p): p is { text: string } => isRecord(p) && typeof p.text === "string")
  return texts.length === 0 ? undefined : texts.map((p) => p.text).join(" ")
}

/** The head of an agent message answering `message`: its id, the client's context kept. */
const replyEnvelope = (calls: Pick<A2aCalls, "requestId">, message: unknown) => ({
  messageId: `${calls.requestId}.reply`,
  ...(isRecord(message) && typeof message.contextId === "string" && message.contextId !== ""
    ? { contextId: message.contextId }
    : {}),
  role: "ROLE_AGENT"
})

/** The answer to a text no row matched: the skills, how to call each, and the phrases understood. */
const helpMessage = (calls: Pick<A2aCalls, "requestId">, params: Json, intent: NoIntent) => ({
  ...replyEnvelope(calls, params.message),
  parts: [
    {
      text: [
        ...(intent.hint !== undefined ? [`To check a purchase, ${intent.hint}.`] : []),
        `I sell and buy AI services for your agent's wallet. Say: ${intentExamples.map((e) => `"${e.say}"`).join(", ")}.`,
        `Or send a data part naming a skill: ${skills.map((s) => JSON.stringify(s.skill.example)).join(" ")}.`
      ].join(" "),
      mediaType: "text/plain"
    },
    {
      data: {
        skills: skills.map((s) => ({
          id: s.skill.id,
          name: s.skill.name,
          description: s.skill.description,
          example: s.skill.example
        })),
        phrases: intentExamples
      },
      mediaType: "application/json"
    }
  ],
  metadata: { intent: "help", ok: true }
})

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/**
 * The message's own Idempotency-Key: `message.metadata.idempotencyKey` (or, as first documented,
 * the request's `metadata.idempotencyKey`; both given must agree). None when absent; a malformed
 * one is refused rather than dropped, so a client never believes a purchase is keyed when it is not.
 */
export const messageIdempotencyKey = (
  params: Json
): { readonly key: string | undefined } | { readonly problem: string; readonly field: string } => {
  const message = isRecord(params.message) ? params.message : {}
  const found = [
    ["message.metadata.idempotencyKey", isRecord(message.metadata) ? message.metadata.idempotencyKey : undefined],
    ["metadata.idempotencyKey", isRecord(params.metadata) ? params.metadata.idempotencyKey : undefined]
  ].filter((entry): entry is [string, unknown] => entry[1] !== undefined)
  for (const [field, value] of found) {
    if (typeof value !== "string" || !IDEMPOTENCY_KEY.test(value))
      return { problem: `${field}: must be 1 to 255 visible ASCII characters`, field }
  }
  if (found.length === 2 && found[0][1] !== found[1][1]) {
    return {
      problem: "message.metadata.idempotencyKey and metadata.idempotencyKey differ: send one",
      field: "message.metadata.idempotencyKey"
    }
  }
  return { key: found[0]?.[1] as string | undefined }
}

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
      // A task here is a purchase the seller answers, not a conversation: it takes no further messages.
      if (isRecord(params.message) && typeof params.message.taskId === "string" && params.message.taskId !== "")
        return rpcError(
          id,
          A2aErrors.unsupportedOperation,
          "a task takes no further messages: follow it with GetTask, or send a new message without taskId"
        )
      const call = messageCall(params.message)
      if ("problem" in call) return rpcError(id, A2aErrors.invalidParams, call.problem)
      if (call.tool === undefined) return rpcResult(id, { message: helpMessage(calls, params, call.intent) })
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
      return cancelTask(id, params, calls)
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
    case "ListTaskPushNotificationConfigs":
    case "DeleteTaskPushNotificationConfig":
      return calls.pushConfig(method, id, params, {
        agentId: calls.caller.agentId,
        // The task must be the caller's (and its key may read it), as GetTask asks.
        ownTask: async (taskId) => {
          const read = await readAnyTask(id, taskId, calls)
          return "error" in read ? read.error : undefined
        }
      })
    case "GetExtendedAgentCard":
      return extendedCard(id, agentCard(calls.baseUrl), calls.caller)
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
      if (key === undefined)
        return errorResponse(
          new Unauthorized({ message: "missing API key: send Authorization: Bearer <key> (or X-API-Key)" }),
          requestId,
          challenge
        )
      const authenticated = yield* keys.authenticate(key).pipe(Effect.result)
      if (Result.isFailure(authenticated)) {
        const denied = authenticated.failure
        return errorResponse(denied, requestId, denied._tag === "Unauthorized" ? challenge : {})
      }
      const caller = authenticated.success.caller
      const text = yield* request.text
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return HttpServerResponse.jsonUnsafe(rpcError(null, A2aErrors.parse, "request body is not valid JSON"))
      }
      // Each message carries its own Idempotency-Key (`message.metadata.idempotencyKey`) or none:
      // nothing of the envelope's request may stand in for it.
      const context = Context.add(
        Context.add(yield* Effect.context<never>(), currentIdempotencyKey, undefined),
        currentIdempotencyScope,
        ""
      )
      const handler = HttpEffect.toWebHandler(router.asHttpEffect())
      const dispatch = (inner: Request) => handler(inner, context)
      // Each skill runs with the caller's key, in whichever header it came.
      const credentials = { authorization: `Bearer ${key}` }
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
      const calls = {
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
        baseUrl: (yield* AppConfig).baseUrl
      }
      const headers = { "a2a-version": A2A_PROTOCOL_VERSION }
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
