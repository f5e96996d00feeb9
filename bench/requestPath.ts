// `npx tsx bench/requestPath.ts [--requests n] [--rounds n] [--path /api/v1/agent/...] [--bundled]
// [--app-only]`: the CPU one
// authenticated GET costs in process, through the app's own router (global middleware, HttpApi,
// bearer auth, rate limit, handler, on the memory store, workers off), beside a bare HttpApi
// endpoint returning the same value, made like the app's one thing at a time: the success schema
// of GET /me, a context as big as the app's, a bearer security middleware. No sockets and no load
// generator: a tight loop of web requests, CPU per request from process.cpuUsage, the smallest of
// the rounds (the first warms the JIT). On a shared machine this is steadier than `npm run bench`,
// which measures the whole server; docs/performance.md ("The request path") reads both.
// --bundled compiles this file with the server bundle's esbuild options (scripts/serverBuild.mjs) and
// runs that instead, as `npm start` runs the app: steadier than the code tsx loads, and the same
// code the socket bench profiles. --app-only measures the app alone (for a --cpu-prof of it).
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Redacted, References, Schema } from "effect"
import { HttpMiddleware, HttpRouter } from "effect/http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity
} from "effect/http-api"
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { bundleEffectOnly, serverBuildOptions } from "../scripts/serverBuild.mjs"
import { MeResponse } from "../src/http/keys/group.js"
import { ROUTER_CONFIG } from "../src/http/routePath.js"
import { ProcedureAuthLive } from "../src/http/trpc/auth.js"
import { CoreLive, keepHttpServices, RoutesLive } from "../src/layers/app.js"
import { AppConfig } from "../src/services/platform/AppConfig.js"

const argv = process.argv.slice(2)
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(name)
  return i === -1 ? fallback : argv[i + 1]!
}
if (argv.includes("--bundled")) {
  const here = fileURLToPath(import.meta.url)
  const outfile = path.resolve(path.dirname(here), "../node_modules/.cache/agent-commerce-bench/requestPath.mjs")
  mkdirSync(path.dirname(outfile), { recursive: true })
  await build({ ...serverBuildOptions, plugins: [bundleEffectOnly], entryPoints: [here], outfile, logLevel: "error" })
  const run = spawnSync(process.execPath, [outfile, ...argv.filter((a) => a !== "--bundled")], { stdio: "inherit" })
  process.exit(run.status ?? 1)
}
const requests = Number(option("--requests", "10000"))
const rounds = Number(option("--rounds", "6"))
const appPath = option("--path", "/api/v1/agent/me")
const base = "http://127.0.0.1:1"

// The app as `npm start` serves it, minus the socket: LOG_LEVEL=WARN and the tracer off, as the bench runs it.
const app = HttpRouter.toWebHandler(
  RoutesLive.pipe(
    // The request-level services HttpLive provides (src/layers/app.ts), here in the handler's context.
    Layer.provideMerge(ProcedureAuthLive),
    Layer.provideMerge(
      Layer.mergeAll(
        Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true),
        Layer.succeed(References.MinimumLogLevel, "Warn"),
        Layer.succeed(References.TracerEnabled, false)
      )
    ),
    // The services the server sees, cut as HttpLive cuts them (not the stores and ports).
    Layer.provideMerge(Layer.effectContext(Effect.map(Layer.build(CoreLive), keepHttpServices))),
    Layer.provide(NodeHttpServer.layerHttpServices),
    Layer.provideMerge(
      AppConfig.test({
        baseUrl: base,
        storage: "memory",
        rateLimitPerMinute: 1_000_000_000,
        rateLimitPerDay: 1_000_000_000,
        anonymousWritesPerMinute: 1_000_000,
        anonymousWritesPerDay: 100_000_000,
        workers: false
      })
    )
  ),
  { disableLogger: true, routerConfig: ROUTER_CONFIG }
)

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const init: RequestInit = { method, headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers } }
  if (body) init.body = JSON.stringify(body)
  const r = await app.handler(new Request(`${base}${path}`, init))
  return { status: r.status, cookie: r.headers.get("set-cookie") ?? "", text: await r.text() }
}
const signup = await call("POST", "/api/dashboard/signup", {
  email: "path@example.com",
  password: "correct horse battery",
  name: "Path"
})
const cookie = signup.cookie.split(";")[0]!
const agent = JSON.parse(
  (await call("POST", "/api/dashboard/agents", { name: "a", organization: "o" }, { cookie })).text
)
const permissions = ["catalog:read", "evaluate", "acquire", "invest", "create", "commerce:*"]
const key = JSON.parse(
  (await call("POST", `/api/dashboard/agents/${agent.id}/keys`, { name: "k", permissions }, { cookie })).text
)
const auth = { authorization: `Bearer ${key.secret}` }
const answer = await call("GET", appPath, undefined, auth)
if (answer.status !== 200) throw new Error(`GET ${appPath}: ${answer.status} ${answer.text}`)
const value: unknown = JSON.parse(answer.text)

