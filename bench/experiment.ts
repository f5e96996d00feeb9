// Performance experiments: the app's own pieces assembled with one piece changed at a time, so the
// cost of each (global middleware, router, tracer, auth) is measured rather than guessed.
// Usage: tsx bench/experiment.ts [--duration 5] [--variants app,no-global,...]; results to stdout.
import { build } from "esbuild"
import { spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { LoadResult, LoadSpec, LoadStep } from "./load.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const tmp = path.join(root, "bench", ".tmp")
const argv = process.argv.slice(2)
const option = (name: string) => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}
const duration = Number(option("--duration") ?? 5)
const pin = os.cpus().length >= 2

/** Each variant is a module that exports `layer(port)`: an HTTP server layer needing nothing. */
const variants: Record<string, string> = {
  app: `
    export const layer = (port) => ServerLive(port).pipe(Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  "tracer-on": `
    const App = HttpRouter.serve(RoutesLive, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  "no-global-middleware": `
    const Routes = Layer.mergeAll(
      HttpRouter.addHttpApi(Api).pipe(Layer.provide(HandlersLive)),
      trpcRoutes(procedures))
    const App = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  // A raw router route with a pre-encoded 10 KB body, beside the full app, behind the global middleware.
  "static-route": `
    const body = new TextEncoder().encode(JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ id: i, name: "item " + i, text: "x".repeat(60) })) }))
    const Static = HttpRouter.add("GET", "/x/static", Effect.succeed(HttpServerResponse.uint8Array(body, { contentType: "application/json", headers: { etag: '"v1"', "cache-control": "public, max-age=60" } })))
    const App = HttpRouter.serve(Layer.mergeAll(RoutesLive, Static.pipe(Layer.provide(GlobalMiddlewareLive))), { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  "static-route-no-global": `
    const body = new TextEncoder().encode(JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ id: i, name: "item " + i, text: "x".repeat(60) })) }))
    const Static = HttpRouter.add("GET", "/x/static", Effect.succeed(HttpServerResponse.uint8Array(body, { contentType: "application/json", headers: { etag: '"v1"', "cache-control": "public, max-age=60" } })))
    const Routes = Layer.mergeAll(
      HttpRouter.addHttpApi(Api).pipe(Layer.provide(HandlersLive)),
      trpcRoutes(procedures), Static)
    const App = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  // The same bytes answered before Effect sees the request: node's "request" event checked against a
  // table of pre-encoded public bodies (what services would keep current), everything else passed on.
  "fast-lane": `
    const body = new TextEncoder().encode(JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ id: i, name: "item " + i, text: "x".repeat(60) })) }))
    const lane = new Map([["/x/static", { body, etag: '"v1"' }]])
    const createFastServer = () => {
      const server = createServer()
      const emit = server.emit.bind(server)
      server.emit = (event, ...args) => {
        if (event === "request") {
          const [req, res] = args
          const hit = req.method === "GET" ? lane.get(req.url) : undefined
          if (hit) {
            if (req.headers["if-none-match"] === hit.etag) { res.writeHead(304, { etag: hit.etag }); res.end(); return true }
            res.writeHead(200, { "content-type": "application/json", "content-length": hit.body.length, etag: hit.etag, "cache-control": "public, max-age=60" })
            res.end(hit.body)
            return true
          }
        }
        return emit(event, ...args)
      }
      return server
    }
    const App = HttpRouter.serve(RoutesLive, { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createFastServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  // The mechanism alone: a global middleware that does nothing.
  "static-route-noop-global": `
    const body = new TextEncoder().encode(JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ id: i, name: "item " + i, text: "x".repeat(60) })) }))
    const Static = HttpRouter.add("GET", "/x/static", Effect.succeed(HttpServerResponse.uint8Array(body, { contentType: "application/json", headers: { etag: '"v1"', "cache-control": "public, max-age=60" } })))
    const Noop = HttpRouter.middleware(Effect.succeed((eff) => eff), { global: true })
    const Routes = Layer.mergeAll(
      HttpRouter.addHttpApi(Api).pipe(Layer.provide(HandlersLive)),
      trpcRoutes(procedures), Static).pipe(Layer.provide(Noop))
    const App = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  // The global middleware with its three per-request `locally` scopes replaced by plain FiberRef sets
  // (the request fiber is the request's own, so nothing needs restoring).
  "lean-global-middleware": `
    const App = HttpRouter.serve(Layer.mergeAll(
      HttpRouter.addHttpApi(Api).pipe(Layer.provide(HandlersLive)),
      trpcRoutes(procedures)).pipe(Layer.provide(LeanGlobal)), { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  // … and request ids from a per-process random prefix and a counter instead of 9 random bytes each.
  "lean-global-counter-ids": `
    const App = HttpRouter.serve(Layer.mergeAll(
      HttpRouter.addHttpApi(Api).pipe(Layer.provide(HandlersLive)),
      trpcRoutes(procedures)).pipe(Layer.provide(LeanGlobalCounter)), { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  // Splits GET /me: the same key middleware in front of a constant handler, and no middleware at all.
  "auth-split": `
    class XGroup extends HttpApiGroup.make("x")
      .add(HttpApiEndpoint.get("lite", "/x/lite").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
      .middleware(AgentAuth) {}
    class XOpen extends HttpApiGroup.make("xo").add(HttpApiEndpoint.get("open", "/x/open").addSuccess(Schema.Struct({ ok: Schema.Boolean }))) {}
    class XApi extends HttpApi.make("x").add(XGroup).add(XOpen) {}
    const XLive = Layer.mergeAll(
      HttpApiBuilder.group(XApi, "x", (h) => h.handle("lite", () => Effect.succeed({ ok: true }))).pipe(Layer.provide(AgentAuthLive)),
      HttpApiBuilder.group(XApi, "xo", (h) => h.handle("open", () => Effect.succeed({ ok: true }))))
    const Routes = Layer.mergeAll(RoutesLive, HttpRouter.addHttpApi(XApi).pipe(Layer.provide(XLive), Layer.provide(GlobalMiddlewareLive)))
    const App = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(ProcedureAuthLive), Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`,
  "httpapi-builder": `
    const App = HttpApiBuilder.serve().pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(HandlersLive))),
      Layer.provideMerge(CoreLive))
    export const layer = (port) => App.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port })), Layer.provide(Layer.succeed(AppConfig, config(port))))`
}

const prelude = `
import { HttpRouter, HttpMiddleware, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, LogLevel, Option, Schema } from "effect"
import { AgentAuth } from "${root}/src/http/middleware/auth.ts"
import { AgentAuthLive } from "${root}/src/http/middleware/authLive.ts"
import { createServer } from "node:http"
import { Api } from "${root}/src/http/api.ts"
import { HandlersLive } from "${root}/src/http/handlers/index.ts"
import { GlobalMiddlewareLive } from "${root}/src/http/middleware/global.ts"
import { GlobalMiddlewareLive as LeanGlobal } from "${tmp}/global-lean.ts"
import { GlobalMiddlewareLive as LeanGlobalCounter } from "${tmp}/global-lean-counter.ts"
import { ProcedureAuthLive } from "${root}/src/http/trpc/auth.ts"
import { trpcRoutes } from "${root}/src/http/trpc/adapter.ts"
import { procedures } from "${root}/src/http/trpc/index.ts"
import { CoreLive, RoutesLive, ServerLive } from "${root}/src/layers/app.ts"
import { AppConfig } from "${root}/src/services/AppConfig.ts"
const config = (port) => ({
  port, baseUrl: "http://127.0.0.1:" + port, storage: "memory", databaseUrl: Option.none(), payments: "fake",
  stripeSecretKey: Option.none(), stripeWebhookSecret: Option.none(), stripeApiBase: Option.none(),
  logLevel: LogLevel.Warning, logFormat: "pretty", rateLimitPerMinute: 1000000, rateLimitPerDay: 100000000,
  maxBodyBytes: 1048576, negotiationDelayMs: 0, webhooksAllowLoopback: true, production: false,
  tokenName: "T", tokenSymbol: "T", workers: true, founderAccountId: Option.none()
})
`
const main = `
const port = Number(process.argv[2])
NodeRuntime.runMain(Layer.launch(layer(port)))
`

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0))
    })
  })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const node = (args: ReadonlyArray<string>, cpu: number): ChildProcess =>
  pin
    ? spawn("taskset", ["-c", String(cpu), process.execPath, ...args], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
    : spawn(process.execPath, [...args], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })

const runLoad = async (url: string, steps: ReadonlyArray<LoadStep>, seconds: number): Promise<LoadResult> => {
  const spec: LoadSpec = { url, connections: 10, durationSeconds: seconds, steps }
  const child = node([path.join(tmp, "load.mjs"), JSON.stringify(spec)], 1)
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  await new Promise((r) => child.once("exit", r))
  return JSON.parse(out.trim()) as LoadResult
}

const agentKey = async (base: string) => {
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${p}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  const signup = await post("/api/dashboard/signup", { email: `x-${randomBytes(4).toString("hex")}@example.com`, password: "correct horse battery", name: "x" })
  const cookie = (signup.headers.get("set-cookie") ?? "").split(";")[0]
  const agent = (await (await post("/api/dashboard/agents", { name: "a" }, { cookie })).json()) as { id: string }
  const key = (await (await post(`/api/dashboard/agents/${agent.id}/keys`, { name: "k", permissions: ["catalog:read", "commerce:*"] }, { cookie })).json()) as { secret: string }
  return `Bearer ${key.secret}`
}

/** Writes edited copies of src/http/middleware/global.ts (imports made absolute) for the lean variants. */
const writeLeanCopies = () => {
  const src = readFileSync(path.join(root, "src/http/middleware/global.ts"), "utf8").replace(
    /from "\.\.\/\.\.\/([^"]+)\.js"|from "\.\.\/([^"]+)\.js"|from "\.\/([^"]+)\.js"/g,
    (_m, a?: string, b?: string, c?: string) =>
      `from "${root}/src/${a ?? (b ? `http/${b}` : `http/middleware/${c}`)}.ts"`
  )
  const swap = (text: string, from: string, to: string) => {
    if (!text.includes(from)) throw new Error(`global.ts changed; the lean variant cannot find: ${from}`)
    return text.replace(from, to)
  }
  let lean = swap(src, "            HttpIncomingMessage.withMaxBodySize(maxBody),\n            Effect.locally(currentRequestId, requestId),\n", "")
  lean = swap(lean, "            Effect.annotateLogs(\"requestId\", requestId)\n", "")
  lean = swap(lean, "          response = yield* withIdempotency(", "          yield* FiberRef.set(HttpIncomingMessage.MaxBodySize, maxBody)\n          yield* FiberRef.set(currentRequestId, requestId)\n          yield* FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set(\"requestId\", requestId as unknown))\n          response = yield* withIdempotency(")
  lean = swap(lean, 'import { Cause, Effect, FiberRef, Option } from "effect"', 'import { Cause, Effect, FiberRef, HashMap, Option } from "effect"')
  writeFileSync(path.join(tmp, "global-lean.ts"), lean)
  const counter = swap(
    lean,
    "`req_${randomBytes(9).toString(\"base64url\")}`",
    "`req_${REQUEST_PREFIX}${(requestCounter.n++).toString(36)}`"
  ).replace("const MUTATING =", "const REQUEST_PREFIX = randomBytes(6).toString(\"base64url\")\nconst requestCounter = { n: 0 }\nconst MUTATING =")
  writeFileSync(path.join(tmp, "global-lean-counter.ts"), counter)
}

