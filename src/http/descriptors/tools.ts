// MCP tool descriptions derived from the HttpApi: one tool per agent/commerce endpoint, its input
// schema built from the endpoint's own path, url-param and payload schemas (JSONSchema.make). The
// MCP server lists them, A2A runs its skills as them, and the agent files publish them.
import type { HttpApi } from "effect/http-api"
import { apiGroups } from "../routeTable.js"
import { Option, type Schema } from "effect"
import { AGENT_API_PREFIX } from "../../schema/platform/routes.js"
import { jsonSchemaOf } from "../../schema/platform/common.js"
import { Api } from "../api.js"
import { routeTable } from "../routeTable.js"

type Json = Record<string, unknown>

/** A tool as MCP `tools/list` shows it. */
export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: Json
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
  readonly _meta: { readonly method: string; readonly path: string; readonly permission: string | null }
}

/** A tool plus what an MCP server needs to turn its arguments back into an HTTP call. */
export interface ApiTool extends McpTool {
  readonly group: string
  readonly endpoint: string
  /** Argument names that fill `:params` of the path, and the query string. */
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  /**
   * How the JSON body is formed: "none" (no body), "fields" (the remaining arguments are the body's
   * fields) or "body" (the `body` argument is the whole body).
   */
  readonly body: "none" | "fields" | "body"
}

const GENERIC_NAMES = new Set([
  "get",
  "put",
  "remove",
  "delete",
  "list",
  "test",
  "events",
  "deliveries",
  "health",
  "discovery",
  "invoke",
  "update",
  "create_one"
])
/** Groups whose one-word endpoint names are always prefixed (their names only make sense with the group). */
const GENERIC_GROUPS = new Set(["webhooks", "mpp"])

export const snakeCase = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toLowerCase()

interface EndpointLike {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly pathSchema: Option.Option<Schema.Top>
  readonly urlParamsSchema: Option.Option<Schema.Top>
  readonly payloadSchema: Option.Option<Schema.Top>
}

const endpointsOf = (api: HttpApi.Constraint) =>
  apiGroups(api).flatMap((g) =>
    Object.values(g.endpoints).map((e) => {
      const payload = [...e.payload.values()][0]
      const like: EndpointLike = {
        name: e.identifier,
        method: e.method,
        path: e.path,
        pathSchema: Option.fromNullishOr(e.params),
        urlParamsSchema: Option.fromNullishOr(e.query),
        payloadSchema: payload && "schemas" in payload ? Option.some(payload.schemas[0]) : Option.none()
      }
      return { group: g.identifier, e: like }
    })
  )

const jsonSchemaOfTool = (schema: Schema.Top): Json => {
  try {
    return jsonSchemaOf(schema) as Json
  } catch {
    return { type: "object" }
  }
}

/** An object schema's properties and required list, following one top-level $ref into $defs. */
const objectParts = (
  root: Json
): { properties: Json; required: ReadonlyArray<string>; strict: boolean } | undefined => {
  let s = root
  if (typeof s.$ref === "string" && s.$ref.startsWith("#/$defs/")) {
    const defs = (root.$defs ?? {}) as Record<string, Json>
    s = defs[s.$ref.slice("#/$defs/".length)] ?? s
  }
  if (s.type !== "object" || typeof s.properties !== "object" || s.anyOf !== undefined || s.oneOf !== undefined)
    return undefined
  return {
    properties: s.properties as Json,
    required: Array.isArray(s.required) ? (s.required as Array<string>) : [],
    strict: s.additionalProperties === false
  }
}

const NO_BODY = new Set(["GET", "HEAD", "DELETE", "OPTIONS"])

