// Handlers for the mpp group: discovery, health, and the paid call (402 challenge headers, receipt header).
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Effect, Option } from "effect"
import type { SettleResponse } from "../../schema/x402/x402.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { CREDENTIAL_HEADER, RECEIPT_HEADER } from "../../schema/mpp/protocol.js"
import { type PaymentRequired } from "../../schema/mpp/problems.js"
import { InvokeResult, PendingInvokeResult, type Receipt } from "../../schema/mpp/challenge.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { isPaymentCredential, receiptHeader, wwwAuthenticate } from "../../services/mpp/encoding.js"
import { Mpp } from "../../services/mpp/Mpp.js"
import { X402 } from "../../services/x402/X402.js"
import { Api } from "../api.js"
import { paymentRequiredHeaders, paymentResponseHeaders } from "../x402/headers.js"

const addHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeaders(res, headers)))

/**
 * What a payable request brings: its body bytes as sent (the challenge's digest covers exactly
 * these; read again from the request's cached body), the Payment credential if any, and the field
 * the caller's challenges name. Where the credential travels follows where the key does: with
 * `Authorization: Bearer` the challenge names Payment-Authorization (mppx's header extension);
 * with the key in X-API-Key, `Authorization: Payment …` as the draft writes it (no header param).
 */
export const paymentContext = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const body = new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
  const authorization = request.headers.authorization
  const keyInAuthorization = authorization !== undefined && !isPaymentCredential(authorization)
  const credential =
    request.headers["payment-authorization"] ?? (isPaymentCredential(authorization) ? authorization : undefined)
  return { body, credential, credentialHeader: keyInAuthorization ? CREDENTIAL_HEADER : undefined }
})

/** The 402's headers: the fresh challenge, never cached, and when a retry can succeed. */
export const challengeHeaders = (e: PaymentRequired) =>
  addHeaders({
    "www-authenticate": wwwAuthenticate(e.challenge),
    "cache-control": "no-store",
    ...(e.retryAfter !== undefined ? { "retry-after": String(e.retryAfter) } : {})
  })

/** A paid answer's headers: the receipt, private to this client. */
export const receiptHeaders = (receipt: Receipt) =>
  addHeaders({ [RECEIPT_HEADER.toLowerCase()]: receiptHeader(receipt), "cache-control": "private" })

export const MppLive = HttpApiBuilder.group(Api, "mpp", (handlers) =>
  handlers
    .handle("discovery", () =>
      Effect.flatMap(Effect.zip(AppConfig, Mpp), ([config, mpp]) => Effect.succeed(mpp.discovery(config.baseUrl)))
    )
    .handle("health", () => Effect.flatMap(Mpp, (mpp) => mpp.health))
    .handle("x402Payment", ({ params, headers }) =>
      Effect.flatMap(Effect.zip(X402, CurrentCaller), ([x402, caller]) =>
        x402.view(params.id, { token: headers["x-payment-token"], agentId: caller.agentId })
      )
    )
    .handle(
      "invoke",
      Effect.fnUntraced(function* ({ params: path, query: urlParams, payload }) {
        const caller = yield* CurrentCaller
        const { body, credential, credentialHeader } = yield* paymentContext
        const request = yield* HttpServerRequest.HttpServerRequest
        const x402 = yield* X402
        const url = `${(yield* AppConfig).baseUrl}${request.url}`
        const signature = request.headers["payment-signature"]
        if (x402.offered && (caller.via === "x402" || (signature !== undefined && credential === undefined))) {
          // x402: the payment names the payer (no key), or pays for the keyed agent (docs/x402.md).
          let settle: SettleResponse | undefined
          const answer = yield* x402
            .invoke(
              {
                serviceId: path.id,
                tierId: urlParams.tier,
                input: payload.input,
                body,
                url,
                signature,
                idempotencyKey: request.headers["idempotency-key"],
                keyed: caller.via === "x402" ? undefined : { agentId: caller.agentId!, accountId: caller.accountId }
              },
              (s) => Effect.sync(() => void (settle = s))
            )
            .pipe(
              Effect.tapError((e) =>
                Effect.andThen(
                  settle === undefined ? Effect.void : paymentResponseHeaders(settle),
                  e._tag === "X402PaymentRequired" ? paymentRequiredHeaders(e.paymentRequired) : Effect.void
                )
              )
            )
          yield* paymentResponseHeaders(answer.settle)
          if (answer.result instanceof InvokeResult || answer.result instanceof PendingInvokeResult) {
            yield* receiptHeaders(answer.result.receipt)
          }
          return answer.result
        }
        const mpp = yield* Mpp
        const result = yield* mpp
          .invoke(caller, {
            serviceId: path.id,
            tierId: urlParams.tier,
            input: payload.input,
            body,
            credential,
            credentialHeader
          })
          .pipe(
            Effect.tapErrorTag("PaymentRequired", (e) =>
              // Beside the MPP challenge, x402's PAYMENT-REQUIRED when it is offered.
              Effect.andThen(
                challengeHeaders(e),
                Effect.flatMap(x402.paymentRequired({ serviceId: path.id, tierId: urlParams.tier, url }), (required) =>
                  Option.isSome(required) ? paymentRequiredHeaders(required.value) : Effect.void
                )
              )
            )
          )
        yield* receiptHeaders(result.receipt)
        return result
      })
    )
)
