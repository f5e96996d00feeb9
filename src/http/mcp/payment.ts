// MPP over MCP (draft-payment-transport-mcp): a tool route's Payment 402 becomes JSON-RPC error
// -32042/-32043 with `data.challenges`; the credential comes in `params._meta`, the receipt goes
// back in `result._meta`. The route itself verifies and settles, exactly as over HTTP.
import {
  MCP_CREDENTIAL_META,
  MCP_PAYMENT_REQUIRED_CODE,
  MCP_PAYMENT_VERIFICATION_FAILED_CODE,
  MCP_RECEIPT_META,
  RECEIPT_HEADER
} from "../../schema/mpp/protocol.js"
import { canonicalJson } from "../../services/mpp/encoding.js"
import { decodedX402Header } from "../x402/headers.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const b64url = (s: string) => Buffer.from(s, "utf8").toString("base64url")

/**
 * The `org.paymentauth/credential` of a request's `_meta`, as the HTTP credential
 * `Payment <base64url JSON>`: over JSON-RPC the echoed `request` is a JSON object, over HTTP its
 * base64url JCS form (what the challenge id binds). Undefined when there is none; a value that is
 * not an object with a challenge is passed on as it is, for the route to refuse as malformed.
 */
export const credentialFromMeta = (meta: unknown): string | undefined => {
  if (!isRecord(meta) || meta[MCP_CREDENTIAL_META] === undefined) return undefined
  const value = meta[MCP_CREDENTIAL_META]
  if (!isRecord(value) || !isRecord(value.challenge)) return `Payment ${b64url(JSON.stringify(value ?? null))}`
  const { request, ...challenge } = value.challenge
  const wire = {
    ...value,
    challenge: { ...challenge, request: isRecord(request) ? b64url(canonicalJson(request)) : request }
  }
  return `Payment ${b64url(JSON.stringify(wire))}`
}

export interface PaymentRefusal {
  readonly code: number
  readonly message: string
  readonly data: {
    readonly httpStatus: number
    readonly challenges: ReadonlyArray<Record<string, unknown>>
    readonly problem: Record<string, unknown>
  }
}

/**
 * The JSON-RPC error for a route's payment refusal (a problem+json body carrying a challenge), or
 * undefined for any other response. The challenge is given as the JSON-RPC transport writes it:
 * `request` a native object (`requestDecoded`), the rest as issued.
 */
export const paymentRefusal = (
  status: number,
  headers: Headers,
  text: string,
  credentialSent: boolean
): PaymentRefusal | undefined => {
  if (status !== 402 && status !== 400) return undefined
  if (!(headers.get("content-type") ?? "").startsWith("application/problem+json")) return undefined
  if (!/^payment /i.test(headers.get("www-authenticate") ?? "")) return undefined
  let problem: unknown
  try {
    problem = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isRecord(problem) || !isRecord(problem.challenge)) return undefined
  const { requestDecoded, request, ...rest } = problem.challenge
  void request
  const challenge = { ...rest, request: requestDecoded }
  const { challenge: _c, methods: _m, ...summary } = problem
  void _c
  void _m
  return {
    code: credentialSent ? MCP_PAYMENT_VERIFICATION_FAILED_CODE : MCP_PAYMENT_REQUIRED_CODE,
    message: typeof problem.detail === "string" ? problem.detail : "Payment Required",
    data: { httpStatus: status, challenges: [challenge], problem: summary }
  }
}

/** `result._meta` with the receipt of a paid call (the route's Payment-Receipt, decoded), or undefined. */
export const receiptMeta = (headers: Headers): Record<string, unknown> | undefined => {
  const header = headers.get(RECEIPT_HEADER)
  if (!header) return undefined
  try {
    const receipt = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as unknown
    return isRecord(receipt) ? { [MCP_RECEIPT_META]: receipt } : undefined
  } catch {
    return undefined
  }
}

// x402 over MCP (x402 v2's MCP transport): the PaymentPayload comes in `params._meta["x402/payment"]`
// and goes to the route as its PAYMENT-SIGNATURE; the route's PAYMENT-RESPONSE comes back in
// `result._meta["x402/payment-response"]`; a 402 that offers x402 is answered as x402's tool result
// (isError, `structuredContent` the PaymentRequired, `content[0].text` its `x402/error` wrapper).

const X402_PAYMENT_META = "x402/payment"
const X402_PAYMENT_RESPONSE_META = "x402/payment-response"

/** The `x402/payment` of a request's `_meta` as the PAYMENT-SIGNATURE header (base64 JSON), or undefined. */
export const x402PaymentFromMeta = (meta: unknown): string | undefined => {
  if (!isRecord(meta) || meta[X402_PAYMENT_META] === undefined) return undefined
  return Buffer.from(JSON.stringify(meta[X402_PAYMENT_META]), "utf8").toString("base64")
}

/** The route's PAYMENT-REQUIRED (x402's PaymentRequired), decoded, when its 402 offers x402. */
export const x402Required = (status: number, headers: Headers) =>
  status === 402 ? decodedX402Header(headers, "payment-required") : undefined

/** `result._meta` with the route's PAYMENT-RESPONSE (x402's SettleResponse), decoded, or undefined. */
export const x402SettleMeta = (headers: Headers): Record<string, unknown> | undefined => {
  const settle = decodedX402Header(headers, "payment-response")
  return settle === undefined ? undefined : { [X402_PAYMENT_RESPONSE_META]: settle }
}

/** x402's payment-required tool result (with the settle's failure, when a payment was refused). */
export const x402RequiredResult = (required: Record<string, unknown>, headers: Headers) => {
  const settle = decodedX402Header(headers, "payment-response")
  const data = settle === undefined ? required : { ...required, [X402_PAYMENT_RESPONSE_META]: settle }
  const message = typeof required.error === "string" ? required.error : "Payment required"
  return {
    isError: true,
    structuredContent: data,
    content: [{ type: "text" as const, text: JSON.stringify({ "x402/error": { code: 402, message, data } }) }],
    ...(settle === undefined ? {} : { _meta: { [X402_PAYMENT_RESPONSE_META]: settle } })
  }
}
