// What a request's fiber carries. Every service in the context the HTTP server is built in rides
// along with every request, and is copied whenever the request's context is extended past its
// overlays or merged: HttpApiBuilder.group keeps the context it was built in and merges it into
// each of its requests (`Effect.provideContext`), and the router's `Context.add`s flatten it after
// eight. Built in the app's whole context (85 services, 34 stores and a dozen ports among them), a
// GET /me copied two maps of ~90 entries per request and set ~100 more (docs/performance.md, "What a
// request carries").
import { Context, Effect, Layer, Scope } from "effect"
import type { FileSystem, Path } from "effect"
import type { Etag, HttpPlatform, HttpRouter, HttpServer } from "effect/http"

type Keys = ReadonlyArray<Context.Key<unknown, unknown>>
type Ids<Tags extends Keys> = Context.Service.Identifier<Tags[number]>

/**
 * An HttpApi group built seeing only the services it names: its security middleware, which the
 * group looks up once when it is built. Its handlers' services are request-level requirements
 * (`HttpRouter.Request<"Requires", _>` in the group's type), which the server's context meets at
 * request time; what the group was built in adds nothing to that but a copy. A group's requests
 * now merge its middleware and the memo map `Layer.build` always adds (so even a group with no
 * middleware merges one entry, and the merge still copies the request's map, but sets one or two
 * entries where it set ~100). The compiler checks that whatever else the group needs to be built is
 * named.
 */
export const groupSeeing =
  <const Tags extends Keys>(...tags: Tags) =>
  <A, E, R extends Ids<Tags> | HttpRouter.Request<string, unknown>>(
    group: Layer.Layer<A, E, R>
  ): Layer.Layer<A, E, R> =>
    Layer.effectContext(
      Effect.updateContext(
        Layer.build(group),
        // Sound by R's bound: the rest of R is request-level, met where the request runs.
        (context: Context.Context<Scope.Scope>) =>
          Context.pick(Scope.Scope, ...tags)(context) as Context.Context<R | Scope.Scope>
      )
    )

/** Keys of the app's own services; everything else in a context is Effect's or a test's. */
const APP_KEY_PREFIX = "agent-commerce/"

/** What the HTTP server needs of Effect's platform, besides the app's services. */
type PlatformServices =
  FileSystem.FileSystem | Path.Path | Etag.Generator | HttpPlatform.HttpPlatform | HttpServer.HttpServer

/** A context holding, of the app's own services, only those named; Effect's and a test's pass. */
export const keepingOnly = <const Tags extends Keys>(...tags: Tags) => {
  const named = new Set(tags.map((tag) => tag.key))
  return <R>(context: Context.Context<R>): Context.Context<R> =>
    Context.makeUnsafe(
      new Map([...context.mapUnsafe].filter(([key]) => !key.startsWith(APP_KEY_PREFIX) || named.has(key)))
    )
}

/**
 * A layer built seeing, of the app's own services, only those named; Effect's services and
 * References (the loggers, the log level, a test's clock) pass as they are. The HTTP server is built
 * this way (src/layers/app.ts) seeing the domain services and not the stores and ports beneath them,
 * so the context every request starts from holds about half as many services. The compiler checks
 * that the layer needs nothing of the app's beyond what is named (its other needs must be Effect's
 * platform services).
 */
export const seeingOnly = <const Tags extends Keys>(...tags: Tags) => {
  const keep = keepingOnly(...tags)
  return <A, E, R>(
    layer: Layer.Layer<A, E, R> &
      ([Exclude<R, Ids<Tags> | PlatformServices | Scope.Scope>] extends [never]
        ? unknown
        : { readonly "needs a service not named": Exclude<R, Ids<Tags> | PlatformServices | Scope.Scope> })
  ): Layer.Layer<A, E, Exclude<R, Scope.Scope>> =>
    Layer.effectContext(Effect.updateContext(Layer.build(layer as Layer.Layer<A, E, R>), keep<R | Scope.Scope>))
}
