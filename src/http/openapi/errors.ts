// The errors of the document: the one error body (the `Error` envelope), the failures every
// operation can meet below its handler (added to each operation by status), the payment refusals
// that leave as problem details, and each error component rewritten as the body the wire carries.
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import {
  Conflict,
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  LengthRequired,
  PayloadTooLarge,
  StorageUnavailable,
  UnsupportedMediaType
} from "../../schema/platform/errors.js"
import { PaymentProblem, WalletProblem } from "../../schema/mpp/problems.js"
import { type Json, METHODS, MUTATING, ref } from "./json.js"

/** The one error body (docs/errors.md): every error response is this plus the error's own fields. */
export const ERROR_ENVELOPE = "Error"
const envelope: Json = {
  type: "object",
  description:
    "The one error body of every REST error (docs/errors.md). `_tag` and `type` both name the error; each error " +
    "adds its own fields (`permission`, `policy`, `retryAfterSeconds`, …).",
  properties: {
    _tag: { type: "string", description: "The error's name." },
    type: { type: "string", description: "The error's name (the same as `_tag`); branch on this." },
    message: { type: "string", description: "What went wrong, for people." },
    field: {
      type: "string",
      description:
        "The input at fault, where one is: a body field path, a query or path parameter, or a header such as " +
        "Content-Type or Idempotency-Key."
    },
    requestId: {
      type: "string",
      description: "The request's id, also in the X-Request-Id header; quote it when reporting a problem."
    }
  },
  required: ["_tag", "type", "message", "requestId"]
}

/**
 * The errors the global middleware (src/http/middleware/) and the router answer before or around
 * any handler. Their component schemas come from this small API, so they are encoded exactly as
 * the HttpApi encodes its own.
 */
export const standardErrors = OpenApi.fromApi(
  HttpApi.make("standard-errors").add(
    HttpApiGroup.make("standard").add(
      HttpApiEndpoint.get("standard", "/", {
        error: [
          InvalidInput,
          Forbidden,
          Conflict,
          LengthRequired,
          PayloadTooLarge,
          UnsupportedMediaType,
          IdempotencyKeyReused,
          StorageUnavailable
        ]
      })
    )
  )
).components.schemas as Json

/** The payment problem bodies (application/problem+json) and what they are made of. */
export const problemSchemas = OpenApi.fromApi(
  HttpApi.make("payment-problems").add(
    HttpApiGroup.make("problems").add(
      HttpApiEndpoint.get("problems", "/", { success: Schema.Union([PaymentProblem, WalletProblem]) })
    )
  )
).components.schemas as Json

/**
 * A PaymentRequired or InsufficientCredits failure leaves as RFC 9457 problem details
 * (src/http/paymentProblem.ts), never as the JSON error body its schema would describe: where an
 * operation declares one, its response says `application/problem+json` with the wire's schema.
 */
const PROBLEM_SOURCES: Record<string, string> = {
  PaymentRequiredEncoded: "PaymentProblem",
  PaymentRequired: "PaymentProblem",
  InsufficientCreditsEncoded: "WalletProblem",
  InsufficientCredits: "WalletProblem"
}

/** Moves the payment failures of a response from its JSON content to `application/problem+json`. */
export const declareProblems = (response: Json) => {
  const media = response?.content?.["application/json"]
  if (!media?.schema) return
  const refName = (s: Json): string | undefined => (typeof s?.$ref === "string" ? s.$ref.split("/").pop() : undefined)
  const members: Array<Json> = Array.isArray(media.schema.anyOf) ? media.schema.anyOf : [media.schema]
  const problems = members.map(refName).filter((n): n is string => n !== undefined && n in PROBLEM_SOURCES)
  if (problems.length === 0) return
  const rest = members.filter((m) => !(refName(m) !== undefined && refName(m)! in PROBLEM_SOURCES))
  if (rest.length === 0) delete response.content["application/json"]
  else media.schema = rest.length === 1 ? rest[0] : { anyOf: rest }
  const wire = [...new Set(problems.map((p) => PROBLEM_SOURCES[p]))].map((name) => ref("schemas", name))
  response.content["application/problem+json"] = { schema: wire.length === 1 ? wire[0] : { anyOf: wire } }
}

/**
 * What an operation can fail with below its handler, by status: derived from its method and path,
 * the way the global middleware decides. Auth (401/403/429), payment (402) and domain errors come
 * from the HttpApi's own declarations (the groups' middleware and endpoints).
 */
