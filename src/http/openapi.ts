// The served OpenAPI document: the HttpApi's own, completed with what the server really sends —
// the one error shape, the failures every operation can meet below its handler, headers, servers.
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Api } from "./api.js"
import { routeTable } from "./routeTable.js"
import { procedures } from "./trpc/index.js"
import type { Procedure } from "./trpc/procedure.js"
import { discoveryCatalog } from "./site/agentFiles.js"
import {
  Conflict,
  Forbidden,
  IdempotencyKeyReused,
  InvalidInput,
  LengthRequired,
  PayloadTooLarge,
  StorageUnavailable,
  UnsupportedMediaType
} from "../schema/platform/errors.js"
import { AGENT_API_PREFIX } from "../schema/platform/routes.js"
import { liftQueryNumbers } from "../schema/platform/common.js"
import { PaymentProblem, WalletProblem } from "../schema/mpp/problems.js"

// Plain JSON throughout: the document is data, built once per server.
type Json = Record<string, any>

export const OPENAPI_PATH = `${AGENT_API_PREFIX}/openapi.json` as const

const MUTATING = new Set(["post", "put", "patch", "delete"])
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const
const ref = (kind: "schemas" | "parameters" | "headers", name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** The one error body (docs/errors.md): every error response is this plus the error's own fields. */
export const ERROR_ENVELOPE = "Error"
const envelope: Json = {
  type: "object",
  description:
    "The one error body of every REST error (docs/errors.md). `_tag` and `type` both name the error; each error adds its own fields (`permission`, `policy`, `retryAfterSeconds`, …).",
  properties: {
    _tag: { type: "string", description: "The error's name." },
    type: { type: "string", description: "The error's name (the same as `_tag`); branch on this." },
    message: { type: "string", description: "What went wrong, for people." },
    field: { type: "string", description: "The input at fault, where one is: a body field path, a query or path parameter, or a header such as Content-Type or Idempotency-Key." },
    requestId: { type: "string", description: "The request's id, also in the X-Request-Id header; quote it when reporting a problem." }
  },
  required: ["_tag", "type", "message", "requestId"]
}

/**
 * The errors the global middleware (src/http/middleware/global.ts) and the router answer before or
 * around any handler. Their component schemas come from this small API, so they are encoded exactly
 * as the HttpApi encodes its own.
 */
const standardErrors = OpenApi.fromApi(
  HttpApi.make("standard-errors").add(
    HttpApiGroup.make("standard").add(
      HttpApiEndpoint.get("standard", "/", {
        error: [InvalidInput, Forbidden, Conflict, LengthRequired, PayloadTooLarge, UnsupportedMediaType, IdempotencyKeyReused, StorageUnavailable]
      })
    )
  )
).components.schemas as Json

/** The payment problem bodies (application/problem+json) and what they are made of. */
const problemSchemas = OpenApi.fromApi(
  HttpApi.make("payment-problems").add(
    HttpApiGroup.make("problems").add(HttpApiEndpoint.get("problems", "/", { success: Schema.Union([PaymentProblem, WalletProblem]) }))
  )
).components.schemas as Json

/**
 * A PaymentRequired or InsufficientCredits failure leaves as RFC 9457 problem details
 * (src/http/paymentProblem.ts), never as the JSON error body its schema would describe: where an
 * operation declares one, its response says `application/problem+json` with the wire's schema.
 */
const PROBLEM_SOURCES: Record<string, string> = { PaymentRequiredEncoded: "PaymentProblem", PaymentRequired: "PaymentProblem", InsufficientCreditsEncoded: "WalletProblem", InsufficientCredits: "WalletProblem" }

const declareProblems = (response: Json) => {
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
  403: "Forbidden: a missing permission, a policy, or a cookie-authenticated write that is not the dashboard's own JSON call.",
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
  503: "Storage unavailable: a retry can succeed; retry after Retry-After seconds (with the same Idempotency-Key for a write)."
}

/** Adds `schema` to the JSON content of the operation's response for `status` (creating it). */
const addError = (op: Json, status: number, schema: string) => {
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
    if (typeof s.$ref === "string" && s.$ref.startsWith("#/components/schemas/")) names.add(s.$ref.slice("#/components/schemas/".length))
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
 * The generator's unions, simplified without changing what they accept: `optional(NullOr(x))`
 * repeats `{ type: "null" }`, and a union holding `{}` (unknown) accepts anything anyway.
 */
const tidyUnions = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(tidyUnions)
  if (typeof node !== "object" || node === null) return
  const record = node as Json
  for (const value of Object.values(record)) tidyUnions(value)
  if (!Array.isArray(record.anyOf)) return
  const seen = new Set<string>()
  const members = record.anyOf.filter((m: unknown) => {
    const key = JSON.stringify(m)
    return seen.has(key) ? false : (seen.add(key), true)
  })
  if (members.some((m: Json) => typeof m === "object" && m !== null && Object.keys(m).length === 0)) delete record.anyOf
  else if (members.length === 1 && Object.keys(record).length === 1) {
    delete record.anyOf
    Object.assign(record, members[0])
  } else record.anyOf = members
}

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema })
const headers: Json = {
  XRequestId: { ...header("The request's id (echoes a valid incoming X-Request-Id); error bodies carry it as `requestId`."), required: true },
  RateLimit: { ...header("IETF RateLimit fields: remaining requests and seconds to reset, per window of the key's limit."), required: true },
  RateLimitPolicy: { ...header("IETF RateLimit-Policy fields: each window's quota and length in seconds."), required: true },
  RateLimitUnlessReplayed: header("IETF RateLimit fields (as on every keyed response); absent when an idempotent retry replays a stored response."),
  RateLimitPolicyUnlessReplayed: header("IETF RateLimit-Policy fields (as on every keyed response); absent when an idempotent retry replays a stored response."),
  RetryAfter: { ...header("Seconds to wait before retrying.", { type: "integer", minimum: 0 }), required: true },
  WwwAuthenticateBearer: { ...header("The Bearer challenge (RFC 6750): why the credentials were refused."), required: true },
  WwwAuthenticatePayment: { ...header("The Payment challenge (the same challenge as the body carries)."), required: true },
  PaymentReceipt: header("The receipt of the paid call; absent when an idempotent retry replays the stored answer (the receipt went with the first answer)."),
  SetCookie: header("The session cookie (HttpOnly, SameSite=Strict). Not repeated when an idempotent retry replays the response."),
  IdempotentReplayed: header("`true` when this is the stored response of an earlier request with the same Idempotency-Key.", { type: "string", enum: ["true"] })
}

