// Turns an MCP tool call into the HTTP request of the tool's REST route, and that route's HTTP
// response back into an MCP tool result (errors as `isError: true` with the typed error's message).
import type { ApiTool } from "./tools.js"

type Args = Readonly<Record<string, unknown>>

/** The REST request a tool call stands for (path with its query string, method, JSON body). */
export interface RouteRequest {
  readonly method: string
  readonly path: string
  readonly body: string | undefined
}

/** A call that cannot be turned into a request: answered as an InvalidInput tool error. */
export interface ArgumentProblem {
  readonly message: string
  readonly field: string
}

const isScalar = (v: unknown): v is string | number | boolean =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean"

/**
 * Builds the route request from the tool's routing details: `pathParams` fill `:name` segments,
 * `queryParams` become the query string, and the body is the remaining arguments ("fields") or
 * the `body` argument ("body"). Arguments a bodiless route has no place for are refused rather
 * than silently dropped.
 */
export const toRouteRequest = (tool: ApiTool, args: Args): RouteRequest | ArgumentProblem => {
  const method = tool._meta.method
  let path = tool._meta.path
  for (const name of tool.pathParams) {
    const value = args[name]
    if (!isScalar(value) || String(value) === "") return { message: `${name}: is required (a string)`, field: name }
    path = path.replace(`:${name}`, encodeURIComponent(String(value)))
  }
  const query = new URLSearchParams()
  for (const name of tool.queryParams) {
    const value = args[name]
    if (value === undefined || value === null) continue
    if (isScalar(value)) query.append(name, String(value))
    else if (Array.isArray(value) && value.every(isScalar)) for (const v of value) query.append(name, String(v))
    else return { message: `${name}: must be a string, a number, a boolean or a list of them`, field: name }
  }
  const routed = new Set([...tool.pathParams, ...tool.queryParams])
  const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !routed.has(k)))
  let body: string | undefined
  if (tool.body === "fields") body = JSON.stringify(rest)
  else if (tool.body === "body") {
    const { body: value, ...extra } = rest
    const unknown = Object.keys(extra)[0]
    if (unknown !== undefined) return { message: `${unknown}: is not an argument of ${tool.name}`, field: unknown }
    if (value === undefined) return { message: "body: is required", field: "body" }
    body = JSON.stringify(value)
  } else {
    const unknown = Object.keys(rest)[0]
    if (unknown !== undefined) return { message: `${unknown}: is not an argument of ${tool.name}`, field: unknown }
  }
  const qs = query.toString()
  return { method, path: qs ? `${path}?${qs}` : path, body }
}

export const isProblem = (r: RouteRequest | ArgumentProblem): r is ArgumentProblem => "message" in r

/** An MCP `tools/call` result (the shape the SDK's CallToolResult schema accepts). */
export interface ToolResult {
  readonly [key: string]: unknown
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A tool error in the one error-body shape (status, type, message, field), without an HTTP call. */
export const argumentError = (problem: ArgumentProblem, requestId: string): ToolResult => ({
  content: [{ type: "text", text: `InvalidInput (400): ${problem.message}` }],
  structuredContent: {
    status: 400,
    _tag: "InvalidInput",
    type: "InvalidInput",
    message: problem.message,
    field: problem.field,
    requestId
  },
  isError: true
})

/**
 * The route's response as a tool result. Success: the JSON body as text, and as structured
 * content when it is an object. Failure (status ≥ 400): `isError: true`, text
 * "<type> (<status>): <message>" and the whole error body (plus `status`) as structured content.
 */
export const toToolResult = (status: number, text: string, retryAfter?: string | null): ToolResult => {
  const parsed = text === "" ? undefined : parse(text)
  if (status >= 400) {
    const body = isRecord(parsed) ? parsed : {}
    const type = typeof body.type === "string" ? body.type : typeof body._tag === "string" ? body._tag : `Http${status}`
    const message = typeof body.message === "string" ? body.message : text || `HTTP ${status}`
    // The route's Retry-After (a 503, a 429), in seconds: a tool result has no headers to carry it.
    const seconds = retryAfter != null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined
    return {
      content: [
        {
          type: "text",
          text: `${type} (${status}): ${message}${seconds !== undefined ? ` (retry after ${seconds} s)` : ""}`
        }
      ],
      structuredContent: {
        status,
        ...body,
        type,
        message,
        ...(seconds !== undefined ? { retryAfterSeconds: seconds } : {})
      },
      isError: true
    }
  }
  if (text === "") return { content: [{ type: "text", text: `(${status}, no content)` }] }
  return {
    content: [{ type: "text", text }],
    ...(isRecord(parsed) ? { structuredContent: parsed } : {})
  }
}
