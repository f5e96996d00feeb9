// What the document says about requests beyond their schemas: the rules no schema can state, and
// the body of a cookie-authenticated write that takes no input.
import type { Json } from "./json.js"

/**
 * The rules on a request that no schema can state, because they read the server's state or the
 * meaning of a value. Each refusal is 400 naming the field; the document says so in the
 * operation's description (test/http/contract-requests.test.ts holds a valid request to nothing else).
 */
export const REQUEST_RULES: Readonly<Record<string, ReadonlyArray<readonly [field: string, rule: string]>>> = {
  "payments.webhook": [
    [
      "Stripe-Signature",
      "the processor's signature over the exact body, made with this server's webhook secret, at most 300 s old"
    ]
  ],
  "mpp.invoke": [
    [
      "Payment-Authorization",
      "a Payment credential answering this server's challenge (a malformed or unsupported one is 400 problem details)"
    ]
  ],
  "projects.create": [
    ["templateId", "a template of the catalogue"],
    [
      "inputs",
      "each input's content decodes as its encoding and is of its kind (a PDF, an image, a CSV with a header and a " +
        "row, …), all of them together within the size limit"
    ]
  ],
  "dashboard.createKey": [["expiresAt", "a time in the future"]],
  "dashboard.createAgent": [
    ["dailyLimitCents", "not above monthlyLimitCents, as the new wallet will be (the defaults changed by `wallet`)"]
  ],
  "webhooks.put": [
    [
      "url",
      "an http(s) address the server may deliver to: a public host (private, loopback, link-local and unresolvable " +
        "ones are refused alike)"
    ]
  ],
  "commerce.publishService": [
    ["tiers", "tier ids unique within the service"],
    [
      "fulfilment",
      "`push` with the http(s) address orders are posted to (a public host: private, loopback, link-local and " +
        "unresolvable ones are refused, as for webhooks), `pull` or `simulated` without one; `simulated` only " +
        "for the platform's own sellers"
    ]
  ],
  "commerce.updateService": [
    ["tiers", "tier ids unique within the service"],
    [
      "fulfilment",
      "`push` with the http(s) address orders are posted to (a public host: private, loopback, link-local and " +
        "unresolvable ones are refused, as for webhooks), `pull` or `simulated` without one; `simulated` only " +
        "for the platform's own sellers"
    ]
  ],
  "commerce.updateWallet": [["dailyLimitCents", "not above monthlyLimitCents, as the wallet will be after the change"]],
  "commerceDashboard.updateWallet": [
    ["dailyLimitCents", "not above monthlyLimitCents, as the wallet will be after the change"]
  ],
  "projects.catalog": [["minPriceCents", "not above maxPriceCents"]],
  "projects.session": [["sessionId", "a session of this agent, in a state that allows the step"]],
  "invest.invest": [["amountCents", "enough for at least one whole token at the offering's price"]]
}

/** The sentence an operation's description gains from its REQUEST_RULES ("" when it has none). */
export const describeRules = (operationId: string): string => {
  const rules = REQUEST_RULES[operationId]
  if (!rules) return ""
  const each = rules.map(([field, rule]) => `\`${field}\` is ${rule}`).join("; ")
  return `\n\nBeyond the schemas, 400 naming the field unless: ${each}.`
}

/**
 * The body of a dashboard write that takes no input (sign-out, revoke, approve, decline): none is
 * read, but a write authenticated by the session cookie alone must be a JSON request, so the media
 * type is part of the request (src/http/middleware/crossSite.ts).
 */
export const cookieWriteBody: Json = {
  required: true,
  description:
    "No input: the body is ignored. Send `Content-Type: application/json` (with `{}` or no body at all): a write " +
    "authenticated by the session cookie that is not a JSON request is refused 403 as a possible cross-site form.",
  content: { "application/json": { schema: {} } }
}