// The bare endpoints: GET /me's value (Schema.Unknown, as bench/baseline.ts), then one thing at a time.
class Who extends Context.Service<Who, { readonly key: string }>()("bench/Who") {}
class Bearer extends HttpApiMiddleware.Service<Bearer, { provides: Who; requires: never }>()("bench/Bearer", {
  security: { bearer: HttpApiSecurity.bearer }
}) {}
/**
 * 80 more services: as many as the app's request context held on 2026-11-28 (86). Since the server
 * sees only the domain services, a /me's context holds 45 (docs/performance.md, "What a request
 * carries"), so this row models about twice the app's context today.
 */
const moreServices = Layer.effectContext(
  Effect.succeed(Context.makeUnsafe(new Map(Array.from({ length: 80 }, (_, i) => [`bench/service${i}`, { i }]))))
)
const bare = (options: { readonly schema?: boolean; readonly services?: boolean; readonly security?: boolean }) => {
  const endpoint = HttpApiEndpoint.get("me", "/api/v1/agent/me", {
    success: options.schema && appPath === "/api/v1/agent/me" ? MeResponse : Schema.Unknown
  })
  const group = options.security
    ? HttpApiGroup.make("g").add(endpoint).middleware(Bearer)
    : HttpApiGroup.make("g").add(endpoint)
  const api = HttpApi.make("bare").add(group)
  // The handler returns the app's decoded answer; its type is the success schema's (the value fits it).
  const handlers = HttpApiBuilder.group(api, "g", (h) => h.handle("me", () => Effect.succeed(value as never)))
  const bearer = Layer.succeed(
    Bearer,
    Bearer.of({
      bearer: (effect, { credential }) => Effect.provideService(effect, Who, { key: Redacted.value(credential) })
    })
  )
  const served = HttpApiBuilder.layer(api).pipe(
    Layer.provide(handlers),
    Layer.provide(bearer),
    Layer.provide(NodeHttpServer.layerHttpServices)
  )
  return HttpRouter.toWebHandler(options.services ? served.pipe(Layer.provideMerge(moreServices)) : served, {
    disableLogger: true
  })
}
const targets: Record<string, { handler: (r: Request) => Promise<Response>; headers: Record<string, string> }> =
  argv.includes("--app-only")
    ? { app: { handler: app.handler, headers: auth } }
    : {
        app: { handler: app.handler, headers: auth },
        bare: { handler: bare({}).handler, headers: {} },
        "bare + success schema": { handler: bare({ schema: true }).handler, headers: {} },
        "bare + 80 services": { handler: bare({ services: true }).handler, headers: {} },
        "bare + bearer middleware": { handler: bare({ security: true }).handler, headers: auth },
        "bare + all three": { handler: bare({ schema: true, services: true, security: true }).handler, headers: auth }
      }
const url = (name: string) => `${base}${name === "app" ? appPath : "/api/v1/agent/me"}`

process.stdout.write(
  `GET ${appPath}: ${requests} requests per round, ${rounds} rounds, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")}\n`
)
const costs = new Map<string, Array<number>>()
for (let round = 0; round < rounds; round++) {
  for (const [name, target] of Object.entries(targets)) {
    const href = url(name)
    const started = process.cpuUsage()
    for (let i = 0; i < requests; i++)
      await (await target.handler(new Request(href, { headers: target.headers }))).arrayBuffer()
    const used = process.cpuUsage(started)
    costs.set(name, [...(costs.get(name) ?? []), (used.user + used.system) / requests])
  }
}
for (const [name, xs] of costs) {
  const sorted = [...xs].sort((a, b) => a - b)
  process.stdout.write(
    `${name.padEnd(26)} ${sorted[0]!.toFixed(1).padStart(6)} µs (median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)})\n`
  )
}
process.stdout.write(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")} at the end\n`
)
process.exit(0)
