// The ACP wire (Agentic Commerce Protocol 2026-04-17, docs/acp.md): request bodies read as far as
// this seller uses them (each refusal names its JSONPath), a session rendered as the spec's
// CheckoutSession (and CheckoutSessionWithOrder), and the service's refusals as the spec's Error.
import { splitSettlement } from "../../schema/ledger/ledger.js"
import {
  ACP_API_VERSION,
  type AcpLine,
  CARD_CREDENTIAL_TYPE,
  CARD_HANDLER_ID,
  DIGITAL_OPTION_ID,
  WALLET_CREDENTIAL_TYPE,
  WALLET_HANDLER_ID
} from "../../schema/acp/sessions.js"
import { type AcpSessionView, isExpired } from "../../services/acp/AcpCheckout.js"
import type { PaymentInput } from "../../services/acp/payment.js"
import { info, money, orderOf } from "../../services/acp/order.js"

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** A request the spec's schema refuses: where (`param`, a JSONPath) and why. */
export interface BadRequest {
  readonly param: string
  readonly message: string
}
const bad = (param: string, message: string): BadRequest => ({ param, message })
export const isBadRequest = (v: unknown): v is BadRequest => isRecord(v) && typeof v.param === "string"

/** An optional object field (metadata): the object, undefined, or a refusal. */
const objectField = (body: Json, name: string): unknown => {
  const value = body[name]
  if (value === undefined) return undefined
  return isRecord(value) ? value : bad(`$.${name}`, `${name} must be an object`)
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * The string fields `names` of an object at `at`, the `required` ones present: what is kept of a
 * Buyer, FulfillmentDetails or Address (and echoed in every answer, so only what the spec's schema
 * has). Unknown fields are ignored, as the spec asks servers to do for forward compatibility.
 */
const strings = (
  value: unknown,
  at: string,
  names: ReadonlyArray<string>,
  required: ReadonlyArray<string>
): Record<string, string> | BadRequest => {
  if (!isRecord(value)) return bad(at, "must be an object")
  const out: Record<string, string> = {}
  for (const name of names) {
    const v = value[name]
    if (v === undefined) continue
    if (typeof v !== "string") return bad(`${at}.${name}`, `${name} must be a string`)
    if (name === "email" && !EMAIL.test(v)) return bad(`${at}.${name}`, "not an email address")
    out[name] = v
  }
  for (const name of required) if (out[name] === undefined) return bad(`${at}.${name}`, `${name} is required`)
  return out
}

/** The spec's Buyer, as far as a marketplace of agents keeps it (email required, as the spec has it). */
const buyerOf = (body: Json): unknown =>
  body.buyer === undefined
    ? undefined
    : strings(
        body.buyer,
        "$.buyer",
        ["first_name", "last_name", "full_name", "email", "phone_number", "customer_id"],
        ["email"]
      )

/** The spec's FulfillmentDetails (a digital delivery needs none of it: kept and echoed). */
const fulfillmentDetailsOf = (body: Json): unknown => {
  const value = body.fulfillment_details
  if (value === undefined) return undefined
  const details = strings(value, "$.fulfillment_details", ["name", "phone_number", "email"], [])
  if (isBadRequest(details)) return details
  const address = (value as Json).address
  if (address === undefined) return details
  const kept = strings(
    address,
    "$.fulfillment_details.address",
    ["name", "line_one", "line_two", "city", "state", "country", "postal_code"],
    ["name", "line_one", "city", "state", "country", "postal_code"]
  )
  return isBadRequest(kept) ? kept : { ...details, address: kept }
}

/** The ids of `line_items` (each an Item: `{id, name?, unit_amount?}`). */
const itemIdsOf = (value: unknown, required: boolean): ReadonlyArray<string> | BadRequest | undefined => {
  if (value === undefined) return required ? bad("$.line_items", "line_items is required") : undefined
  if (!Array.isArray(value) || (required && value.length === 0))
    return bad("$.line_items", "line_items must be a non-empty array of items")
  const ids: Array<string> = []
  for (const [i, item] of value.entries()) {
    if (!isRecord(item) || typeof item.id !== "string" || item.id === "")
      return bad(`$.line_items[${i}].id`, "each item needs an id: a catalogue tier, serviceId:tierId")
    ids.push(item.id)
  }
  return ids
}

const asObject = (body: unknown): Json | BadRequest =>
  isRecord(body) ? body : bad("$", "the request body must be a JSON object")

/** CheckoutSessionCreateRequest: line_items, currency and capabilities are required. */
export const readCreate = (body: unknown) => {
  const o = asObject(body)
  if (isBadRequest(o)) return o
  const itemIds = itemIdsOf(o.line_items, true)
  if (isBadRequest(itemIds) || itemIds === undefined) return itemIds ?? bad("$.line_items", "line_items is required")
  if (typeof o.currency !== "string") return bad("$.currency", "currency is required (an ISO 4217 code: usd)")
  if (!isRecord(o.capabilities)) return bad("$.capabilities", "capabilities is required (an object)")
  const buyer = buyerOf(o)
  const fulfillmentDetails = fulfillmentDetailsOf(o)
  const metadata = objectField(o, "metadata")
  for (const v of [buyer, fulfillmentDetails, metadata]) if (isBadRequest(v)) return v
  return { itemIds, currency: o.currency, buyer, fulfillmentDetails, metadata }
}

/** CheckoutSessionUpdateRequest: every field optional. */
export const readUpdate = (body: unknown) => {
  const o = asObject(body)
  if (isBadRequest(o)) return o
  const itemIds = itemIdsOf(o.line_items, false)
  if (isBadRequest(itemIds)) return itemIds
  const buyer = buyerOf(o)
  const fulfillmentDetails = fulfillmentDetailsOf(o)
  for (const v of [buyer, fulfillmentDetails]) if (isBadRequest(v)) return v
  const selected = o.selected_fulfillment_options
  if (selected !== undefined) {
    if (!Array.isArray(selected)) return bad("$.selected_fulfillment_options", "must be an array")
    for (const [i, s] of selected.entries()) {
      if (!isRecord(s) || s.type !== "digital" || s.option_id !== DIGITAL_OPTION_ID)
        return bad(
          `$.selected_fulfillment_options[${i}]`,
          `the one fulfillment option is {"type": "digital", "option_id": "${DIGITAL_OPTION_ID}"}`
        )
    }
  }
  return {
    ...(itemIds !== undefined ? { itemIds } : {}),
    ...(buyer !== undefined ? { buyer } : {}),
    ...(fulfillmentDetails !== undefined ? { fulfillmentDetails } : {})
  }
}

/** CheckoutSessionCompleteRequest: payment_data is required. */
export const readComplete = (body: unknown): { payment: PaymentInput; buyer: unknown } | BadRequest => {
  const o = asObject(body)
  if (isBadRequest(o)) return o
  const data = o.payment_data
  if (!isRecord(data)) return bad("$.payment_data", "payment_data is required")
  const instrument = isRecord(data.instrument) ? data.instrument : undefined
  const credential = instrument && isRecord(instrument.credential) ? instrument.credential : undefined
  const buyer = buyerOf(o)
  if (isBadRequest(buyer)) return buyer
  const text = (v: unknown) => (typeof v === "string" ? v : undefined)
  return {
    payment: {
      handlerId: text(data.handler_id),
      instrumentType: text(instrument?.type),
      credentialType: text(credential?.type),
      token: text(credential?.token)
    },
    buyer
  }
}

/** Where the wallet handler's description and schemas are served (GET, public). */
export const WALLET_HANDLER_PATH = "/acp/handlers/wallet"

/** The wallet handler as the spec's PaymentHandler (docs/acp.md, "Payment handlers"). */
export const walletHandler = (baseUrl: string) => ({
  id: WALLET_HANDLER_ID,
  name: "dev.agent-commerce.wallet",
  display_name: "Agent wallet",
  version: ACP_API_VERSION,
  spec: `${baseUrl}${WALLET_HANDLER_PATH}`,
  requires_delegate_payment: false,
  requires_pci_compliance: false,
  psp: "agent-commerce",
  config_schema: `${baseUrl}${WALLET_HANDLER_PATH}/config.schema.json`,
  instrument_schemas: [`${baseUrl}${WALLET_HANDLER_PATH}/instrument.schema.json`],
  config: {}
})

/**
 * The delegated card handler: a Shared Payment Token charged through the payments layer's
 * DelegatedPayments port (the fake processor's test tokens, or Stripe under PAYMENTS=stripe).
 */
export const cardHandler = (baseUrl: string, psp: "fake" | "stripe") => ({
  id: CARD_HANDLER_ID,
  name: "dev.acp.tokenized.card",
  display_name: "Card (delegated payment token)",
  version: ACP_API_VERSION,
  spec: `${baseUrl}${CARD_HANDLER_PATH}`,
  requires_delegate_payment: true,
  requires_pci_compliance: false,
  psp,
  config_schema: `${baseUrl}${WALLET_HANDLER_PATH}/config.schema.json`,
  instrument_schemas: [`${baseUrl}${CARD_HANDLER_PATH}/instrument.schema.json`],
  config: {}
})
export const CARD_HANDLER_PATH = "/acp/handlers/card"

export const cardHandlerSpec = {
  name: "dev.acp.tokenized.card",
  version: ACP_API_VERSION,
  description:
    "Pays with a delegated card payment token (a Shared Payment Token), charged for the session's total and " +
    "credited to the calling agent's wallet, which then buys under its owner's spending policy. Complete with " +
    `payment_data {"handler_id": "${CARD_HANDLER_ID}", "instrument": {"type": "card", "credential": {"type": ` +
    `"${CARD_CREDENTIAL_TYPE}", "token": "spt_…"}}}. With the fake processor, tokens beginning spt_test_ are ` +
    "charged and spt_test_declined is declined."
}
export const cardInstrumentSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["type", "credential"],
  properties: {
    type: { const: "card" },
    credential: {
      type: "object",
      required: ["type", "token"],
      properties: { type: { const: CARD_CREDENTIAL_TYPE }, token: { type: "string" } }
    }
  }
}

