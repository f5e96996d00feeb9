// Handlers for the mpp group: discovery, health, and the paid call (402 challenge headers, receipt header).
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { AppConfig } from "../../services/AppConfig.js"
import { CREDENTIAL_HEADER, RECEIPT_HEADER } from "../../schema/mpp.js"
import { CurrentCaller } from "../../services/Caller.js"
import { isPaymentCredential, Mpp, receiptHeader, wwwAuthenticate } from "../../services/Mpp.js"
import { Api } from "../api.js"

const addHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeaders(res, headers)))

export const MppLive = HttpApiBuilder.group(Api, "mpp", (handlers) =>
  handlers
    .handle("discovery", () => Effect.flatMap(Effect.zip(AppConfig, Mpp), ([config, mpp]) => Effect.succeed(mpp.discovery(config.baseUrl))))
    .handle("health", () => Effect.flatMap(Mpp, (mpp) => mpp.health))
    .handle("invoke", ({ params: path, query: urlParams, payload }) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        const request = yield* HttpServerRequest.HttpServerRequest
        // The challenge binds the body bytes as sent (the draft's digest), read once more from the
        // request's cached body.
        const body = new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
        // Where the credential travels follows where the key does: with `Authorization: Bearer`
        // the challenge names Payment-Authorization (mppx's header extension); with the key in
        // X-API-Key, `Authorization: Payment …` as the draft writes it (the header is left out).
        const authorization = request.headers.authorization
        const keyInAuthorization = authorization !== undefined && !isPaymentCredential(authorization)
        const credential = request.headers["payment-authorization"] ?? (isPaymentCredential(authorization) ? authorization : undefined)
        const mpp = yield* Mpp
        const result = yield* mpp
          .invoke(caller, {
            serviceId: path.id,
            tierId: urlParams.tier,
            input: payload.input,
            body,
            credential,
            credentialHeader: keyInAuthorization ? CREDENTIAL_HEADER : undefined
          })
          .pipe(
            Effect.tapErrorTag("PaymentRequired", (e) =>
              addHeaders({
                "www-authenticate": wwwAuthenticate(e.challenge),
                "cache-control": "no-store",
                ...(e.retryAfter !== undefined ? { "retry-after": String(e.retryAfter) } : {})
              })
            )
          )
        yield* addHeaders({ [RECEIPT_HEADER.toLowerCase()]: receiptHeader(result.receipt), "cache-control": "private" })
        return result
      })
    )
)
