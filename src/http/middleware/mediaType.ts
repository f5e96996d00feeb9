// Request bodies under /api/ are JSON: a write with a body of another media type is 415 before any
// handler runs, where a form or text body would otherwise be read as no input at all.
import { UnsupportedMediaType } from "../../schema/platform/errors.js"
import { errorResponse } from "../errors.js"
import { isApiWrite, type Refusal } from "./refusal.js"

/**
 * The media type of a Content-Type header: lower-cased `type/subtype` without parameters, or ""
 * when absent or malformed (RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS parameter )`).
 */
export const mediaTypeOf = (header: string | undefined): string => {
  if (header === undefined) return ""
  const essence = header.split(";", 1)[0].trim().toLowerCase()
  return /^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+$/.test(essence) ? essence : ""
}

/**
 * Only `application/json` is JSON here (any parameters, e.g. a charset). `+json` types
 * (vnd.api+json, merge-patch+json, problem+json) carry other semantics this API does not
 * implement, so they are refused with 415 rather than read as plain JSON; a header that merely
 * contains "json" (`application/jsonx`, `multipart/form-data; boundary=json`) is not JSON at all.
 */
export const isJsonMediaType = (header: string | undefined): boolean => mediaTypeOf(header) === "application/json"

/** 415 for a write under /api/ whose declared body is not `application/json`. */
export const nonJsonBody: Refusal = (request, requestId) => {
  const contentType = request.headers["content-type"]
  if (!(Number(request.headers["content-length"] ?? "0") > 0) || isJsonMediaType(contentType)) return undefined
  if (!isApiWrite(request)) return undefined
  const got = JSON.stringify(contentType ?? "none")
  const message = `request bodies are JSON: send Content-Type: application/json (got ${got})`
  return errorResponse(new UnsupportedMediaType({ message, field: "Content-Type" }), requestId)
}
