// Benchmark baselines serving the app's own response bytes: a raw node:http server ("raw") and a
// bare Effect HttpApi endpoint per route, with HttpRouter.serve's defaults ("effect": its request
// logger prints a line per request) or without its logger ("effect-quiet", as the app serves: the
// app's own access log writes nothing below LOG_LEVEL=Info). Usage: baseline.js <raw|effect|effect-quiet> <port> <fixtures.json>
import type { Effect as EffectT, Layer as LayerT } from "effect"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

/** One recorded response of the app: served verbatim for `method pathname`. */
export interface Fixture {
  readonly name: string
  readonly method: "GET" | "POST"
  /** Path without the query string. */
  readonly path: string
  readonly status: number
  readonly contentType: string
  readonly body: string
}

const [mode, portArg, fixturesFile] = process.argv.slice(2)
const port = Number(portArg)
if ((mode !== "raw" && mode !== "effect" && mode !== "effect-quiet") || !Number.isInteger(port) || !fixturesFile) {
  process.stderr.write("usage: baseline <raw|effect|effect-quiet> <port> <fixtures.json>\n")
  process.exit(64)
}
const fixtures = JSON.parse(readFileSync(fixturesFile, "utf8")) as ReadonlyArray<Fixture>

/** Raw node:http: look the route up, read and parse a POST body, write the recorded bytes. */
const serveRaw = () => {
  const routes = new Map(
    fixtures.map((f) => [`${f.method} ${f.path}`, { ...f, bytes: Buffer.from(f.body, "utf8") }] as const)
  )
  const notFound = Buffer.from(JSON.stringify({ type: "NotFound", message: "no route" }))
  const send = (res: ServerResponse, status: number, contentType: string, bytes: Buffer) => {
    res.writeHead(status, { "content-type": contentType, "content-length": bytes.length })
    res.end(bytes)
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const route = routes.get(
      `${req.method ?? "GET"} ${q === -1 ? url : url.slice(0, q)}` as `${Fixture["method"]} ${string}`
    )
    if (!route) return send(res, 404, "application/json", notFound)
    if (req.method === "GET") return send(res, route.status, route.contentType, route.bytes)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      try {
        JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return send(res, 400, "application/json", notFound)
      }
      send(res, route.status, route.contentType, route.bytes)
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(port, "127.0.0.1", () => process.stdout.write(`raw baseline listening on ${port}\n`))
}

/**
 * A bare HttpApi: one endpoint per fixture, Effect's defaults (HttpApiBuilder.layer + HttpRouter.serve,
 * tracer span on, the request logger on unless `quiet`), the payload decoded as unknown JSON and the
 * recorded value schema-encoded back.
 */
const serveEffect = async (quiet: boolean) => {
  // Loaded only in this mode, so the raw baseline's memory is node:http's alone.
  const { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } = await import("effect/http-api")
  const { HttpRouter } = await import("effect/http")
  const { NodeHttpServer, NodeRuntime } = await import("@effect/platform-node")
  const { Effect, Layer, Schema } = await import("effect")
  // Built in a loop, so the static endpoint types are erased (library boundary).
  let group = HttpApiGroup.make("bench") as unknown as { add: (e: unknown) => unknown }
  fixtures.forEach((f, i) => {
    const endpoint =
      f.method === "GET"
        ? HttpApiEndpoint.get(`e${i}`, f.path as `/${string}`, { success: Schema.Unknown })
        : HttpApiEndpoint.post(`e${i}`, f.path as `/${string}`, { payload: Schema.Unknown, success: Schema.Unknown })
    group = group.add(endpoint) as typeof group
  })
  const api = HttpApi.make("bench").add(group as unknown as Parameters<ReturnType<typeof HttpApi.make>["add"]>[0])
  const values = fixtures.map((f) => JSON.parse(f.body) as unknown)
  interface DynamicHandlers {
    readonly handle: (name: string, handler: () => EffectT.Effect<unknown>) => DynamicHandlers
  }
  const GroupLive = HttpApiBuilder.group(
    api as never,
    "bench" as never,
    (handlers: unknown) =>
      // Endpoint names are only known at run time, so the typed builder is driven through a cast.
      fixtures.reduce<DynamicHandlers>(
        (h, _, i) => h.handle(`e${i}`, () => Effect.succeed(values[i])),
        handlers as DynamicHandlers
      ) as never
  ) as unknown as LayerT.Layer<never>
  const ApiLive = HttpApiBuilder.layer(api).pipe(Layer.provide(GroupLive))
  const ServerLive = HttpRouter.serve(ApiLive, { disableLogger: quiet }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
    Layer.tap(() => Effect.sync(() => process.stdout.write(`effect baseline listening on ${port}\n`)))
  )
  NodeRuntime.runMain(Layer.launch(ServerLive as unknown as LayerT.Layer<never>))
}

if (mode === "raw") serveRaw()
else await serveEffect(mode === "effect-quiet")
