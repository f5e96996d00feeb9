// What the Idempotency-Key middleware compares and stores: who a key belongs to (its scope), the
// request it was first used with (a hash), which answers are kept, and the stored form of an answer.
import { type HttpBody, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Option } from "effect"
import { hash } from "node:crypto"
import { Conflict } from "../../schema/platform/errors.js"
import { KEY_PREFIX } from "../../schema/keys/keys.js"
import type { StoredResponse } from "../../services/idempotency/IdempotencyStore.js"
import { encodeError, toErrorBody } from "../errors.js"
import { canonicalPath, queryOf } from "../routePath.js"
import { SESSION_COOKIE } from "./auth.js"
import { presentedKey } from "./authLive.js"
import { sortKeys } from "../../schema/platform/sortKeys.js"

const decoder = new TextDecoder()
const sha256 = (s: string) => hash("sha256", s, "hex")

/**
 * Who the key belongs to, hashed: the API key (wherever it travels: a Payment credential in
 * Authorization, the key in X-API-Key, changes with every payment and must not change the scope),
 * else the Authorization header, the session cookie, or, without credentials, the network address,
 * so two anonymous clients never share keys.
 */
export const scopeOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const cookie = request.cookies[SESSION_COOKIE]
  const anonymous = `anonymous:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
  const presented = presentedKey(request.headers.authorization, request.headers["x-api-key"])
  const who =
    presented !== undefined
      ? `Bearer ${presented}`
      : (request.headers.authorization ?? (cookie ? `session:${cookie}` : anonymous))
  return sha256(who)
}

/** The body as compared for Idempotency-Key reuse: canonical JSON when it parses, else the bytes. */
const canonicalBody = (text: string): string => {
  if (text === "") return text
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)))
  } catch {
    return text
  }
}

/**
 * The request a key was used with: method, path as the router reads it (case kept: ids are
 * case-sensitive), so `//api/x` and `/api/x` with one key are one request, not two, query, body.
 */
export const requestHashOf = (request: HttpServerRequest.HttpServerRequest, body: string): string =>
  sha256(`${request.method} ${canonicalPath(request.url)}?${queryOf(request.url)}\n${canonicalBody(body)}`)

/**
 * Outcomes that say "not processed, try again": never replayed. A 402 is one of them: the client
 * that pays and retries with the same key must get the paid answer, not the challenge again.
 */
export const replayable = (status: number) =>
  status < 500 && status !== 429 && status !== 401 && status !== 402 && status !== 413

/**
 * A whole one-time secret — an API key (not just its display prefix) or a webhook signing secret:
 * a response holding one is never persisted.
 */
const API_KEY_SECRET = new RegExp(`${KEY_PREFIX}[A-Za-z0-9_-]{40,}|whsec_[A-Za-z0-9+/=_-]{24,}`)

const SECRET_WITHHELD =
  "the first request with this Idempotency-Key succeeded; its response held a one-time secret (an API key or a " +
  "webhook signing secret), which is never stored. List your keys (GET /api/dashboard/keys) or rotate the " +
  "webhook secret if it was lost."

/**
 * Stored instead of a response that held a new key's secret: retries learn the first request ran,
 * and nothing is kept in plaintext.
 */
const secretWithheld = (requestId: string): StoredResponse => ({
  status: 409,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(toErrorBody(encodeError(new Conflict({ message: SECRET_WITHHELD })), requestId))
})

/**
 * The stored form of a handler's answer with a byte body: status, headers but the cookie and the
 * request id (a replay gets its own), and the body as text.
 */
export const toStored = (
  response: HttpServerResponse.HttpServerResponse,
  body: HttpBody.Uint8Array,
  requestId: string
): StoredResponse => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(response.headers)) {
    if (name !== "set-cookie" && name !== "x-request-id") headers[name] = value
  }
  headers["content-type"] = body.contentType
  const text = decoder.decode(body.body)
  return API_KEY_SECRET.test(text) ? secretWithheld(requestId) : { status: response.status, headers, body: text }
}

/** A stored answer, replayed: marked Idempotent-Replayed. */
export const replayed = (stored: StoredResponse): HttpServerResponse.HttpServerResponse => {
  const { "content-type": contentType, ...headers } = stored.headers
  return HttpServerResponse.text(stored.body, {
    status: stored.status,
    contentType: contentType ?? "application/json",
    headers: { ...headers, "idempotent-replayed": "true" }
  })
}

/**
 * A 403 that names the permission the caller lacks: the auth middleware's refusal (or a
 * service's, equally without effect).
 */
export const missingPermission = (response: HttpServerResponse.HttpServerResponse): boolean => {
  if (response.status !== 403 || response.body._tag !== "Uint8Array") return false
  try {
    const body = JSON.parse(decoder.decode(response.body.body)) as { permission?: unknown }
    return typeof body?.permission === "string"
  } catch {
    return false
  }
}