const idempotencyKey: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes the request safe to retry (docs/idempotency.md): the first response is stored and replayed to every retry with the same key and request; the same key with a different request is 422; a retry while the first runs waits, then 409.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" }
}

/**
 * The body of a dashboard write that takes no input (sign-out, revoke, approve, decline): none is
 * read, but a write authenticated by the session cookie alone must be a JSON request, so the media
 * type is part of the request (global.ts, crossSiteCookieWrite).
 */
const cookieWriteBody: Json = {
  required: true,
  description:
    "No input: the body is ignored. Send `Content-Type: application/json` (with `{}` or no body at all): a write authenticated by the session cookie that is not a JSON request is refused 403 as a possible cross-site form.",
  content: { "application/json": { schema: {} } }
}

/**
 * The rules on a request that no schema can state, because they read the server's state or the
 * meaning of a value. Each refusal is 400 naming the field; the document says so in the
 * operation's description (test/http/contract-requests.test.ts holds a valid request to nothing else).
 */
export const REQUEST_RULES: Readonly<Record<string, ReadonlyArray<readonly [field: string, rule: string]>>> = {
  "payments.webhook": [["Stripe-Signature", "the processor's signature over the exact body, made with this server's webhook secret, at most 300 s old"]],
  "mpp.invoke": [["Payment-Authorization", "a Payment credential answering this server's challenge (a malformed or unsupported one is 400 problem details)"]],
  "projects.create": [
    ["templateId", "a template of the catalogue"],
    ["inputs", "each input's content decodes as its encoding and is of its kind (a PDF, an image, a CSV with a header and a row, …), all of them together within the size limit"]
  ],
  "dashboard.createKey": [["expiresAt", "a time in the future"]],
  "webhooks.put": [["url", "an http(s) address the server may deliver to: a public host (private, loopback, link-local and unresolvable ones are refused alike)"]],
  "commerce.publishService": [["tiers", "tier ids unique within the service"]],
  "commerce.updateService": [["tiers", "tier ids unique within the service"]],
  "commerce.updateWallet": [["dailyLimitCents", "not above monthlyLimitCents, as the wallet will be after the change"]],
  "commerceDashboard.updateWallet": [["dailyLimitCents", "not above monthlyLimitCents, as the wallet will be after the change"]],
  "projects.catalog": [["minPriceCents", "not above maxPriceCents"]],
  "projects.session": [["sessionId", "a session of this agent, in a state that allows the step"]],
  "invest.invest": [["amountCents", "enough for at least one whole token at the offering's price"]]
}

