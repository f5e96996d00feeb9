// The route table derived from the HttpApi: method, path, group, permission, summary. Discovery,
// docs and the permission tests read it, so no list of routes is kept by hand.
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { OpenApi } from "effect/http-api"
import { Context, Option } from "effect"
import type { Permission } from "../schema/keys.js"
import { AgentAuth, DashboardAuth, RequiredPermission } from "./middleware/auth.js"

export interface RouteInfo {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly path: string
  readonly auth: "public" | "key" | "session"
  /** For key routes: the permission needed (null: any valid key). */
  readonly permission: Permission | null
  readonly summary: string
}

type AnyGroup = HttpApiGroup.HttpApiGroup<string, HttpApiEndpoint.HttpApiEndpoint.Any, unknown, unknown, boolean>

export const routeTable = (api: HttpApi.HttpApi.Any): ReadonlyArray<RouteInfo> => {
  const out: Array<RouteInfo> = []
  const groups = (api as unknown as { groups: Record<string, AnyGroup> }).groups
  for (const group of Object.values(groups)) {
    const g = group as unknown as {
      identifier: string
      middlewares: ReadonlySet<unknown>
      annotations: Context.Context<never>
      endpoints: Record<string, { name: string; method: string; path: string; middlewares: ReadonlySet<unknown>; annotations: Context.Context<never> }>
    }
    for (const e of Object.values(g.endpoints)) {
      const mws = new Set([...g.middlewares, ...e.middlewares])
      const auth = mws.has(AgentAuth) ? "key" : mws.has(DashboardAuth) ? "session" : "public"
      const permission = Option.getOrElse(
        Option.orElse(Context.getOption(e.annotations, RequiredPermission), () => Context.getOption(g.annotations, RequiredPermission)),
        () => null
      )
      const summary = Option.getOrElse(
        Option.orElse(Context.getOption(e.annotations, OpenApi.Summary), () => Context.getOption(e.annotations, OpenApi.Description)),
        () => ""
      )
      out.push({ group: g.identifier, name: e.name, method: e.method, path: e.path, auth, permission, summary })
    }
  }
  return out
}

/** "METHOD /path/:param" → permission, for the bearer middleware. */
export const permissionIndex = (api: HttpApi.HttpApi.Any): ReadonlyMap<string, Permission | null> =>
  new Map(routeTable(api).filter((r) => r.auth === "key").map((r) => [`${r.method} ${r.path}`, r.permission]))
