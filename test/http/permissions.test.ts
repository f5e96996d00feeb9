// Walks the route table: every key route answers 401 without a key and 403 to a key without its
// permission; docs/permissions.md is current.
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../src/http/api.js"
import { renderPermissionsDoc } from "../../src/http/permissionsDoc.js"
import { routeTable } from "../../src/http/routeTable.js"
import type { Permission } from "../../src/schema/keys/keys.js"
import { createAgentKey, signUp, type AgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const routes = routeTable(Api)
const keyRoutes = routes.filter((r) => r.auth === "key")
const concrete = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => `${name}_0000`)

let server: TestServer
const keys = new Map<Permission, AgentKey>()
let owner: { cookie: string; accountId: string }
beforeAll(async () => {
  server = await startServer({ config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  owner = await signUp(server.baseUrl)
  // One key per "other" permission, so each route can be called with a key that lacks its own.
  for (const p of ["catalog:read", "evaluate"] as const) keys.set(p, await createAgentKey(server.baseUrl, [p], owner))
})
afterAll(async () => {
  await server?.close()
})

describe("route → permission table", () => {
  it("docs/permissions.md is generated from the code and current", () => {
    expect(readFileSync("docs/permissions.md", "utf8")).toBe(renderPermissionsDoc())
  })

  it("every agent and commerce route is behind a key", () => {
    for (const r of routes.filter(
      (r) => r.path.startsWith("/api/v1/agent/") && r.path !== "/api/v1/agent/openapi.json"
    )) {
      expect(r.auth, `${r.method} ${r.path}`).toBe("key")
    }
  })

  /** A request to the route, with the body a write takes. */
  const requestTo = (r: (typeof keyRoutes)[number], headers: Record<string, string>) =>
    fetch(`${server.baseUrl}${concrete(r.path)}`, {
      method: r.method,
      headers: {
        ...headers,
        ...(r.method === "GET" || r.method === "DELETE" ? {} : { "content-type": "application/json" })
      },
      ...(r.method === "GET" || r.method === "DELETE" ? {} : { body: "{}" })
    })

  it.each(keyRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))("%s: 401 without a key", async (_, r) => {
    const anonymous = await requestTo(r, {})
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/)
  })

  it.each(
    keyRoutes.flatMap((r) => (r.permission === null ? [] : [[`${r.method} ${r.path}`, r, r.permission] as const]))
  )("%s: 403 with a key without its permission", async (_, r, permission) => {
    const other = keys.get(permission === "catalog:read" ? "evaluate" : "catalog:read")!
    const res = await requestTo(r, other.auth)
    expect(res.status).toBe(403)
    const body = await res.json()
    expect(body).toMatchObject({ type: "Forbidden", permission })
  })
})
