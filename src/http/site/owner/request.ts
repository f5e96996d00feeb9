// What an owner's request brings: the session (signed in or not), a form from this site's own page,
// dollar amounts typed by a person, and the transaction filters of the page's address.
import { HttpServerRequest } from "effect/http"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidInput } from "../../../schema/platform/errors.js"
import { TransactionStatus } from "../../../schema/commerce/transactions.js"
import { UpdateWalletBody } from "../../../schema/commerce/wallets.js"
import { AppConfig } from "../../../services/platform/AppConfig.js"
import { firstSchemaIssue } from "../../errors.js"
import { noteCaller } from "../../requestLog.js"
import { SESSION_COOKIE } from "../../middleware/auth.js"
import { sessionCaller } from "../../middleware/authLive.js"
import { FIELD_LABELS } from "./format.js"

/**
 * A dollar amount typed by a person, to integer cents without floating point: "12", "12.5", "12.50",
 * "1,200.00"; "" is `empty`. Anything else fails naming the form field.
 */
export const parseDollars = <E>(
  field: string,
  raw: string | null,
  empty: E
): Effect.Effect<number | E, InvalidInput> => {
  const text = (raw ?? "").trim().replace(/,/g, "").replace(/^\$/, "")
  if (text === "") return Effect.succeed(empty)
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text)
  if (!m)
    return Effect.fail(
      new InvalidInput({
        message: `${FIELD_LABELS[field] ?? field}: “${(raw ?? "").trim().slice(0, 40)}” is not an amount in dollars (such as 25 or 25.50)`,
        field
      })
    )
  return Effect.succeed(Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0")))
}

export const list = (raw: string | null): ReadonlyArray<string> | null => {
  const items = (raw ?? "")
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  return items.length === 0 ? null : items
}

// ---------------------------------------------------------------------------------------------
// Session and same-origin rules

/** Not signed in: the sign-in page (the existing dashboard), where the owner signs in and comes back. */
export class SignedOut extends Schema.TaggedError<SignedOut>()("SignedOut", {}) {}

/** The signed-in owner, from the session cookie (the same session as /agent-dashboard). */
export const ownerSession = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const token = request.cookies[SESSION_COOKIE]
  if (token === undefined || token === "") return yield* Effect.fail(new SignedOut())
  // noteCaller: the access log names the account, as for the dashboard's JSON endpoints.
  return yield* sessionCaller(token).pipe(
    Effect.tap(noteCaller),
    Effect.catchTag("Unauthorized", () => Effect.fail(new SignedOut()))
  )
})

export const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * A form post must come from this site's own page: `Origin` (every browser sends it on a form post)
 * equal to BASE_URL's or the Host the request was sent to, and `Sec-Fetch-Site` same-origin when
 * present. The session cookie is SameSite=Strict as well; this refuses what that would miss (an
 * old browser, a same-site sibling). Refused: 403 before any service is called.
 */
export const sameOriginForm = (request: HttpServerRequest.HttpServerRequest, baseUrl: string): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return false
  const origin = request.headers.origin
  if (origin === undefined || origin === "null") return false
  const allowed = new Set([originOf(baseUrl)])
  const host = request.headers.host
  if (host) for (const scheme of ["http", "https"]) allowed.add(`${scheme}://${host}`)
  return allowed.has(originOf(origin))
}

export const formOf = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig
  if (!sameOriginForm(request, config.baseUrl)) {
    return yield* Effect.fail(
      new Forbidden({ message: "this form must be sent from the dashboard's own page (same origin)" })
    )
  }
  const contentType = request.headers["content-type"] ?? ""
  if (!contentType.startsWith("application/x-www-form-urlencoded")) {
    return yield* Effect.fail(
      new InvalidInput({ message: "send the form as application/x-www-form-urlencoded", field: "Content-Type" })
    )
  }
  const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
  return new URLSearchParams(text)
})

// ---------------------------------------------------------------------------------------------
// The page's query and the policy form

export const TxFilters = Schema.Struct({
  status: Schema.optional(TransactionStatus),
  role: Schema.optional(Schema.Literals(["buyer", "seller"])),
  from: Schema.optional(
    Schema.String.pipe(
      Schema.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date (YYYY-MM-DD)" }))
    )
  ),
  to: Schema.optional(
    Schema.String.pipe(
      Schema.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date (YYYY-MM-DD)" }))
    )
  ),
  cursor: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(500))))
})
export type TxFilters = typeof TxFilters.Type

/** The page's query: empty values are absent (a filter form sends every field); bad values are 400 naming the field. */
export const filtersOf = Effect.fnUntraced(function* (url: string) {
  const q = new URL(url, "http://x").searchParams
  const raw: Record<string, string> = {}
  for (const k of ["status", "role", "from", "to", "cursor"]) {
    const v = q.get(k)
    if (v !== null && v !== "") raw[k] = v
  }
  return yield* Schema.decodeUnknownEffect(TxFilters)(raw).pipe(
    Effect.mapError((e) => {
      const { path, message } = firstSchemaIssue(e)
      return new InvalidInput({ message: `${path ?? "query"}: ${message}`, field: path ?? "query" })
    })
  )
})

/** The policy form, decoded into the same body `PATCH /api/dashboard/commerce/wallets/:agentId` takes. */
export const policyBody = Effect.fnUntraced(function* (form: URLSearchParams) {
  const body = {
    perTransactionLimitCents: yield* parseDollars("perTransactionLimit", form.get("perTransactionLimit"), null),
    dailyLimitCents: yield* parseDollars("dailyLimit", form.get("dailyLimit"), null),
    monthlyLimitCents: yield* parseDollars("monthlyLimit", form.get("monthlyLimit"), null),
    approvalThresholdCents: yield* parseDollars("approvalThreshold", form.get("approvalThreshold"), undefined),
    autonomyLevel: form.get("autonomyLevel") ?? undefined,
    allowedCategories: list(form.get("allowedCategories")),
    allowedSellers: list(form.get("allowedSellers")),
    autoRecharge: {
      enabled: form.get("autoRechargeEnabled") === "on",
      thresholdCents: yield* parseDollars("autoRechargeThreshold", form.get("autoRechargeThreshold"), undefined),
      amountCents: yield* parseDollars("autoRechargeAmount", form.get("autoRechargeAmount"), undefined)
    }
  }
  return yield* Schema.decodeUnknownEffect(UpdateWalletBody)(body).pipe(
    Effect.mapError((e) => {
      const { path, message } = firstSchemaIssue(e)
      return new InvalidInput({ message: `${path ?? "policy"}: ${message}`, field: path ?? "policy" })
    })
  )
})
