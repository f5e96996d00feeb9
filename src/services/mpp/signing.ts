// Challenge ids: the HMAC of a challenge's parameters under the service's key, and the
// constant-time check that an echoed challenge's id is the binding of its echoed parameters.
import { Option, Redacted } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { challengeBinding, type ChallengeParameters, type EchoedChallenge } from "./encoding.js"

/**
 * The HMAC key of challenge ids: MPP_CHALLENGE_SECRET, or else random per process (open
 * challenges then die with it).
 */
export const challengeKey = (secret: Option.Option<Redacted.Redacted>) =>
  Option.match(secret, { onNone: () => randomBytes(32), onSome: (s) => Buffer.from(Redacted.value(s), "utf8") })

export const challengeSigner = (hmacKey: Buffer) => {
  const challengeId = (c: ChallengeParameters) =>
    createHmac("sha256", hmacKey).update(challengeBinding(c), "utf8").digest("base64url")

  /** Constant-time: does the echoed id equal the HMAC of the echoed parameters? */
  const bound = (echoed: EchoedChallenge) => {
    const str = (u: unknown) => (typeof u === "string" ? u : undefined)
    const realm = str(echoed.realm)
    const method = str(echoed.method)
    const intent = str(echoed.intent)
    const request = str(echoed.request)
    const expires = str(echoed.expires)
    const digest = str(echoed.digest)
    const opaque = str(echoed.opaque)
    const header = str(echoed.header)
    if (
      realm === undefined ||
      method === undefined ||
      intent === undefined ||
      request === undefined ||
      expires === undefined ||
      digest === undefined ||
      opaque === undefined
    ) {
      return false
    }
    const expected = Buffer.from(challengeId({ realm, method, intent, request, expires, digest, header, opaque }))
    const given = Buffer.from(echoed.id)
    return expected.length === given.length && timingSafeEqual(expected, given)
  }

  return { challengeId, bound } as const
}