/** What the handler's `spec` URL answers: how to pay with it. */
export const walletHandlerSpec = {
  name: "dev.agent-commerce.wallet",
  version: ACP_API_VERSION,
  description:
    "Pays from the calling agent's wallet, under its owner's spending policy. Complete the session with " +
    `payment_data {"handler_id": "${WALLET_HANDLER_ID}", "instrument": {"type": "${WALLET_CREDENTIAL_TYPE}", ` +
    `"credential": {"type": "${WALLET_CREDENTIAL_TYPE}", "token": "<your agent id>"}}}; the token must be the ` +
    "agent the API key belongs to."
}

/** The handler's config (none) and instrument, as JSON Schemas. */
export const walletConfigSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false
}
export const walletInstrumentSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["type", "credential"],
  properties: {
    type: { const: WALLET_CREDENTIAL_TYPE },
    credential: {
      type: "object",
      required: ["type", "token"],
      properties: {
        type: { const: WALLET_CREDENTIAL_TYPE },
        token: { type: "string", description: "the paying agent's id: the agent the API key belongs to" }
      }
    }
  }
}

const lineTotals = (l: AcpLine) => {
  const base = l.unitAmountCents * l.quantity
  return [money("items_base_amount", "Price", base), money("subtotal", "Subtotal", base), money("total", "Total", base)]
}

