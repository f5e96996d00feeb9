// Handlers for the mpp group: discovery, health, and the paid call (402 challenge headers, receipt header).
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { CREDENTIAL_HEADER, RECEIPT_HEADER } from "../../schema/mpp/protocol.js"
import { type PaymentRequired } from "../../schema/mpp/problems.js"
import { type Receipt } from "../../schema/mpp/challenge.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { isPaymentCredential, receiptHeader, wwwAuthenticate } from "../../services/mpp/encoding.js"
import { Mpp } from "../../services/mpp/Mpp.js"
import { Api } from "../api.js"

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
    .handle(
      "invoke",
      Effect.fnUntraced(function* ({ params: path, query: urlParams, payload }) {
        const caller = yield* CurrentCaller
        const { body, credential, credentialHeader } = yield* paymentContext
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
          .pipe(Effect.tapErrorTag("PaymentRequired", challengeHeaders))
        yield* receiptHeaders(result.receipt)
        return result
      })
    )
)
