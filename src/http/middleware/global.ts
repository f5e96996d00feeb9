// Global HTTP middleware: request id, body-size limit, JSON 404, one error body shape, logging.
import {
  HttpIncomingMessage,
  HttpLayerRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, FiberRef, Option } from "effect"
import { randomBytes } from "node:crypto"
import { NotFound, PayloadTooLarge } from "../../schema/errors.js"
import { AppConfig } from "../../layers/config.js"
import { errorResponse, internalErrorBody, toErrorBody } from "../errors.js"

/** The id of the request the current fiber serves ("" outside a request). */
export const currentRequestId = FiberRef.unsafeMake("")

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const decoder = new TextDecoder()

/** Rewrites a JSON error response from the HttpApi into the one error body (adds type, field, requestId). */
const normaliseErrorBody = (response: HttpServerResponse.HttpServerResponse, requestId: string) => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  if (!response.body.contentType.startsWith("application/json")) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(response.body.body))
  } catch {
    return response
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return response
  const record = parsed as Record<string, unknown>
  if (record.requestId === requestId && typeof record.type === "string") return response
  if (typeof record._tag !== "string") return response
  return HttpServerResponse.unsafeJson(toErrorBody(record, requestId), {
    status: response.status,
    headers: response.headers
  })
}

export const GlobalMiddlewareLive = HttpLayerRouter.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const maxBody = Option.some(config.maxBodyBytes)
    return (httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const incoming = request.headers["x-request-id"]
        const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : `req_${randomBytes(9).toString("base64url")}`
        const length = Number(request.headers["content-length"] ?? "0")
        let response: HttpServerResponse.HttpServerResponse
        if (Number.isFinite(length) && length > config.maxBodyBytes) {
          response = errorResponse(
            new PayloadTooLarge({ message: `request body is ${length} bytes; the limit is ${config.maxBodyBytes}`, limitBytes: config.maxBodyBytes }),
            requestId,
            { connection: "close" }
          )
        } else {
          response = yield* httpEffect.pipe(
            HttpIncomingMessage.withMaxBodySize(maxBody),
            Effect.locally(currentRequestId, requestId),
            Effect.catchAllCause((cause) => {
              const failure = Cause.failureOption(cause)
              if (Option.isSome(failure) && HttpServerError.isServerError(failure.value) && failure.value._tag === "RouteNotFound") {
                return Effect.succeed(
                  errorResponse(new NotFound({ message: `no route for ${request.method} ${request.url.split("?")[0]}`, resource: "route" }), requestId)
                )
              }
              if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
              return Effect.logError("unhandled request failure", cause).pipe(
                Effect.as(HttpServerResponse.unsafeJson(internalErrorBody(requestId), { status: 500 }))
              )
            }),
            Effect.annotateLogs("requestId", requestId)
          )
          response = normaliseErrorBody(response, requestId)
        }
        return HttpServerResponse.setHeaders(response, {
          "x-request-id": requestId,
          "x-content-type-options": "nosniff"
        })
        // Every failure is answered above; the type keeps `unhandled` as the router's contract asks.
      }) as Effect.Effect<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled, HttpServerRequest.HttpServerRequest>
  }),
  { global: true }
)