const run = async () => {
  mkdirSync(tmp, { recursive: true })
  writeLeanCopies()
  await build({ entryPoints: [path.join(root, "bench", "load.ts")], outfile: path.join(tmp, "load.mjs"), bundle: true, platform: "node", format: "esm", packages: "external", logLevel: "warning" })
  const wanted = option("--variants")?.split(",") ?? Object.keys(variants)
  const out: Array<string> = []
  for (const name of wanted) {
    const src = path.join(tmp, `exp-${name}.ts`)
    writeFileSync(src, `${prelude}\n${variants[name]}\n${main}`)
    const outfile = path.join(tmp, `exp-${name}.mjs`)
    await build({ entryPoints: [src], outfile, bundle: true, platform: "node", target: "node20", format: "esm", packages: "external", logLevel: "warning" })
    const port = await freePort()
    const server = node(["--import", pathToFileURL(path.join(root, "bench", "loopback.mjs")).href, outfile, String(port)], 0)
    const base = `http://127.0.0.1:${port}`
    for (let i = 0; i < 100; i++) {
      if (await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) }).then(() => true, () => false)) break
      await sleep(100)
    }
    await sleep(500)
    const authorization = await agentKey(base)
    for (const [label, steps] of [
      ...(name === "auth-split" ? [["GET /x/open", [{ method: "GET", path: "/x/open" }]] as const, ["GET /x/lite", [{ method: "GET", path: "/x/lite", headers: { authorization } }]] as const] : []),
      ...(name.startsWith("static") || name === "fast-lane" ? [["GET /x/static", [{ method: "GET", path: "/x/static" }]] as const] : []),
      ["GET /health", [{ method: "GET", path: "/health" }]],
      ["GET /me", [{ method: "GET", path: "/api/v1/agent/me", headers: { authorization } }]]
    ] as const) {
      await runLoad(base, steps, 1)
      const r = await runLoad(base, steps, duration)
      const line = `${name.padEnd(22)} ${label.padEnd(12)} ${Math.round(r.requestsPerSecond).toString().padStart(7)} req/s  p99 ${r.latencyP99Ms} ms  non2xx ${r.non2xx}`
      out.push(line)
      process.stdout.write(`${line}\n`)
    }
    server.kill("SIGTERM")
    await new Promise((r) => server.once("exit", r))
  }
  process.stdout.write(`\n${out.join("\n")}\n`)
}

run().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`)
  process.exit(1)
})
