// Stripe's wire formats, shared by both processor layers: the `Stripe-Signature` header (sign and
// verify), event parsing into a ProcessorEvent, and building checkout-session and event objects.
import { Effect, Result, Schema, SchemaIssue } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { InvalidInput } from "../../schema/platform/errors.js"
import {
  type CheckoutMode,
  InvalidSignature,
  type ProcessorEvent,
  type ProcessorSession,
  StripeEventEnvelope
} from "../../schema/payments/payments.js"

/** The Stripe API version the service is written against (the `stripe` SDK call pins the same). */
export const STRIPE_API_VERSION = "2026-10-28.endive" as const

/** Largest accepted gap between a signature's timestamp and now, either way (Stripe's default). */
export const SIGNATURE_TOLERANCE_SECONDS = 300

/** Header value for `payload` at `timestampSeconds`: `t=<ts>,v1=<hex HMAC-SHA256 of "<ts>.<payload>">`. */
export const signPayload = (payload: string, secret: string, timestampSeconds: number): string =>
  `t=${timestampSeconds},v1=${hmacHex(secret, `${timestampSeconds}.${payload}`)}`

const hmacHex = (secret: string, data: string) => createHmac("sha256", secret).update(data, "utf8").digest("hex")

/**
 * Verifies a `Stripe-Signature` header over the exact raw body: a `t=` timestamp within the
 * tolerance of now (either direction), and at least one `v1=` signature equal (constant-time) to
 * the HMAC of `<t>.<body>`. Several v1 entries are allowed (secret rotation); other schemes are
 * ignored. Returns the reason on failure.
 */
export const verifySignature = (input: {
  readonly payload: string
  readonly header: string | undefined
  readonly secret: string
  readonly nowSeconds: number
  readonly toleranceSeconds?: number
}): Result.Result<number, string> => {
  const tolerance = input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS
  const header = input.header?.trim()
  if (!header) return Result.fail("missing Stripe-Signature header")
  if (header.length > 4096) return Result.fail("Stripe-Signature header is too long")
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    if (eq <= 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t") {
      if (!/^\d{1,12}$/.test(value)) return Result.fail("Stripe-Signature timestamp is not an integer")
      timestamp = Number(value)
    } else if (key === "v1") signatures.push(value)
  }
  if (timestamp === undefined) return Result.fail("Stripe-Signature header has no timestamp (t=)")
  if (signatures.length === 0) return Result.fail("Stripe-Signature header has no v1 signature")
  if (Math.abs(input.nowSeconds - timestamp) > tolerance) {
    return Result.fail(`Stripe-Signature timestamp is outside the ${tolerance} s tolerance`)
  }
  const expected = Buffer.from(hmacHex(input.secret, `${timestamp}.${input.payload}`), "utf8")
  let matched = false
  // Compare against every candidate (no early exit), each in constant time.
  for (const candidate of signatures) {
    const actual = Buffer.from(candidate, "utf8")
    if (actual.length === expected.length && timingSafeEqual(actual, expected)) matched = true
  }
  return matched ? Result.succeed(timestamp) : Result.fail("no Stripe-Signature v1 signature matches the body")
}

type Json = Record<string, unknown>
const str = (o: Json, k: string): string | null => (typeof o[k] === "string" ? (o[k] as string) : null)
const num = (o: Json, k: string): number | null =>
  typeof o[k] === "number" && Number.isFinite(o[k]) ? (o[k] as number) : null
const obj = (u: unknown): Json | null => (typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Json) : null)
/** An expandable reference: an id string, or an expanded object with an id. */
const ref = (u: unknown): string | null =>
  typeof u === "string" ? u : obj(u) && typeof obj(u)!.id === "string" ? (obj(u)!.id as string) : null

const stringRecord = (u: unknown): Record<string, string> => {
  const o = obj(u)
  if (!o) return {}
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(o)) if (typeof v === "string") out[k] = v
  return out
}

/** A Stripe `checkout.session` object → ProcessorSession (lenient: unknown fields ignored). */
export const toProcessorSession = (o: Json): ProcessorSession => {
  const status = str(o, "status")
  const paymentStatus = str(o, "payment_status")
  return {
    id: str(o, "id") ?? "",
    mode: (str(o, "mode") === "subscription" ? "subscription" : "payment") as CheckoutMode,
    status: status === "complete" || status === "expired" ? status : "open",
    paymentStatus: paymentStatus === "paid" || paymentStatus === "no_payment_required" ? paymentStatus : "unpaid",
    amountTotal: num(o, "amount_total"),
    currency: str(o, "currency"),
    metadata: stringRecord(o.metadata),
    url: str(o, "url"),
    subscriptionId: ref(o.subscription),
    customerEmail: str(o, "customer_email") ?? (obj(o.customer_details) ? str(obj(o.customer_details)!, "email") : null)
  }
}

