// Handlers for the payments group: the webhook hands the raw body and signature to Payments.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { Payments } from "../../services/payments/Payments.js"
import { Api } from "../api.js"

export const PaymentsLive = HttpApiBuilder.group(Api, "payments", (handlers) =>
  handlers
    // Raw: the signature is over the exact body, so nothing may parse it first. (`request.text` is
    // cached by the platform; the global JSON guard's earlier read returns the same text.)
    .handleRaw(
      "webhook",
      Effect.fnUntraced(function* ({ request, headers }) {
        const body = yield* request.text.pipe(
          Effect.mapError(() => new InvalidInput({ message: "the request body could not be read" }))
        )
        return yield* Effect.flatMap(Payments, (p) => p.handleWebhook(body, headers["stripe-signature"]))
      })
    )
    .handle("purchaseStatus", ({ params: path }) => Effect.flatMap(Payments, (p) => p.purchaseStatus(path.sessionId)))
    .handle("accessContent", ({ params: path, headers }) =>
      Effect.flatMap(Payments, (p) => p.accessContent(path.accessId, headers["checkout-session-id"]))
    )
)
