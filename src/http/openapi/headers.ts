// Headers and header parameters of the document: the response headers the server sends (request
// id, rate limit, Retry-After, challenges, replay marker) and the Idempotency-Key parameter.
import { type Json, MUTATING, ref } from "./json.js"

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema })

/** The header components every response refers to. */
export const headerComponents: Json = {
  XRequestId: {
    ...header("The request's id (echoes a valid incoming X-Request-Id); error bodies carry it as `requestId`."),
    required: true
  },
  RateLimit: {
    ...header("IETF RateLimit fields: remaining requests and seconds to reset, per window of the key's limit."),
    required: true
  },
  RateLimitPolicy: {
    ...header("IETF RateLimit-Policy fields: each window's quota and length in seconds."),
    required: true
  },
  RateLimitUnlessReplayed: header(
    "IETF RateLimit fields (as on every keyed response); absent when an idempotent retry replays a stored response."
  ),
  RateLimitPolicyUnlessReplayed: header(
    "IETF RateLimit-Policy fields (as on every keyed response); absent when an idempotent retry replays a stored " +
      "response."
  ),
  RetryAfter: { ...header("Seconds to wait before retrying.", { type: "integer", minimum: 0 }), required: true },
  WwwAuthenticateBearer: {
    ...header("The Bearer challenge (RFC 6750): why the credentials were refused."),
    required: true
  },
  WwwAuthenticatePayment: header(
    "The Payment challenge (the same challenge as the body carries); absent on the 402 of a call without an API key, " +
      "which only x402 can pay (PAYMENT-REQUIRED)."
  ),
  PaymentRequiredX402: header(
    "x402 v2 (docs/x402.md): base64 of the PaymentRequired JSON (scheme exact, network, asset, amount, payTo); " +
      "present when x402 is configured."
  ),
  PaymentResponseX402: header(
    "x402 v2 (docs/x402.md): base64 of the SettleResponse JSON, on every answer to a PAYMENT-SIGNATURE (also a failure)."
  ),
  PaymentReceipt: header(
    "The receipt of the paid call; absent when an idempotent retry replays the stored answer (the receipt went " +
      "with the first answer)."
  ),
  SetCookie: header(
    "The session cookie (HttpOnly, SameSite=Strict). Not repeated when an idempotent retry replays the response."
  ),
  IdempotentReplayed: header(
    "`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
    { type: "string", enum: ["true"] }
  )
}

/** The Idempotency-Key header parameter of every write. */
export const idempotencyKeyParameter: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes the request safe to retry (docs/idempotency.md): the first response is stored and replayed to every " +
    "retry with the same key and request; the same key with a different request is 422; a retry while the first " +
    "runs waits, then 409.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" }
}

/** Headers an operation sends on success, beyond those every operation of its kind sends. */
const SUCCESS_HEADERS: Readonly<Record<string, Json>> = {
  "dashboardAuth.signUp": { "Set-Cookie": ref("headers", "SetCookie") },
  "dashboardAuth.signIn": { "Set-Cookie": ref("headers", "SetCookie") },
  "dashboardAuth.signOut": { "Set-Cookie": ref("headers", "SetCookie") },
  "mpp.invoke": { "Payment-Receipt": ref("headers", "PaymentReceipt") }
}

/** The headers of an operation's response with status `code`, by the operation's method and access. */
export const responseHeaders = (
  operationId: string,
  method: string,
  auth: "public" | "key" | "session",
  code: number
): Json => {
  const h: Json = { "X-Request-Id": ref("headers", "XRequestId") }
  if (MUTATING.has(method)) h["Idempotent-Replayed"] = ref("headers", "IdempotentReplayed")
  if (code < 300) {
    // A replay (Idempotency-Key) is answered before the key is authenticated: no RateLimit then.
    if (auth === "key" && MUTATING.has(method)) {
      Object.assign(h, {
        RateLimit: ref("headers", "RateLimitUnlessReplayed"),
        "RateLimit-Policy": ref("headers", "RateLimitPolicyUnlessReplayed")
      })
    } else if (auth === "key") {
      Object.assign(h, {
        RateLimit: ref("headers", "RateLimit"),
        "RateLimit-Policy": ref("headers", "RateLimitPolicy")
      })
    }
    Object.assign(h, SUCCESS_HEADERS[operationId] ?? {})
  }
  if (code === 401 && auth === "key") h["WWW-Authenticate"] = ref("headers", "WwwAuthenticateBearer")
  if (code === 402 && operationId === "mpp.invoke") {
    h["WWW-Authenticate"] = ref("headers", "WwwAuthenticatePayment")
    h["PAYMENT-REQUIRED"] = ref("headers", "PaymentRequiredX402")
  }
  if (operationId === "mpp.invoke") h["PAYMENT-RESPONSE"] = ref("headers", "PaymentResponseX402")
  if (code === 429 || code === 503) h["Retry-After"] = ref("headers", "RetryAfter")
  return h
}
