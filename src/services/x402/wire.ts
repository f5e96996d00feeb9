// x402's wire, pure: the requirements an offer is paid with, the PaymentRequired a 402 carries, the
// PAYMENT-SIGNATURE header read and decoded (a bad one is 400 naming the header), whether a payload
// pays these requirements, the payment's names (its key, its fingerprint), the payer's own agent.
import { createHash } from "node:crypto"
import { Option, Schema } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import {
  EXACT_SCHEME,
  ExactEvmPayload,
  PAYMENT_IDENTIFIER_EXTENSION,
  PAYMENT_SIGNATURE_HEADER,
  PaymentIdentifier,
  PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  unitsPerCent,
  X402_VERSION
} from "../../schema/x402/x402.js"
import type { X402Config } from "../platform/AppConfig.js"
import type { Offer } from "../purchases/Offers.js"
import { sortKeys } from "../../schema/platform/sortKeys.js"

/** The account every payer without an API key buys under: nobody signs in to it. */
export const X402_PAYERS_ACCOUNT = "acc_x402_payers"

/** The buyer of record of a payer without an API key: its own agent, named by its address. */
export const payerAgentId = (payer: string) => `agt_x402_${payer.toLowerCase().slice(2)}`

/** The price in the asset's base units: 1 cent = 10,000 units of a 6-decimal asset. */
export const amountUnits = (config: X402Config, cents: number) => BigInt(cents) * unitsPerCent(config.assetDecimals)

/** What a payment of this offer must be: the `exact` scheme, the network's asset, the price, to payTo. */
export const requirementsOf = (config: X402Config, offer: Offer): PaymentRequirements => ({
  scheme: EXACT_SCHEME,
  network: config.network,
  asset: config.asset,
  amount: amountUnits(config, offer.tier.priceCents).toString(),
  payTo: config.payTo,
  maxTimeoutSeconds: config.maxTimeoutSeconds,
  // The token's EIP-712 domain: what the payer signs its authorization against.
  extra: { name: config.assetName, version: config.assetVersion }
})

/** The PaymentRequired of a 402 for this offer at `url` (`error`: why a payment was refused). */
export const paymentRequiredOf = (config: X402Config, offer: Offer, url: string, error?: string): PaymentRequired => ({
  x402Version: X402_VERSION,
  ...(error !== undefined ? { error } : {}),
  resource: {
    url,
    description: `${offer.service.name} (${offer.tier.name}): one call, ${offer.tier.priceCents} cents`,
    mimeType: "application/json"
  },
  accepts: [requirementsOf(config, offer)],
  extensions: {
    // Name the payment (x402's payment-identifier): a retry with the same id answers the first outcome.
    [PAYMENT_IDENTIFIER_EXTENSION]: { info: { required: false } },
    // What the call takes and answers, for facilitators' discovery catalogues (x402's bazaar).
    [BAZAAR_EXTENSION]: bazaarOf(offer)
  }
})

/** x402's `bazaar` discovery extension name. */
const BAZAAR_EXTENSION = "bazaar"

/**
 * The paid call as x402's bazaar describes an HTTP endpoint: a POST of a JSON body `{input}` (the
 * service's own input, any JSON value), answered with the InvokeResult (or the pending one while an
 * agent seller works); `schema` validates `info`, as the extension requires.
 */
const bazaarOf = (offer: Offer) => ({
  info: {
    input: {
      type: "http",
      method: "POST",
      bodyType: "json",
      body: { input: `what ${offer.service.name} works on (any JSON value)` }
    },
    output: {
      type: "json",
      example: {
        status: "completed",
        serviceId: offer.service.id,
        tierId: offer.tier.id,
        transactionId: "tx_…",
        chargedCents: offer.tier.priceCents,
        output: "the seller's output",
        receipt: { status: "success", method: "x402" }
      }
    }
  },
  schema: BAZAAR_HTTP_BODY_SCHEMA
})

/** JSON Schema (2020-12) of the bazaar `info` of a body endpoint. */
const BAZAAR_HTTP_BODY_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    input: {
      type: "object",
      properties: {
        type: { type: "string", const: "http" },
        method: { type: "string", enum: ["POST", "PUT", "PATCH"] },
        bodyType: { type: "string", enum: ["json", "form-data", "text"] },
        body: { type: "object", properties: { input: {} }, required: ["input"] },
        queryParams: { type: "object", additionalProperties: { type: "string" } },
        headers: { type: "object", additionalProperties: { type: "string" } }
      },
      required: ["type", "method", "bodyType", "body"],
      additionalProperties: false
    },
    output: {
      type: "object",
      properties: { type: { type: "string" }, example: { type: "object" } },
      required: ["type"]
    }
  },
  required: ["input"]
} as const

const decodePayload = Schema.decodeUnknownOption(PaymentPayload)

/** The PAYMENT-SIGNATURE header decoded: base64 of a PaymentPayload's JSON, or a 400 naming the header. */
export const readSignature = (header: string): PaymentPayload | InvalidInput => {
  const refuse = (why: string) =>
    new InvalidInput({ message: `${PAYMENT_SIGNATURE_HEADER}: ${why}`, field: PAYMENT_SIGNATURE_HEADER })
  const text = header.trim()
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return refuse("must be base64 of a PaymentPayload's JSON")
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(text, "base64").toString("utf8"))
  } catch {
    return refuse("is not base64 of JSON")
  }
  const payload = decodePayload(json)
  return Option.isSome(payload) ? payload.value : refuse("is not an x402 PaymentPayload")
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** Why `accepted` is not these requirements, if it is not (what was paid must be what was asked). */
export const mismatch = (accepted: PaymentRequirements, wanted: PaymentRequirements): string | undefined => {
  if (accepted.scheme !== wanted.scheme) return `scheme ${accepted.scheme}, not ${wanted.scheme}`
  if (accepted.network !== wanted.network) return `network ${accepted.network}, not ${wanted.network}`
  if (!same(accepted.asset, wanted.asset)) return `asset ${accepted.asset}, not ${wanted.asset}`
  if (!same(accepted.payTo, wanted.payTo)) return `payTo ${accepted.payTo}, not ${wanted.payTo}`
  if (accepted.amount !== wanted.amount) return `amount ${accepted.amount}, not ${wanted.amount}`
  return undefined
}

const decodeExact = Schema.decodeUnknownOption(ExactEvmPayload)

/** The `exact` scheme's EIP-3009 payload, if the payload is one. */
export const exactPayloadOf = (payload: PaymentPayload) => Option.getOrUndefined(decodeExact(payload.payload))

const decodeIdentifier = Schema.decodeUnknownOption(PaymentIdentifier)

/** The payment-identifier extension's id, when the payload names one. */
export const identifierOf = (payload: PaymentPayload): string | undefined =>
  Option.getOrUndefined(
    Option.map(decodeIdentifier(payload.extensions?.[PAYMENT_IDENTIFIER_EXTENSION]), (e) => e.info.id)
  )

/** "The same payment": the signed payload and what it pays for (service, tier, body bytes), hashed. */
export const fingerprintOf = (
  payload: PaymentPayload,
  request: { readonly serviceId: string; readonly tierId: string; readonly body: Uint8Array | string }
) =>
  createHash("sha256")
    .update(
      JSON.stringify(
        sortKeys({
          accepted: payload.accepted,
          payload: payload.payload,
          serviceId: request.serviceId,
          tierId: request.tierId,
          body: Buffer.from(request.body).toString("base64")
        })
      )
    )
    .digest("base64url")
