// The route table derived from the HttpApi: method, path, group, permission, summary. Discovery,
// docs and the permission tests read it, so no list of routes is kept by hand.
import type { HttpApi, HttpApiGroup } from "effect/http-api"
import { OpenApi } from "effect/http-api"
import { Context, Option } from "effect"
import type { Permission } from "../schema/keys/keys.js"
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

/**
 * The groups of an HttpApi, widened. 4.x's `HttpApi.Top` is not a supertype of a concrete API (its
 * phantom endpoint fields are invariant), though the runtime shape is the same: one cast, here.
 */
export const apiGroups = (api: HttpApi.Constraint): ReadonlyArray<HttpApiGroup.Top> =>
  Object.values((api as unknown as HttpApi.Top).groups)

export const routeTable = (api: HttpApi.Constraint): ReadonlyArray<RouteInfo> => {
  const out: Array<RouteInfo> = []
  for (const g of apiGroups(api)) {
    for (const e of Object.values(g.endpoints)) {
      const mws: ReadonlySet<unknown> = e.middlewares
      const auth = mws.has(AgentAuth) ? "key" : mws.has(DashboardAuth) ? "session" : "public"
      const permission = Option.getOrElse(
        Option.orElse(Context.getOption(e.annotations, RequiredPermission), () =>
          Context.getOption(g.annotations, RequiredPermission)
        ),
        () => null
      )
      const summary = Option.getOrElse(
        Option.orElse(Context.getOption(e.annotations, OpenApi.Summary), () =>
          Context.getOption(e.annotations, OpenApi.Description)
        ),
        () => ""
      )
      out.push({ group: g.identifier, name: e.identifier, method: e.method, path: e.path, auth, permission, summary })
    }
  }
  return out
}