export const failuresOf = (method: string, path: string): ReadonlyArray<readonly [status: number, schema: string]> => {
  const out: Array<readonly [number, string]> = [
    // A NUL in the URL, a parameter or body that does not decode, a malformed Idempotency-Key.
    [400, "InvalidInputEncoded"],
    // Content-Length over MAX_BODY_BYTES, on any request.
    [413, "PayloadTooLargeEncoded"],
    [503, "StorageUnavailableEncoded"]
  ]
  if (MUTATING.has(method)) {
    out.push([411, "LengthRequiredEncoded"], [409, "ConflictEncoded"], [422, "IdempotencyKeyReusedEncoded"])
    if (path.startsWith("/api/")) out.push([415, "UnsupportedMediaTypeEncoded"], [403, "ForbiddenEncoded"])
  }
  return out
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Invalid input: `field` names the offending input.",
  401: "No credentials, or unknown, revoked or expired ones.",
  402: "Payment required.",
  403:
    "Forbidden: a missing permission, a policy, or a cookie-authenticated write that is not the dashboard's own " +
    "JSON call.",
  404: "Not found (or another caller's).",
  405: "Method not allowed.",
  409: "Conflict with the current state, or a request with this Idempotency-Key still in progress.",
  410: "Gone.",
  411: "Length required: send the body with Content-Length.",
  413: "Request body over the configured limit.",
  415: "Request bodies are JSON (application/json).",
  422: "Unprocessable: e.g. an Idempotency-Key reused with a different request.",
  429: "Rate limited: retry after Retry-After seconds.",
  502: "An upstream (payment processor, seller) failed.",
  503:
    "Storage unavailable: a retry can succeed; retry after Retry-After seconds (with the same Idempotency-Key " +
    "for a write)."
}

/** Adds `schema` to the JSON content of the operation's response for `status` (creating it). */
export const addError = (op: Json, status: number, schema: string) => {
  const responses = (op.responses ??= {})
  const response = (responses[String(status)] ??= { description: STATUS_TEXT[status] ?? `HTTP ${status}` })
  const content = (response.content ??= {})
  const media = content["application/json"]
  const wanted = ref("schemas", schema)
  if (media === undefined) {
    content["application/json"] = { schema: wanted }
    return
  }
  const current: Json = media.schema ?? {}
  const options: Array<Json> = Array.isArray(current.anyOf) ? current.anyOf : [current]
  if (options.some((o) => o.$ref === wanted.$ref)) return
  media.schema = { anyOf: [...options, wanted] }
}

/** The tag of an error component (its `_tag` literal), or undefined for a schema that is no error. */
const tagOf = (schema: Json | undefined): string | undefined => {
  const tag = schema?.properties?._tag
  const values = tag?.enum ?? (tag?.const !== undefined ? [tag.const] : undefined)
  return Array.isArray(values) && values.length === 1 && typeof values[0] === "string" ? values[0] : undefined
}

/** The error as sent: the envelope, its own fields, `type` equal to its tag; nothing else. */
const asErrorBody = (schema: Json, tag: string): Json => {
  const { additionalProperties: _closed, properties, required, type: _type, ...rest } = schema
  return {
    ...rest,
    allOf: [ref("schemas", ERROR_ENVELOPE)],
    type: "object",
    properties: { ...properties, type: { type: "string", enum: [tag] } },
    required: Array.from(new Set([...(required ?? []), "type", "requestId"])),
    unevaluatedProperties: false
  }
}

/** `$ref` names reachable from JSON error responses (status ≥ 400). */
const errorSchemaNames = (doc: Json): Set<string> => {
  const names = new Set<string>()
  const visit = (s: Json | undefined) => {
    if (!s) return
    if (typeof s.$ref === "string" && s.$ref.startsWith("#/components/schemas/")) {
      names.add(s.$ref.slice("#/components/schemas/".length))
    }
    for (const o of s.anyOf ?? []) visit(o)
    for (const o of s.oneOf ?? []) visit(o)
  }
  for (const item of Object.values(doc.paths ?? {}) as Array<Json>) {
    for (const method of METHODS) {
      for (const [status, response] of Object.entries((item[method]?.responses ?? {}) as Json)) {
        if (Number(status) >= 400) visit(response?.content?.["application/json"]?.schema)
      }
    }
  }
  return names
}

/**
 * The error components as the wire sends them: the envelope, every error a JSON error response
 * names rewritten as envelope plus its own fields, and the JSON forms of the payment failures
 * dropped where their problem form is all that is sent.
 */
export const completeErrorSchemas = (doc: Json, schemas: Json) => {
  schemas[ERROR_ENVELOPE] = envelope
  for (const name of errorSchemaNames(doc)) {
    const tag = tagOf(schemas[name])
    if (tag) schemas[name] = asErrorBody(schemas[name], tag)
  }
  const text = JSON.stringify(doc)
  for (const name of Object.keys(PROBLEM_SOURCES)) {
    if (!text.includes(`"#/components/schemas/${name}"`)) delete schemas[name]
  }
}