// As the endpoint's document describes it: the JSON form (null for an absent optional field).
const decodeEnvelope = Schema.decodeUnknownResult(Schema.toCodecJson(StripeEventEnvelope))
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The dot-joined path of a decode failure's first issue (undefined for the body as a whole): the refusal's `field`. */
const fieldOf = (error: Schema.SchemaError): string | undefined => {
  const path = formatIssues(error.issue).issues[0]?.path ?? []
  return path.length === 0
    ? undefined
    : path.map((p) => String(typeof p === "object" && p !== null && "key" in p ? p.key : p)).join(".")
}

/** Parses a verified raw body into a ProcessorEvent; InvalidInput when it is not a Stripe event. */
export const parseEvent: (payload: string) => Effect.Effect<ProcessorEvent, InvalidInput> = Effect.fnUntraced(
  function* (payload: string) {
    let json: unknown
    try {
      json = JSON.parse(payload)
    } catch {
      return yield* Effect.fail(new InvalidInput({ message: "event body is not valid JSON" }))
    }
    const decoded = decodeEnvelope(json)
    if (Result.isFailure(decoded)) {
      const field = fieldOf(decoded.failure)
      return yield* Effect.fail(
        new InvalidInput({
          message: `not a processor event: ${decoded.failure.message}`,
          ...(field === undefined ? {} : { field })
        })
      )
    }
    const event = decoded.success
    const o = event.data.object
    const kind = str(o, "object") ?? "unknown"
    if (kind === "checkout.session" && str(o, "id")) {
      return {
        id: event.id,
        type: event.type,
        created: event.created,
        object: { kind: "checkout.session", session: toProcessorSession(o) }
      }
    }
    if (kind === "invoice" && str(o, "id")) {
      // API versions from 2025-03 carry the subscription under parent.subscription_details.
      const parent = obj(o.parent)
      const details = parent ? obj(parent.subscription_details) : null
      return {
        id: event.id,
        type: event.type,
        created: event.created,
        object: {
          kind: "invoice",
          invoiceId: str(o, "id")!,
          subscriptionId: (details ? ref(details.subscription) : null) ?? ref(o.subscription),
          billingReason: str(o, "billing_reason"),
          amountPaid: num(o, "amount_paid") ?? 0
        }
      }
    }
    if (kind === "subscription" && str(o, "id")) {
      return {
        id: event.id,
        type: event.type,
        created: event.created,
        object: { kind: "subscription", subscriptionId: str(o, "id")! }
      }
    }
    return { id: event.id, type: event.type, created: event.created, object: { kind: "other", object: kind } }
  }
)

/** Verifies then parses: the one entry point both layers use for incoming events. */
export const verifyAndParse = (input: {
  readonly payload: string
  readonly header: string | undefined
  readonly secret: string
  readonly nowSeconds: number
}) =>
  Result.match(verifySignature(input), {
    onFailure: (reason) =>
      Effect.fail(new InvalidSignature({ message: reason })) as Effect.Effect<
        ProcessorEvent,
        InvalidSignature | InvalidInput
      >,
    onSuccess: () => parseEvent(input.payload)
  })

/** A Stripe-shaped checkout.session object (the fake processor and the test stub emit these). */
export const checkoutSessionObject = (s: {
  readonly id: string
  readonly mode: CheckoutMode
  readonly status: "open" | "complete" | "expired"
  readonly paymentStatus: "paid" | "unpaid"
  readonly amountCents: number
  readonly currency: string
  readonly metadata: Readonly<Record<string, string>>
  readonly url: string | null
  readonly successUrl: string
  readonly cancelUrl: string
  readonly customerEmail: string | null
  readonly subscriptionId: string | null
  readonly createdSeconds: number
  readonly expiresSeconds: number
}) => ({
  id: s.id,
  object: "checkout.session",
  amount_subtotal: s.amountCents,
  amount_total: s.amountCents,
  cancel_url: s.cancelUrl,
  client_reference_id: null,
  created: s.createdSeconds,
  currency: s.currency,
  customer_details: s.customerEmail ? { email: s.customerEmail } : null,
  customer_email: s.customerEmail,
  expires_at: s.expiresSeconds,
  livemode: false,
  metadata: { ...s.metadata },
  mode: s.mode,
  payment_status: s.paymentStatus,
  status: s.status,
  subscription: s.subscriptionId,
  success_url: s.successUrl,
  url: s.status === "open" ? s.url : null
})

/** A Stripe event envelope around a data object. */
export const eventEnvelope = (e: {
  readonly id: string
  readonly type: string
  readonly createdSeconds: number
  readonly object: object
}) => ({
  id: e.id,
  object: "event",
  api_version: STRIPE_API_VERSION,
  created: e.createdSeconds,
  data: { object: e.object },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type: e.type
})