const lineItem = (l: AcpLine) => ({
  id: l.id,
  item: { id: l.itemId, name: `${l.serviceName} — ${l.tierName}`, unit_amount: l.unitAmountCents },
  quantity: l.quantity,
  name: `${l.serviceName} — ${l.tierName}`,
  description: l.description,
  unit_amount: l.unitAmountCents,
  marketplace_seller_details: { name: l.sellerName },
  product_id: l.serviceId,
  variant_id: l.tierId,
  category: l.category,
  custom_attributes: [
    { display_name: "Seller agent", value: l.sellerAgentId },
    { display_name: "Unit", value: l.unit }
  ],
  totals: lineTotals(l)
})

/**
 * The session's totals. The marketplace fee (15 %) is paid by the seller out of the price, not
 * added to it: shown as a `fee` line whose description says so, while `total` is what the buyer pays.
 */
const sessionTotals = (lines: ReadonlyArray<AcpLine>) => {
  const base = lines.reduce((sum, l) => sum + l.unitAmountCents * l.quantity, 0)
  const { feeCents } = splitSettlement(base)
  return [
    money("items_base_amount", "Items", base),
    money("subtotal", "Subtotal", base),
    money("fulfillment", "Delivery", 0),
    money(
      "fee",
      "Marketplace fee (15 %, included)",
      feeCents,
      "Paid by the seller out of the price: the seller receives 85 %, the marketplace 15 %. Not added to the total."
    ),
    money("total", "Total", base)
  ]
}

