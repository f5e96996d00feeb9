// The request id: a valid incoming X-Request-Id is kept (a proxy or client can correlate), any
// other request gets a fresh one. It names the request in the access log, in every error body and
// in the X-Request-Id response header.
import type { HttpServerRequest } from "effect/http"
import { randomBytes } from "node:crypto"

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The request-id source of one server: a random prefix per server and a counter, unique across
 * processes without a syscall per request.
 */
export const makeRequestIds = (): ((request: HttpServerRequest.HttpServerRequest) => string) => {
  const prefix = `req_${randomBytes(6).toString("base64url")}`
  let counter = 0
  return (request) => {
    const incoming = request.headers["x-request-id"]
    return incoming && REQUEST_ID.test(incoming) ? incoming : `${prefix}${(++counter).toString(36)}`
  }
}