/** A short description of each group, shown as the tag's description. */
const TAGS: Readonly<Record<string, string>> = {
  system: "Liveness and readiness.",
  agent: "Agent API v1: the calling key, its permissions and rate-limit standing.",
  dashboardAuth: "Account sign-up, sign-in and sign-out for the dashboard (session cookie).",
  dashboard: "The account owner's dashboard API (session cookie): agents, API keys, webhooks.",
  projects: "Agent API v1: the template catalogue, evaluation, acquisition, AI-built projects and guided sessions.",
  webhooks: "Agent API v1: the agent's webhook endpoint, its secret, test events and delivery log.",
  invest: "Agent API v1: the platform token — investing, portfolio, governance proposals.",
  investInfo: "Public information on the token offering.",
  governance: "The account owner's veto over governance proposals (session cookie).",
  payments: "Payment processor webhook and the public status and content of knowledge purchases.",
  negotiation: "AI2AIC commerce: price negotiation between buyer and seller agents.",
  saga: "AI2AIC commerce: purchase sagas (reserve, deliver, settle or compensate).",
  mpp: "AI2AIC commerce: pay-per-call services over the Machine Payments Protocol (402 challenge, credential, receipt).",
  commerce: "AI2AIC commerce: services, wallet and policy, purchases, approvals, transactions, reviews, disputes, reputation, usage.",
  commerceDashboard: "The account owner's view of commerce (session cookie): approvals and wallet policies of their agents."
}

/** Headers an operation sends on success, beyond those every operation of its kind sends. */
const SUCCESS_HEADERS: Readonly<Record<string, Json>> = {
  "dashboardAuth.signUp": { "Set-Cookie": ref("headers", "SetCookie") },
  "dashboardAuth.signIn": { "Set-Cookie": ref("headers", "SetCookie") },
  "dashboardAuth.signOut": { "Set-Cookie": ref("headers", "SetCookie") },
  "mpp.invoke": { "Payment-Receipt": ref("headers", "PaymentReceipt") }
}

const describeAuth = (auth: "public" | "key" | "session", permission: string | null) =>
  auth === "key"
    ? `Needs an agent API key (Authorization: Bearer)${permission ? ` with the \`${permission}\` permission` : ""}.`
    : auth === "session"
      ? "Needs the dashboard session cookie (sign in first)."
      : "Public: no credentials."

/** A JSON Schema as a short TypeScript-like type, for people: `{ planId: "starter" | "pro", agentId?: string }`. */
export const shortType = (schema: Json | undefined, defs: Json = {}, depth = 0): string => {
  if (!schema || Object.keys(schema).length === 0) return "any"
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop()!
    return depth >= 2 || !defs[name] ? name : shortType(defs[name], defs, depth)
  }
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) return union.map((s: Json) => shortType(s, defs, depth)).join(" | ")
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ")
  if (schema.type === "array") return `Array<${shortType(schema.items, defs, depth + 1)}>`
  if (schema.type === "object" && schema.properties) {
    if (depth >= 2) return "object"
    const required = new Set<string>(schema.required ?? [])
    const fields = Object.entries(schema.properties as Json).map(([k, v]) => `${k}${required.has(k) ? "" : "?"}: ${shortType(v as Json, defs, depth + 1)}`)
    return `{ ${fields.join(", ")} }`
  }
  return typeof schema.type === "string" ? schema.type : "any"
}

const typeOf = (schema: Schema.Top | undefined): string => {
  if (schema === undefined) return "none"
  const doc = Schema.toJsonSchemaDocument(schema as Schema.Constraint) as unknown as { schema: Json; definitions?: Json }
  return shortType(doc.schema, doc.definitions ?? {})
}

/** The procedure table (`/api/trpc/<name>`) as a markdown table: name, call, permission, input, output. */
export const proceduresMarkdown = (): string => {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ")
  const rows = Object.entries(procedures as Record<string, Procedure<unknown>>).map(([name, p]) => {
    const call = p.type === "mutation" ? `POST /api/trpc/${name}` : `GET /api/trpc/${name}${p.input ? "?input=<JSON>" : ""}`
    const who =
      p.access._tag === "public" ? "public" : `API key${p.access.permission ? ` with \`${p.access.permission}\`` : ""} or dashboard session`
    return `| \`${name}\` | ${cell(p.description)} | \`${call}\` | ${who} | \`${cell(typeOf(p.input))}\` | \`${cell(typeOf(p.output))}\` |`
  })
  return ["| Procedure | What | Call | Who may call | Input | Output |", "|---|---|---|---|---|---|", ...rows].join("\n")
}

