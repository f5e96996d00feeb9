// Input no handler may see: a NUL (PostgreSQL text cannot store it) in the URL or a JSON body, an
// unpaired UTF-16 surrogate escape (PostgreSQL jsonb refuses it, no UTF-8 text can carry it), and
// JSON nested deeper than MAX_JSON_DEPTH. Each is a 400 before any decoder runs.
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { errorResponse } from "../errors.js"
import { isJsonMediaType } from "./mediaType.js"
import { MUTATING, type Refusal } from "./refusal.js"

/** Deepest JSON nesting accepted. Deeper documents overflow the stack of schema error formatting. */
export const MAX_JSON_DEPTH = 64

/**
 * One linear pass over a JSON text (no recursion): the deepest bracket nesting outside strings;
 * whether a string holds a NUL (`\u0000`), which PostgreSQL text cannot store; and whether it holds
 * an unpaired surrogate escape (`\udc00` alone), which PostgreSQL jsonb refuses and no UTF-8 text
 * can carry.
 */
export const scanJson = (
  text: string
): { readonly depth: number; readonly nul: boolean; readonly loneSurrogate: boolean } => {
  let depth = 0
  let max = 0
  let nul = false
  let loneSurrogate = false
  let inString = false
  const hex = (at: number) =>
    /^[0-9a-fA-F]{4}$/.test(text.slice(at, at + 4)) ? parseInt(text.slice(at, at + 4), 16) : -1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) {
        if (text.charCodeAt(i + 1) === 117) {
          const unit = hex(i + 2)
          if (unit === 0) nul = true
          else if (unit >= 0xd800 && unit <= 0xdbff) {
            const next = text.startsWith("\\u", i + 6) ? hex(i + 8) : -1
            if (next >= 0xdc00 && next <= 0xdfff) i += 6
            else loneSurrogate = true
          } else if (unit >= 0xdc00 && unit <= 0xdfff) loneSurrogate = true
        }
        i++
      } else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) max = Math.max(max, ++depth)
    else if (c === 125 || c === 93) depth--
  }
  return { depth: max, nul, loneSurrogate }
}

const SURROGATE_MESSAGE = "unpaired UTF-16 surrogate escapes (e.g. \\udc00 alone) are not accepted in any input"
const NUL_MESSAGE = "NUL characters (\\u0000, %00) are not accepted in any input"

/** 400 for a request-target holding an escaped NUL (`%00`). */
export const nulInUrl: Refusal = (request, requestId) =>
  /%00/i.test(request.url) ? errorResponse(new InvalidInput({ message: NUL_MESSAGE }), requestId) : undefined

/**
 * Runs `inner` unless the request is a write with a JSON body nested deeper than MAX_JSON_DEPTH or
 * holding a NUL or an unpaired surrogate: then 400. The body is read here (the request caches it).
 */
export const withJsonGuard = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  inner: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  MUTATING.has(request.method) && isJsonMediaType(request.headers["content-type"])
    ? Effect.flatMap(request.text, (text) => {
        const scan = scanJson(text)
        if (scan.depth > MAX_JSON_DEPTH) {
          const message = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`
          return Effect.succeed(errorResponse(new InvalidInput({ message }), requestId))
        }
        if (scan.nul) return Effect.succeed(errorResponse(new InvalidInput({ message: NUL_MESSAGE }), requestId))
        if (scan.loneSurrogate) {
          return Effect.succeed(errorResponse(new InvalidInput({ message: SURROGATE_MESSAGE }), requestId))
        }
        return inner
      })
    : inner