/** One input schema (type object) from the endpoint's path, url-param and payload schemas. */
const inputOf = (e: EndpointLike) => {
  const properties: Json = {}
  const required: Array<string> = []
  const defs: Json = {}
  let strict = true
  const take = (schema: Schema.Top): Json => {
    const root = jsonSchemaOfTool(schema)
    Object.assign(defs, (root.$defs ?? {}) as Json)
    return root
  }
  const mergeObject = (root: Json): ReadonlyArray<string> => {
    const parts = objectParts(root)
    if (!parts) return []
    Object.assign(properties, parts.properties)
    required.push(...parts.required)
    strict &&= parts.strict
    return Object.keys(parts.properties)
  }
  const pathParams = Option.match(e.pathSchema, { onNone: () => [], onSome: (s) => mergeObject(take(s)) })
  // A payload on a bodiless method travels as url params.
  const queryRoots = [e.urlParamsSchema, NO_BODY.has(e.method) ? e.payloadSchema : Option.none()]
  const queryParams = queryRoots.flatMap((o) =>
    Option.match(o, { onNone: () => [], onSome: (s) => mergeObject(take(s)) })
  )
  let body: ApiTool["body"] = "none"
  let extra: Json = {}
  if (!NO_BODY.has(e.method) && Option.isSome(e.payloadSchema)) {
    const root = take(e.payloadSchema.value)
    const parts = objectParts(root)
    const clash = parts ? Object.keys(parts.properties).some((k) => k in properties) : false
    if (parts && !clash) {
      mergeObject(root)
      body = "fields"
    } else if (!parts && pathParams.length === 0 && queryParams.length === 0) {
      // A union or other non-object body with nothing else: the body schema is the input itself.
      const { $schema: _s, $defs: _d, ...rest } = root
      extra = rest
      body = "fields"
      strict = false
    } else {
      const { $schema: _s, $defs: _d, ...rest } = root
      properties.body = rest
      required.push("body")
      body = "body"
    }
  }
  const inputSchema: Json = {
    type: "object",
    properties,
    required: [...new Set(required)],
    ...extra,
    ...(strict && Object.keys(extra).length === 0 ? { additionalProperties: false } : {}),
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {})
  }
  return { inputSchema, pathParams, queryParams, body }
}

const humanTitle = (name: string) => {
  const words = snakeCase(name).split("_").join(" ")
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/**
 * The tools of every endpoint whose path starts with `prefix` (default: the agent API and the
 * commerce protocol). Names are the endpoint names in snake_case, made unique with the group name.
 */
export const toolsFromApi = (api: HttpApi.Constraint, prefix = "/api/v1/agent"): ReadonlyArray<ApiTool> => {
  const table = new Map(routeTable(api).map((r) => [`${r.group}.${r.name}`, r]))
  const selected = endpointsOf(api).filter(({ e }) => e.path === prefix || e.path.startsWith(`${prefix}/`))
  const counts = new Map<string, number>()
  for (const { e } of selected) counts.set(snakeCase(e.name), (counts.get(snakeCase(e.name)) ?? 0) + 1)
  return selected.map(({ group, e }) => {
    const info = table.get(`${group}.${e.name}`)
    const base = snakeCase(e.name)
    // Generic endpoint names (get, put, remove, test, health, …) say nothing on their own: prefix the group.
    const generic = GENERIC_NAMES.has(base) || (base.split("_").length === 1 && GENERIC_GROUPS.has(group))
    const name = (counts.get(base) ?? 0) > 1 || generic ? `${snakeCase(group)}_${base}` : base
    const readOnly = e.method === "GET" || e.method === "HEAD"
    const title = humanTitle(e.name)
    return {
      name,
      title,
      description: info?.summary || `${e.method} ${e.path}`,
      ...inputOf(e),
      annotations: {
        title,
        readOnlyHint: readOnly,
        destructiveHint: e.method === "DELETE",
        idempotentHint: readOnly || e.method === "PUT" || e.method === "DELETE",
        openWorldHint: false
      },
      _meta: { method: e.method, path: e.path, permission: info?.permission ?? null },
      group,
      endpoint: e.name
    }
  })
}

/** The public MCP shape of a tool (drops the routing details). */
export const toMcpTool = (t: ApiTool): McpTool => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema,
  annotations: t.annotations,
  _meta: t._meta
})

/** The MCP tools of the agent API and the commerce protocol. */
export const agentTools: ReadonlyArray<ApiTool> = toolsFromApi(Api, AGENT_API_PREFIX)
