// The cross-site (CSRF) guard: a write authenticated by the session cookie alone must be the
// dashboard's own JSON call. A cross-site form (text/plain, urlencoded, multipart, even with an
// empty body) or a call from another origin is refused 403 before it reaches a handler.
import type { HttpServerRequest } from "effect/http"
import { Forbidden } from "../../schema/platform/errors.js"
import { errorResponse } from "../errors.js"
import { SESSION_COOKIE } from "./auth.js"
import { isJsonMediaType } from "./mediaType.js"
import { isApiWrite, type Refusal } from "./refusal.js"

/** The origin (scheme://host[:port]) of a URL, or undefined. */
const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * A write that carries the session cookie and no bearer key, and is not the dashboard's own call:
 * not `application/json`, or an `Origin` other than the service's (BASE_URL's, or the Host the
 * request was sent to), or `Sec-Fetch-Site` other than same-origin / none. Clients that send
 * neither header (curl, the CLI, tests) are judged by the media type alone; browsers always send
 * Origin on a cross-site POST.
 */
export const crossSiteCookieWrite = (request: HttpServerRequest.HttpServerRequest, baseUrl: string): boolean => {
  if (request.headers.authorization !== undefined || request.cookies[SESSION_COOKIE] === undefined) return false
  if (!isJsonMediaType(request.headers["content-type"])) return true
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin" && site !== "none") return true
  const origin = request.headers.origin
  if (origin === undefined) return false
  const allowed = new Set([originOf(baseUrl)])
  const host = request.headers.host
  if (host) for (const scheme of ["http", "https"]) allowed.add(`${scheme}://${host}`)
  return !allowed.has(originOf(origin) ?? origin)
}

const MESSAGE =
  "a write authenticated by the session cookie must be a JSON request (Content-Type: application/json) " +
  "from the dashboard's own origin"

/** 403 for a cookie-authenticated write under /api/ that is not the dashboard's own JSON call. */
export const crossSiteWrite =
  (baseUrl: string): Refusal =>
  (request, requestId) =>
    isApiWrite(request) && crossSiteCookieWrite(request, baseUrl)
      ? errorResponse(new Forbidden({ message: MESSAGE }), requestId)
      : undefined