/** The document's description: what the REST document does not cover, and where that is described. */
const documentDescription = (baseUrl: string) => {
  const count = (p: (path: string) => boolean) => discoveryCatalog.filter((r) => p(r.path)).length
  const rest = routeTable(Api).length
  const trpc = count((path) => path.startsWith("/api/trpc/"))
  const mcp = count((path) => path === "/mcp" || path.startsWith("/mcp/"))
  return [
    "Agent API v1, the AI2AIC commerce protocol 1.0.0, and the platform's public surface.",
    "",
    "Every error answers one JSON body (`Error`: `_tag`, `type`, `message`, `field`, `requestId`, plus the error's own fields; docs/errors.md). Every POST, PUT, PATCH and DELETE honours `Idempotency-Key`. Request bodies must not carry unknown fields. String lengths count Unicode code points, as JSON Schema does; no input may hold a NUL (U+0000) or an unpaired surrogate (400).",
    "",
    `The service answers ${discoveryCatalog.length} routes, every one listed by [/api/discover](${baseUrl}/api/discover): ${rest} REST operations described here, ${trpc} procedures, ${mcp} MCP routes, and ${discoveryCatalog.length - rest - trpc - mcp} agent files and pages. Beside this REST API:`,
    `- the MCP server (streamable HTTP) at [${baseUrl}/mcp](${baseUrl}/mcp), its manifest at [/.well-known/mcp.json](${baseUrl}/.well-known/mcp.json) and tool list at [${AGENT_API_PREFIX}/mcp-tools.json](${baseUrl}${AGENT_API_PREFIX}/mcp-tools.json);`,
    `- agent files: [/api/discover](${baseUrl}/api/discover), [/llms.txt](${baseUrl}/llms.txt), [/.well-known/ai-plugin.json](${baseUrl}/.well-known/ai-plugin.json), [/.well-known/agent-card.json](${baseUrl}/.well-known/agent-card.json), and the API reference for people at [/docs](${baseUrl}/docs);`,
    "- with PAYMENTS=fake, the fake payment processor's checkout pages under `/checkout/fake/` (a caller gets their address as `checkoutUrl`; not listed by /api/discover);",
    "- the procedures at `/api/trpc/<name>` (tRPC wire format: a query's input as `?input=<JSON>`, a mutation's as the JSON body; results as `{\"result\":{\"data\":…}}`, errors as the one error body inside a tRPC error):",
    "",
    proceduresMarkdown()
  ].join("\n")
}

/**
 * Completes the HttpApi's document (mutating it): the error envelope, each operation's failures
 * below its handler, Idempotency-Key, response headers, numeric parameters, servers, descriptions.
 */
