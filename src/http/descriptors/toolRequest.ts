// How a tool call becomes the HTTP request of the tool's REST route: the routing details of the
// tool descriptor (src/http/descriptors/tools.ts) applied to the call's arguments. MCP's tools/call
// and A2A's skills both run a tool this way, in process, through the same router as REST.
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
