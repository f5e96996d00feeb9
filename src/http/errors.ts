// One JSON error body for every REST error; status and tRPC code derived from the error's schema.
import { HttpServerResponse } from "effect/http"
import { Schema, SchemaAST, SchemaIssue } from "effect"

export interface ErrorBody {
  readonly _tag: string
  readonly type: string
  readonly message: string
  readonly field?: string
  readonly requestId: string
  readonly [extra: string]: unknown
}

type TaggedLike = { readonly _tag: string; readonly message?: unknown }

const isTagged = (u: unknown): u is TaggedLike =>
  typeof u === "object" && u !== null && typeof (u as { _tag?: unknown })._tag === "string"

/** The HTTP status annotated on a tagged error's schema (500 for anything unannotated). */
export const statusOf = (error: unknown): number => {
  const ctor = (error as { constructor?: unknown })?.constructor as Schema.Top | undefined
  if (ctor && Schema.isSchema(ctor)) {
    const status = SchemaAST.resolve(ctor.ast)?.httpApiStatus
    if (typeof status === "number") return status
  }
  return 500
}

/** The encoded fields of a tagged error (its schema's encoding), without the stack. */
export const encodeError = (error: unknown): Record<string, unknown> => {
  const ctor = (error as { constructor?: unknown })?.constructor as Schema.Top | undefined
  if (ctor && Schema.isSchema(ctor)) {
    try {
      return Schema.encodeUnknownSync(ctor as Schema.Codec<unknown, unknown>)(error) as Record<string, unknown>
    } catch {
      // fall through
    }
  }
  return isTagged(error)
    ? { _tag: error._tag, message: String(error.message ?? error._tag) }
    : { _tag: "InternalError" }
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * The first issue of a schema decode failure: its path (dot-joined; undefined for the input as a
 * whole) and message. 4.x says "Missing key" where 3.x said "is missing"; the wire keeps the latter, and
 * names an unknown body field as such.
 */
export const firstSchemaIssue = (
  error: Schema.SchemaError
): { readonly path: string | undefined; readonly message: string } => {
  const issue = formatIssues(error.issue).issues[0]
  const path =
    issue && issue.path && issue.path.length > 0
      ? issue.path
          .map((p) => String(typeof p === "object" && p !== null && "key" in p ? (p as { key: unknown }).key : p))
          .join(".")
      : undefined
  const message =
    issue?.message === "Missing key"
      ? "is missing"
      : issue?.message === "Expected no excess property"
        ? "is not a known field (check its spelling)"
        : (issue?.message ?? "is invalid")
  return { path, message }
}

/** Field path of the first issue in an HttpApiDecodeError-shaped body. */
const fieldOfIssues = (issues: unknown): { field?: string; detail?: string } => {
  if (!Array.isArray(issues) || issues.length === 0) return {}
  const first = issues[0] as { path?: ReadonlyArray<unknown>; message?: unknown }
  const path = Array.isArray(first.path) ? first.path.map(String).join(".") : undefined
  return {
    field: path === "" ? undefined : path,
    detail: typeof first.message === "string" ? first.message : undefined
  }
}

/** Normalises any encoded error object into the one REST error body. */
export const toErrorBody = (encoded: Record<string, unknown>, requestId: string): ErrorBody => {
  const tag = typeof encoded._tag === "string" ? encoded._tag : "InternalError"
  if (tag === "HttpApiDecodeError") {
    const { field, detail } = fieldOfIssues(encoded.issues)
    return {
      ...encoded,
      _tag: tag,
      type: "InvalidInput",
      message: field ? `${field}: ${detail ?? "is invalid"}` : (detail ?? String(encoded.message ?? "invalid input")),
      ...(field ? { field } : {}),
      requestId
    }
  }
  return {
    ...encoded,
    _tag: tag,
    type: tag,
    message: typeof encoded.message === "string" ? encoded.message : tag,
    requestId
  }
}

/**
 * Retry-After (seconds) on every 503: each one is a failure a retry can fix (the database is
 * restarting, failing over, or refused the connection). One second keeps a retry inside the
 * failover window it waits out without turning every waiting client into a busy loop
 * (docs/errors.md).
 */
export const RETRY_AFTER_SECONDS = 1

/** A response with Retry-After when it is a 503 that has none yet. */
export const withRetryAfter = (
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse =>
  response.headers["retry-after"] !== undefined
    ? response
    : response.status === 503
      ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
      : // A 429 a route answered itself (too many waits at once on one key): a second is enough.
        response.status === 429
        ? HttpServerResponse.setHeader(response, "retry-after", "1")
        : response

export const errorResponse = (error: unknown, requestId: string, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe(toErrorBody(encodeError(error), requestId), {
    status: statusOf(error),
    headers: headers ?? {}
  })

export const internalErrorBody = (requestId: string): ErrorBody => ({
  _tag: "InternalError",
  type: "InternalError",
  message: "internal error; quote the request id when reporting it",
  requestId
})
