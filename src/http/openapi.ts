// The served OpenAPI document: the HttpApi's own, completed with what the server really sends —
// the one error shape, the failures every operation can meet below its handler, headers, servers.
// The parts live in src/http/openapi/: errors, headers, request rules, the procedure table.
import { OpenApi } from "effect/http-api"
import { AGENT_API_PREFIX } from "../schema/platform/routes.js"
import { liftQueryNumbers } from "../schema/platform/common.js"
import { Api } from "./api.js"
import {
  addError,
  completeErrorSchemas,
  declareProblems,
  failuresOf,
  problemSchemas,
  standardErrors
} from "./openapi/errors.js"
import { headerComponents, idempotencyKeyParameter, responseHeaders } from "./openapi/headers.js"
import { type Json, METHODS, MUTATING, ref, tidyUnions } from "./openapi/json.js"
import { proceduresMarkdown } from "./openapi/proceduresTable.js"
import { cookieWriteBody, describeRules } from "./openapi/requestRules.js"
import { type RouteInfo, routeTable } from "./routeTable.js"
import { discoveryCatalog } from "./site/agentFiles/catalog.js"

export const OPENAPI_PATH = `${AGENT_API_PREFIX}/openapi.json` as const

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
  commerce:
    "AI2AIC commerce: services, wallet and policy, purchases, approvals, transactions, reviews, disputes, " +
    "reputation, usage.",
  commerceDashboard:
    "The account owner's view of commerce (session cookie): approvals and wallet policies of their agents."
}

