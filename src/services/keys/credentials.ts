// Secrets at rest: passwords hashed with scrypt (salted, verified in constant time), session tokens
// and API keys stored only as their SHA-256 digest.
import { Effect } from "effect"
import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto"
import { promisify } from "node:util"

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object
) => Promise<Buffer>

/** One-shot (crypto.hash): a third of createHash's cost for a key's 51 characters, paid per request. */
export const sha256 = (s: string) => hash("sha256", s, "hex")

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 }

export const hashPassword = (password: string) =>
  Effect.promise(async () => {
    const salt = randomBytes(16)
    const hash = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p })
    return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64url")}$${hash.toString("base64url")}`
  })

export const verifyPassword = (password: string, stored: string) =>
  Effect.promise(async () => {
    const [scheme, n, r, p, salt, hash] = stored.split("$")
    if (scheme !== "scrypt" || !salt || !hash) return false
    const expected = Buffer.from(hash, "base64url")
    const options = { N: Number(n), r: Number(r), p: Number(p) }
    const actual = await scrypt(password, Buffer.from(salt, "base64url"), expected.length, options)
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  })

/** Verified against when the e-mail is unknown, so the time taken does not tell which accounts exist. */
export const DUMMY_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
