// Handlers for the mpp group: discovery, health, and the paid call (402 challenge headers, receipt header).
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { AppConfig } from "../../services/AppConfig.js"
import { RECEIPT_HEADER } from "../../schema/mpp.js"
import { CurrentCaller } from "../../services/Caller.js"
import { canonicalJson, Mpp, receiptHeader, wwwAuthenticate } from "../../services/Mpp.js"
import { Api } from "../api.js"

const addHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeaders(res, headers)))

export const MppLive = HttpApiBuilder.group(Api, "mpp", (handlers) =>
  handlers
    .handle("discovery", () => Effect.flatMap(Effect.zip(AppConfig, Mpp), ([config, mpp]) => Effect.succeed(mpp.discovery(config.baseUrl))))
    .handle("health", () => Effect.flatMap(Mpp, (mpp) => mpp.health))
    .handle("invoke", ({ params: path, query: urlParams, headers, payload }) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        // The challenge binds the request content: the canonical JSON of the decoded body (not the
        // raw bytes, which a multipart or re-encoded body would not give back).
        const body = canonicalJson(payload)
        const mpp = yield* Mpp
        const result = yield* mpp
          .invoke(caller, { serviceId: path.id, tierId: urlParams.tier, input: payload.input, body, credential: headers["payment-authorization"] })
          .pipe(
            Effect.tapErrorTag("PaymentRequired", (e) => addHeaders({ "www-authenticate": wwwAuthenticate(e.challenge), "cache-control": "no-store" }))
          )
        yield* addHeaders({ [RECEIPT_HEADER.toLowerCase()]: receiptHeader(result.receipt), "cache-control": "private" })
        return result
      })
    )
)