const describeAuth = (auth: "public" | "key" | "session", permission: string | null) =>
  auth === "key"
    ? `Needs an agent API key (Authorization: Bearer)${permission ? ` with the \`${permission}\` permission` : ""}.`
    : auth === "session"
      ? "Needs the dashboard session cookie (sign in first)."
      : "Public: no credentials."

/** The document's description: what the REST document does not cover, and where that is described. */
const documentDescription = (baseUrl: string) => {
  const count = (p: (path: string) => boolean) => discoveryCatalog.filter((r) => p(r.path)).length
  const rest = routeTable(Api).length
  const trpc = count((path) => path.startsWith("/api/trpc/"))
  const mcp = count((path) => path === "/mcp" || path.startsWith("/mcp/"))
  const others = discoveryCatalog.length - rest - trpc - mcp
  const link = (path: string) => `[${path}](${baseUrl}${path})`
  return [
    "Agent API v1, the AI2AIC commerce protocol 1.0.0, and the platform's public surface.",
    "",
    "Every error answers one JSON body (`Error`: `_tag`, `type`, `message`, `field`, `requestId`, plus the error's " +
      "own fields; docs/errors.md). Every POST, PUT, PATCH and DELETE honours `Idempotency-Key`. Request bodies " +
      "must not carry unknown fields. String lengths count Unicode code points, as JSON Schema does; no input may " +
      "hold a NUL (U+0000) or an unpaired surrogate (400).",
    "",
    `The service answers ${discoveryCatalog.length} routes, every one listed by ${link("/api/discover")}: ` +
      `${rest} REST operations described here, ${trpc} procedures, ${mcp} MCP routes, and ${others} agent files ` +
      "and pages. Beside this REST API:",
    `- the MCP server (streamable HTTP) at [${baseUrl}/mcp](${baseUrl}/mcp), its manifest at ` +
      `${link("/.well-known/mcp.json")} and tool list at ${link(`${AGENT_API_PREFIX}/mcp-tools.json`)};`,
    `- agent files: ${link("/api/discover")}, ${link("/llms.txt")}, ${link("/.well-known/ai-plugin.json")}, ` +
      `${link("/.well-known/agent-card.json")}, and the API reference for people at ${link("/docs")};`,
    "- with PAYMENTS=fake, the fake payment processor's checkout pages under `/checkout/fake/` (a caller gets " +
      "their address as `checkoutUrl`; not listed by /api/discover);",
    "- the procedures at `/api/trpc/<name>` (tRPC wire format: a query's input as `?input=<JSON>`, a mutation's as " +
      'the JSON body; results as `{"result":{"data":…}}`, errors as the one error body inside a tRPC error):',
    "",
    proceduresMarkdown()
  ].join("\n")
}

/** The operation at `method` `path`, completed: description, security, failures, parameters, body, headers. */
const completeOperation = (op: Json, method: string, path: string, route: RouteInfo | undefined) => {
  const auth = route?.auth ?? "public"
  if (Array.isArray(op.security) && op.security.some((alternative: Json) => "bearer" in alternative)) {
    op.security = [...op.security, { apiKey: [] }]
  }
  if (!op.description) {
    op.description = `${op.summary ?? op.operationId}. ${describeAuth(auth, route?.permission ?? null)}`
  }
  const rules = describeRules(op.operationId)
  if (rules) op.description += rules
  for (const [status, schema] of failuresOf(method, path)) addError(op, status, schema)
  const parameters: Array<Json> = op.parameters ?? []
  // Numeric query parameters (QueryNumber) are typed as the numbers they are.
  liftQueryNumbers(parameters)
  if (MUTATING.has(method)) parameters.push(ref("parameters", "IdempotencyKey"))
  op.parameters = parameters
  if (MUTATING.has(method) && op.requestBody === undefined && path.startsWith("/api/dashboard/")) {
    op.requestBody = cookieWriteBody
  }
  for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
    const code = Number(status)
    const h = responseHeaders(op.operationId, method, auth, code)
    declareProblems(response)
    // A credential of a method the server does not offer: 400 method-unsupported, as problem details.
    if (code === 400 && op.operationId === "mpp.invoke") {
      const problem = { schema: ref("schemas", "PaymentProblem") }
      response.content = { ...response.content, "application/problem+json": problem }
    }
    response.headers = { ...response.headers, ...h }
  }
}

/** What names the server in the document: its description's links, contact, licence and `servers`. */
const forServer = (doc: Json, baseUrl: string): Json => ({
  ...doc,
  info: {
    ...doc.info,
    description: documentDescription(baseUrl),
    contact: { name: "Agent Commerce", url: `${baseUrl}/docs` },
    license: { name: "Proprietary: see the terms of use", url: `${baseUrl}/terms` }
  },
  servers: [{ url: baseUrl, description: "This server (BASE_URL)" }]
})

/**
 * Completes the HttpApi's document (mutating it): the error envelope, each operation's failures
 * below its handler, Idempotency-Key, response headers, numeric parameters, descriptions.
 */
const completeDocument = (doc: Json): Json => {
  // `info` and `servers` in their places, filled in per server by forServer.
  doc.info = { ...doc.info }
  doc.servers = []
  doc.tags = (doc.tags ?? []).map((t: Json) => ({ ...t, description: t.description ?? TAGS[t.name] }))
  const components = (doc.components ??= {})
  const schemas = (components.schemas ??= {})
  for (const [name, schema] of Object.entries(standardErrors)) schemas[name] ??= schema
  for (const [name, schema] of Object.entries(problemSchemas)) schemas[name] ??= schema
  components.headers = { ...components.headers, ...headerComponents }
  components.parameters = { ...components.parameters, IdempotencyKey: idempotencyKeyParameter }
  // Every route behind the agent key also takes it in X-API-Key (src/http/middleware/authLive.ts):
  // the place for it when Authorization carries a Payment credential (docs/mpp.md).
  components.securitySchemes = {
    ...components.securitySchemes,
    apiKey: {
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
      description: "The agent API key, when Authorization carries a Payment credential instead of the Bearer key."
    }
  }

  const routes = new Map(routeTable(Api).map((r) => [`${r.group}.${r.name}`, r]))
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    for (const method of METHODS) {
      const op: Json | undefined = item[method]
      if (op) completeOperation(op, method, path, routes.get(op.operationId))
    }
  }

  tidyUnions(doc.paths)
  tidyUnions(schemas)
  completeErrorSchemas(doc, schemas)
  return doc
}

/** Everything of the document but what names the server: made once per process (~45 ms), not per server. */
let serverless: Json | undefined

/** The document served at OPENAPI_PATH for a server at `baseUrl` (its parts shared between servers: read, never change). */
export const apiDocument = (baseUrl: string): Json =>
  forServer((serverless ??= completeDocument(structuredClone(OpenApi.fromApi(Api)) as Json)), baseUrl)