const digitalOption = {
  type: "digital",
  id: DIGITAL_OPTION_ID,
  title: "Delivered through the API",
  description:
    "The seller's output is delivered to the buying agent's transaction (GET /api/v1/agent/commerce/transactions/{id}).",
  totals: [money("fulfillment", "Delivery", 0), money("total", "Total", 0)]
}

/** The session's status as the spec names it, at the view's instant. */
export const statusOf = (view: AcpSessionView): string => {
  const { session } = view
  if (isExpired(session, view.now)) return "expired"
  if (session.status === "pending_approval") {
    // Waiting while any line waits for its owner; then completed if any line was bought, else canceled.
    if (view.lines.some((l) => l.transaction === null && (l.approval === null || l.approval.status === "pending")))
      return "pending_approval"
    return view.lines.some((l) => l.transaction !== null) ? "completed" : "canceled"
  }
  return session.status
}

const messagesOf = (view: AcpSessionView, status: string) => {
  if (status === "expired") return [info("The quote has expired: open a new checkout session.")]
  if (status === "pending_approval")
    return [
      {
        ...info("The purchase waits for the agent's owner to approve it (the owner's spending policy asks for it)."),
        severity: "info",
        resolution: "requires_buyer_review"
      }
    ]
  const ended = view.lines.flatMap((l) =>
    l.transaction === null && l.approval !== null && l.approval.status !== "pending" ? [l] : []
  )
  if (status === "canceled" && ended.length > 0 && ended.every((l) => l.approval?.status === "withdrawn"))
    return [info("The purchase was withdrawn before the owner decided: nothing was spent.")]
  if (status === "canceled" && ended.length > 0)
    return [info(`The owner's approval ended ${ended[0].approval?.status}: nothing was charged.`)]
  // Completed with some lines the owner did not approve: those lines bought nothing.
  return ended.map((l) =>
    info(`${l.line.id}: the owner's approval ended ${l.approval?.status}; nothing was charged for it.`)
  )
}

/**
 * The spec's CheckoutSession; `withOrder`: the completion's answer, CheckoutSessionWithOrder. Every
 * other answer is a CheckoutSession, whose schema has no `order`: a completed session names its
 * order and where it stands in an info message instead (docs/acp.md).
 */
export const renderSession = (
  view: AcpSessionView,
  site: { readonly baseUrl: string; readonly cardPsp: "fake" | "stripe" },
  withOrder = false
) => {
  const { baseUrl } = site
  const { session } = view
  const status = statusOf(view)
  const lineIds = session.lines.map((l) => l.id)
  const order = session.status === "completed" || session.status === "pending_approval" ? orderOf(view, baseUrl) : null
  const orderNote =
    order !== null && !withOrder && status === "completed"
      ? [info(`Order ${order.id}: ${order.status}. Follow it at ${order.permalink_url}.`)]
      : []
  return {
    id: session.id,
    protocol: { version: ACP_API_VERSION },
    capabilities: { payment: { handlers: [walletHandler(baseUrl), cardHandler(baseUrl, site.cardPsp)] } },
    ...(isRecord(session.buyer) ? { buyer: session.buyer } : {}),
    status,
    currency: session.currency,
    line_items: session.lines.map(lineItem),
    ...(isRecord(session.fulfillmentDetails) ? { fulfillment_details: session.fulfillmentDetails } : {}),
    fulfillment_options: [digitalOption],
    selected_fulfillment_options: [{ type: "digital", option_id: DIGITAL_OPTION_ID, item_ids: lineIds }],
    totals: sessionTotals(session.lines),
    messages: [...messagesOf(view, status), ...orderNote],
    links: [],
    created_at: session.createdAt,
    updated_at: session.updatedAt,
    expires_at: session.expiresAt,
    ...(isRecord(session.metadata) ? { metadata: session.metadata } : {}),
    ...(withOrder && order !== null ? { order } : {})
  }
}

/** The spec's Error. */
export const acpError = (code: string, message: string, param?: string, type = "invalid_request") => ({
  type,
  code,
  message,
  ...(param !== undefined ? { param } : {})
})
