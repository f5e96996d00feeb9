// A text message, matched to one of the common asks (docs/a2a.md "Text"): a small table of phrases,
// not a language model. A text that matches none is answered with the skills and how to call them,
// never a protocol error: agents that speak A2A talk in text first.
import type { Json } from "./rpc.js"

/** What a text asks for: a route to run (a skill's, or get_service for a price) and its arguments. */
export interface Intent {
  /** The row of the table that matched (metadata.intent of the answer). */
  readonly intent: "list_services" | "price" | "buy" | "tiers" | "status"
  /** The tool (= REST route) to run. */
  readonly tool: "list_services" | "get_service" | "buy" | "transaction"
  readonly args: Json
}

/** Nothing matched (or the text asked for help): the answer is the skills and the phrases. */
export interface NoIntent {
  readonly intent: "help"
  /** Why, when the text was close to a row (a status without an id…). */
  readonly hint?: string
}

/** How many services a text listing shows. */
export const TEXT_LIST_LIMIT = 10

const SERVICE_ID = /\b(svc_[A-Za-z0-9_-]+)/
const TRANSACTION_ID = /\b((?:tx|apr)_[A-Za-z0-9_-]+)/
const TIER = /\b(?:tier|plan)\s+([A-Za-z0-9_-]+)/i

/** The words left of a phrase once its verb and filler are gone ("for translation" → "translation"). */
const topic = (text: string) =>
  text
    .replace(/[?.!]+$/g, "")
    .replace(/\b(?:for|on) sale\b|\bavailable\b/gi, "")
    .replace(/^\s*(?:(?:for|about|of|on|in|is|are|does|do|with|there)\s+)+/i, "")
    .replace(/\s+(?:cost|costs)\s*$/i, "")
    .trim()

const listing = (q: string): Intent => ({
  intent: "list_services",
  tool: "list_services",
  args: q === "" ? { limit: TEXT_LIST_LIMIT } : { q, limit: TEXT_LIST_LIMIT }
})

/**
 * The intent of a text, first matching row wins (the table in docs/a2a.md, in this order):
 * status of an id; buy; price; list services; otherwise help.
 */
export const intentOf = (raw: string): Intent | NoIntent => {
  const text = raw.trim().replace(/\s+/g, " ")
  const lower = text.toLowerCase()

  // 1. status of tx_… / check tx_… / where is tx_…
  if (/^(?:what(?:'s| is) the )?(?:status|check|track|where is|what happened to)\b/.test(lower)) {
    const id = TRANSACTION_ID.exec(text)?.[1]
    return id === undefined
      ? { intent: "help", hint: "name the purchase: status of tx_… (its transaction id, which is also its task id)" }
      : { intent: "status", tool: "transaction", args: { id } }
  }

  // 2. buy svc_… tier … (without a tier: the service's tiers; without a service id: a search)
  const buy = /^(?:please\s+)?(?:buy|purchase|order|get me)\b\s*(.*)$/i.exec(text)
  if (buy) {
    const serviceId = SERVICE_ID.exec(text)?.[1]
    if (serviceId === undefined) return listing(topic(buy[1]!))
    const tierId =
      TIER.exec(text)?.[1] ?? new RegExp(`${serviceId}\\s+([A-Za-z0-9_-]+)\\s*$`).exec(text)?.[1] ?? undefined
    return tierId === undefined
      ? { intent: "tiers", tool: "get_service", args: { id: serviceId } }
      : { intent: "buy", tool: "buy", args: { serviceId, tierId } }
  }

  // 3. price of svc_… / how much is … / what does … cost
  const price = /\b(?:prices?|costs?|how much)\b(.*)$/i.exec(text)
  if (price) {
    const serviceId = SERVICE_ID.exec(text)?.[1]
    return serviceId === undefined
      ? { ...listing(topic(price[1]!.replace(/^\s*(?:of|is|are|does|do|for)\s+/i, ""))), intent: "price" }
      : { intent: "price", tool: "get_service", args: { id: serviceId } }
  }

  // 4. list services / what is for sale / browse … / search …
  const list =
    /^(?:(?:please\s+)?(?:list|show|browse|find|search|what|which)\b.*?\b(?:services?|for sale|on sale|catalog(?:ue)?|offers?)\b|browse\b|search\b|find\b|services?\b|catalog(?:ue)?\b)\s*(.*)$/i.exec(
      text
    )
  if (list) return listing(topic(list[1]!))

  return { intent: "help" }
}

/** The phrases the table understands, as the help answer and the card show them. */
export const intentExamples: ReadonlyArray<{ readonly say: string; readonly does: string }> = [
  { say: "list services for translation", does: "browse_services with q (at most 10 services)" },
  { say: "price of svc_doc_translate", does: "the service's tiers and prices (or a search when no svc_ id is named)" },
  {
    say: "buy svc_doc_translate tier starter",
    does: "buy (without a tier: the service's tiers; without an svc_ id: a search)"
  },
  { say: "status of tx_…", does: "check_transaction" }
]

const dollars = (c: unknown) => (typeof c === "number" ? `$${(c / 100).toFixed(2)}` : "?")
const isObj = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** One service in a line: its id, name and each tier's price. */
const serviceLine = (s: Json) => {
  const tiers = Array.isArray(s.tiers)
    ? s.tiers
        .filter(isObj)
        .map((t) => `${String(t.id)} ${dollars(t.priceCents)}${typeof t.unit === "string" ? ` per ${t.unit}` : ""}`)
        .join(", ")
    : ""
  return `${String(s.id)} "${String(s.name)}": ${tiers}`
}

/**
 * The text part of an intent's answer, for a reader (the data part carries the route's JSON as it
 * is): what was found or done, and the next phrase to say. A refusal keeps the route's message.
 */
export const intentText = (intent: Intent, status: number, json: unknown): string => {
  const body = isObj(json) ? json : {}
  if (status >= 400)
    return `Refused (${status}): ${typeof body.message === "string" ? body.message : typeof body.title === "string" ? body.title : "see the data part"}`
  switch (intent.intent) {
    case "list_services":
    case "price": {
      if (intent.tool === "get_service") return `${serviceLine(body)}. To buy: buy ${String(body.id)} tier <tier id>.`
      const found = Array.isArray(body.data) ? body.data.filter(isObj) : []
      if (found.length === 0) return "No service on sale matches. Say: list services."
      return `${found.length} service${found.length === 1 ? "" : "s"}${body.nextCursor ? " (more: send the skill browse_services with cursor)" : ""}: ${found.map(serviceLine).join("; ")}. To buy one: buy <service id> tier <tier id>.`
    }
    case "tiers":
      return `${serviceLine(body)}. Name a tier: buy ${String(body.id)} tier <tier id>.`
    case "buy":
    case "status": {
      const tx = intent.intent === "buy" ? (isObj(body.transaction) ? body.transaction : undefined) : body
      if (intent.intent === "buy" && body.status === "pending_approval")
        return "Your owner must approve this purchase; nothing is charged until they do."
      if (tx === undefined) return `Done (${status}).`
      return `${String(tx.id)}: ${String(tx.status)}, ${String(tx.serviceId)}/${String(tx.tierId)} for ${dollars(tx.priceCents)}.`
    }
  }
}