export const completeDocument = (doc: Json, baseUrl: string): Json => {
  doc.info = {
    ...doc.info,
    description: documentDescription(baseUrl),
    contact: { name: "Agent Commerce", url: `${baseUrl}/docs` },
    license: { name: "Proprietary: see the terms of use", url: `${baseUrl}/terms` }
  }
  doc.servers = [{ url: baseUrl, description: "This server (BASE_URL)" }]
  doc.tags = (doc.tags ?? []).map((t: Json) => ({ ...t, description: t.description ?? TAGS[t.name] }))
  const components = (doc.components ??= {})
  const schemas = (components.schemas ??= {})
  for (const [name, schema] of Object.entries(standardErrors)) schemas[name] ??= schema
  for (const [name, schema] of Object.entries(problemSchemas)) schemas[name] ??= schema
  components.headers = { ...components.headers, ...headers }
  components.parameters = { ...components.parameters, IdempotencyKey: idempotencyKey }
  // Every route behind the agent key also takes it in X-API-Key (src/http/middleware/authLive.ts):
  // the place for it when Authorization carries a Payment credential (docs/mpp.md).
  components.securitySchemes = {
    ...components.securitySchemes,
    apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "The agent API key, when Authorization carries a Payment credential instead of the Bearer key." }
  }

  const routes = new Map(routeTable(Api).map((r) => [`${r.group}.${r.name}`, r]))
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    for (const method of METHODS) {
      const op: Json | undefined = item[method]
      if (!op) continue
      const route = routes.get(op.operationId)
      const auth = route?.auth ?? "public"
      if (Array.isArray(op.security) && op.security.some((alternative: Json) => "bearer" in alternative)) op.security = [...op.security, { apiKey: [] }]
      if (!op.description) op.description = `${op.summary ?? op.operationId}. ${describeAuth(auth, route?.permission ?? null)}`
      const rules = REQUEST_RULES[op.operationId]
      if (rules) op.description += `\n\nBeyond the schemas, 400 naming the field unless: ${rules.map(([field, rule]) => `\`${field}\` is ${rule}`).join("; ")}.`
      for (const [status, schema] of failuresOf(method, path)) addError(op, status, schema)
      const parameters: Array<Json> = op.parameters ?? []
      // Numeric query parameters (QueryNumber) are typed as the numbers they are.
      liftQueryNumbers(parameters)
      if (MUTATING.has(method)) parameters.push(ref("parameters", "IdempotencyKey"))
      op.parameters = parameters
      if (MUTATING.has(method) && op.requestBody === undefined && path.startsWith("/api/dashboard/")) op.requestBody = cookieWriteBody
      for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
        const code = Number(status)
        const h: Json = { "X-Request-Id": ref("headers", "XRequestId") }
        if (MUTATING.has(method)) h["Idempotent-Replayed"] = ref("headers", "IdempotentReplayed")
        if (code < 300) {
          // A replay (Idempotency-Key) is answered before the key is authenticated: no RateLimit then.
          if (auth === "key" && MUTATING.has(method)) Object.assign(h, { RateLimit: ref("headers", "RateLimitUnlessReplayed"), "RateLimit-Policy": ref("headers", "RateLimitPolicyUnlessReplayed") })
          else if (auth === "key") Object.assign(h, { RateLimit: ref("headers", "RateLimit"), "RateLimit-Policy": ref("headers", "RateLimitPolicy") })
          Object.assign(h, SUCCESS_HEADERS[op.operationId] ?? {})
        }
        if (code === 401 && auth === "key") h["WWW-Authenticate"] = ref("headers", "WwwAuthenticateBearer")
        if (code === 402 && op.operationId === "mpp.invoke") h["WWW-Authenticate"] = ref("headers", "WwwAuthenticatePayment")
        declareProblems(response)
        // A credential of a method the server does not offer: 400 method-unsupported, as problem details.
        if (code === 400 && op.operationId === "mpp.invoke") {
          response.content = { ...response.content, "application/problem+json": { schema: ref("schemas", "PaymentProblem") } }
        }
        if (code === 429 || code === 503) h["Retry-After"] = ref("headers", "RetryAfter")
        response.headers = { ...response.headers, ...h }
      }
    }
  }

  tidyUnions(doc.paths)
  tidyUnions(schemas)
  schemas[ERROR_ENVELOPE] = envelope
  for (const name of errorSchemaNames(doc)) {
    const tag = tagOf(schemas[name])
    if (tag) schemas[name] = asErrorBody(schemas[name], tag)
  }
  // The JSON forms of the payment failures are not sent anywhere once their problem form is declared.
  const text = JSON.stringify(doc)
  for (const name of Object.keys(PROBLEM_SOURCES)) if (!text.includes(`"#/components/schemas/${name}"`)) delete schemas[name]
  return doc
}

/** The document served at OPENAPI_PATH for a server at `baseUrl`. */
export const apiDocument = (baseUrl: string): Json => completeDocument(structuredClone(OpenApi.fromApi(Api)) as Json, baseUrl)
