// The MPP "Payment" scheme's wire encodings: canonical JSON, the body digest, the
// WWW-Authenticate challenge, the id's binding string, the credential and the receipt header.
// Pure: no service, no secret.
import { createHash } from "node:crypto"
import type { Challenge, ChallengeRecord, ChargeRequest, Receipt } from "../../schema/mpp/challenge.js"
import { CHARGE_INTENT, CREDITS_METHOD, MPP_REALM } from "../../schema/mpp/protocol.js"

/** base64url without padding. */
export const b64url = (s: string) => Buffer.from(s, "utf8").toString("base64url")

/** JSON with sorted keys and no whitespace: RFC 8785 (JCS) for objects of strings. */
export const canonical = (o: Record<string, string>) =>
  JSON.stringify(
    Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]])
    )
  )

/** RFC 9530 Content-Digest value of a body: SHA-256 over its bytes, as a structured-field byte sequence. */
export const contentDigest = (body: string | Uint8Array) => {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body
  return `sha-256=:${createHash("sha256").update(bytes).digest("base64")}:`
}

/** JSON with object keys sorted at every level (JCS-like): the same content always gives the same text. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`
  }
  return JSON.stringify(value ?? null)
}

const quote = (v: string) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`

/**
 * The WWW-Authenticate value of a challenge (RFC 9110 auth-params), in mppx's parameter order;
 * `header` only when it is not the default `Authorization`.
 */
export const wwwAuthenticate = (c: Challenge) =>
  `Payment id=${quote(c.id)}, realm=${quote(c.realm)}, method=${quote(c.method)}, intent=${quote(c.intent)}, ` +
  `request=${quote(c.request)}, digest=${quote(c.digest)}, expires=${quote(c.expires)}` +
  `${c.header !== undefined ? `, header=${quote(c.header)}` : ""}, opaque=${quote(c.opaque)}`

/** The parameters a challenge id binds. */
export interface ChallengeParameters {
  readonly realm: string
  readonly method: string
  readonly intent: string
  readonly request: string
  readonly expires: string
  readonly digest: string
  readonly header?: string | undefined
  readonly opaque: string
}

/**
 * What the challenge id is an HMAC of (the binding mppx computes and verifies): the parameters in
 * fixed slots joined by "|", `header` only when it names a field other than Authorization.
 */
export const challengeBinding = (c: ChallengeParameters) => {
  const header = c.header !== undefined && c.header.toLowerCase() !== "authorization" ? [c.header] : []
  return [c.realm, c.method, c.intent, c.request, c.expires, c.digest, ...header, c.opaque].join("|")
}

/** The Payment-Receipt header value. */
export const receiptHeader = (r: Receipt) => b64url(JSON.stringify(r))

/** The credential a client sends: `Payment <base64url(JSON)>` echoing the challenge. */
export const makeCredential = (c: Challenge, payload: Record<string, unknown> = {}) =>
  `Payment ${b64url(
    JSON.stringify({
      challenge: {
        id: c.id,
        realm: c.realm,
        method: c.method,
        intent: c.intent,
        request: c.request,
        expires: c.expires,
        digest: c.digest,
        ...(c.header !== undefined ? { header: c.header } : {}),
        opaque: c.opaque
      },
      payload
    })
  )}`

/** The challenge a credential echoes, as sent (only the id is checked to be a string). */
export interface EchoedChallenge {
  readonly id: string
  readonly realm?: unknown
  readonly method?: unknown
  readonly intent?: unknown
  readonly request?: unknown
  readonly expires?: unknown
  readonly digest?: unknown
  readonly header?: unknown
  readonly opaque?: unknown
}

/** `Payment <b64token>`; the scheme name is case-insensitive (RFC 9110 §11.1). */
const CREDENTIAL = /^payment[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i

/** True when a header value is a Payment credential (any case of the scheme name). */
export const isPaymentCredential = (header: string | undefined) =>
  header !== undefined && /^payment[ ]/i.test(header.trimStart())

/** Parses `Payment <b64url JSON>`; undefined when malformed. */
export const parseCredential = (
  header: string
): { readonly challenge: EchoedChallenge; readonly payload: unknown } | undefined => {
  const m = CREDENTIAL.exec(header.trim())
  if (!m) return undefined
  try {
    const json = JSON.parse(Buffer.from(m[1].replace(/=+$/, ""), "base64url").toString("utf8")) as unknown
    if (typeof json !== "object" || json === null) return undefined
    const { challenge, payload } = json as { challenge?: unknown; payload?: unknown }
    if (typeof challenge !== "object" || challenge === null) return undefined
    if (typeof (challenge as { id?: unknown }).id !== "string") return undefined
    if (payload !== undefined && (typeof payload !== "object" || payload === null)) return undefined
    return { challenge: challenge as EchoedChallenge, payload: payload ?? {} }
  } catch {
    return undefined
  }
}

/** The wire challenge of a stored one. */
export const toChallenge = (
  r: ChallengeRecord,
  decoded: ChargeRequest,
  extra: { readonly header: string | undefined; readonly opaque: string }
): Challenge => ({
  id: r.id,
  realm: MPP_REALM,
  method: CREDITS_METHOD,
  intent: CHARGE_INTENT,
  request: r.request,
  requestDecoded: decoded,
  expires: r.expiresAt,
  digest: r.digest,
  ...(extra.header !== undefined ? { header: extra.header } : {}),
  opaque: extra.opaque
})
