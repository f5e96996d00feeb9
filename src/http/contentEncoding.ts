// Compressed variants of fixed bodies (the API docs page and script, the site's assets): made once,
// off the event loop (zlib's thread pool), and chosen per request from Accept-Encoding. Bodies the
// handlers build per request (JSON answers) are not compressed here: they are small, and a shared
// machine's CPU is better spent answering.
import { Effect } from "effect"
import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

export type Coding = "br" | "gzip" | "identity"

/** A body and its compressed variants (a variant is dropped when it is not smaller). */
export interface EncodedBody {
  readonly identity: Uint8Array
  readonly br: Uint8Array | undefined
  readonly gzip: Uint8Array | undefined
}

/** Below this a body is sent as it is: compressing saves less than the header costs. */
const MIN_BYTES = 1024

/**
 * Compresses a body once: brotli at quality 6 (a 3 MB script in about 0.1 s; 11 takes seconds for
 * a tenth less) and gzip at level 6, both on zlib's thread pool so no request waits behind them.
 */
export const encodeBody = (body: Uint8Array): Effect.Effect<EncodedBody> =>
  body.byteLength < MIN_BYTES
    ? Effect.succeed({ identity: body, br: undefined, gzip: undefined })
    : Effect.promise(async () => {
        const [br, gz] = await Promise.all([
          brotli(body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: 6,
              [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength
            }
          }),
          gzipAsync(body, { level: 6 })
        ])
        const smaller = (b: Buffer) => (b.byteLength < body.byteLength ? new Uint8Array(b) : undefined)
        return { identity: body, br: smaller(br), gzip: smaller(gz) }
      })

/** The q-value a header gives a coding (`*` stands for the ones it does not name); 1 when absent. */
const qualities = (header: string): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    if (!name) continue
    let q = 1
    for (const p of params) {
      const [k, v] = p.trim().split("=")
      if (k === "q" && v !== undefined) {
        const n = Number(v)
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0
      }
    }
    out.set(name, q)
  }
  return out
}

/**
 * The coding to answer with (RFC 9110 §12.5.3): the client's preferred among those it accepts with
 * q > 0, brotli before gzip on a tie; identity when it names none, or refuses both.
 */
export const chooseCoding = (acceptEncoding: string | undefined, body: EncodedBody): Coding => {
  if (acceptEncoding === undefined || acceptEncoding === "") return "identity"
  const q = qualities(acceptEncoding)
  const star = q.get("*") ?? 0
  const of = (c: "br" | "gzip") => q.get(c) ?? star
  const candidates: Array<[Coding, number]> = []
  if (body.br !== undefined && of("br") > 0) candidates.push(["br", of("br")])
  if (body.gzip !== undefined && of("gzip") > 0) candidates.push(["gzip", of("gzip")])
  if (candidates.length === 0) return "identity"
  candidates.sort((a, b) => b[1] - a[1])
  return candidates[0]![0]
}

/** The bytes and headers of the chosen variant; every answer varies by Accept-Encoding. */
export const encodedVariant = (
  acceptEncoding: string | undefined,
  body: EncodedBody
): { readonly bytes: Uint8Array; readonly headers: Record<string, string> } => {
  const coding = chooseCoding(acceptEncoding, body)
  const bytes = coding === "identity" ? body.identity : body[coding]!
  return {
    bytes,
    headers:
      coding === "identity" ? { vary: "accept-encoding" } : { vary: "accept-encoding", "content-encoding": coding }
  }
}
