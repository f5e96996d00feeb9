// The body-size limit, checked before a byte of the body is read: a Content-Length over the limit
// is 413, and a chunked body (whose size is only known by reading it) is 411. Both close the
// connection, so the unread body is never drained.
import { LengthRequired, PayloadTooLarge } from "../../schema/platform/errors.js"
import { errorResponse } from "../errors.js"
import { MUTATING, type Refusal } from "./refusal.js"

/** 413 for a declared Content-Length over `maxBodyBytes`, on any request. */
export const oversizedBody =
  (maxBodyBytes: number): Refusal =>
  (request, requestId) => {
    const length = Number(request.headers["content-length"] ?? "0")
    if (!Number.isFinite(length) || length <= maxBodyBytes) return undefined
    return errorResponse(
      new PayloadTooLarge({
        message: `request body is ${length} bytes; the limit is ${maxBodyBytes}`,
        limitBytes: maxBodyBytes
      }),
      requestId,
      { connection: "close" }
    )
  }

/** 411 for a write with Transfer-Encoding and no Content-Length: ask for a length instead. */
export const chunkedBody: Refusal = (request, requestId) =>
  MUTATING.has(request.method) &&
  request.headers["content-length"] === undefined &&
  request.headers["transfer-encoding"] !== undefined
    ? errorResponse(
        new LengthRequired({
          message: "send the request body with a Content-Length header; chunked bodies are not accepted"
        }),
        requestId,
        { connection: "close" }
      )
    : undefined
