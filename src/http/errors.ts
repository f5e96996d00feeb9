// One JSON error body for every REST error; status and tRPC code derived from the error's schema.
import { HttpServerResponse } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"

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
    const status = HttpApiSchema.getStatusErrorAST(ctor.ast)
    if (typeof status === "number") return status
  }
  return 500
}

/** The encoded fields of a tagged error (its schema's encoding), without the stack. */
export const encodeError = (error: unknown): Record<string, unknown> => {
  const ctor = (error as { constructor?: unknown })?.constructor as Schema.Top | undefined
  if (ctor && Schema.isSchema(ctor)) {
    try {
      return Schema.encodeUnknownSync(ctor as Schema.Schema<unknown, unknown>)(error) as Record<string, unknown>
    } catch {
      // fall through
    }
  }
  return isTagged(error) ? { _tag: error._tag, message: String(error.message ?? error._tag) } : { _tag: "InternalError" }
}

/** Field path of the first issue in an HttpApiDecodeError-shaped body. */
const fieldOfIssues = (issues: unknown): { field?: string; detail?: string } => {
  if (!Array.isArray(issues) || issues.length === 0) return {}
  const first = issues[0] as { path?: ReadonlyArray<unknown>; message?: unknown }
  const path = Array.isArray(first.path) ? first.path.map(String).join(".") : undefined
  return { field: path === "" ? undefined : path, detail: typeof first.message === "string" ? first.message : undefined }
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
