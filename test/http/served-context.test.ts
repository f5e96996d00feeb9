// What a layer built by seeingOnly / groupSeeing (src/http/servedContext.ts) sees. The HTTP server
// is built seeing the domain services and not the stores beneath them, so that every request
// carries half the context; the promise to keep is that nothing else changes for it: Effect's
// References (the log level, the clock a test moves) and services that are not the app's still
// reach it, and a request still finds every service the server was given.
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option, References } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { TestClock } from "effect/testing"
import { Schema } from "effect"
import { NodeHttpServer } from "@effect/platform-node"
import { groupSeeing, keepingOnly, seeingOnly } from "../../src/http/servedContext.js"

class Named extends Context.Service<Named, { readonly n: number }>()("agent-commerce/test/Named") {}
class Unnamed extends Context.Service<Unnamed, { readonly n: number }>()("agent-commerce/test/Unnamed") {}
class Foreign extends Context.Service<Foreign, { readonly n: number }>()("elsewhere/Foreign") {}

/** What a layer sees when it is built: each service, if present. */
class Seen extends Context.Service<
  Seen,
  {
    readonly named: boolean
    readonly unnamed: boolean
    readonly foreign: boolean
    readonly logLevel: string
    readonly now: number
  }
>()("test/Seen") {}
const look = Layer.effect(
  Seen,
  Effect.gen(function* () {
    return {
      named: Option.isSome(yield* Effect.serviceOption(Named)),
      unnamed: Option.isSome(yield* Effect.serviceOption(Unnamed)),
      foreign: Option.isSome(yield* Effect.serviceOption(Foreign)),
      logLevel: yield* References.MinimumLogLevel,
      now: yield* Clock.currentTimeMillis
    }
  })
)
const around = Layer.mergeAll(
  Layer.succeed(Named, { n: 1 }),
  Layer.succeed(Unnamed, { n: 2 }),
  Layer.succeed(Foreign, { n: 3 }),
  Layer.succeed(References.MinimumLogLevel, "Error")
)

const readSeen = Effect.gen(function* () {
  return yield* Seen
})
const readNamed = Effect.gen(function* () {
  return yield* Named
})

describe("what the HTTP server's layers see", () => {
  it.effect("seeingOnly hides the app's services it does not name, and nothing else", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust("90 minutes")
      const seen = yield* Effect.provide(readSeen, seeingOnly(Named)(look).pipe(Layer.provide(around)))
      expect(seen).toEqual({ named: true, unnamed: false, foreign: true, logLevel: "Error", now: 90 * 60_000 })
      // Without the cut, the same layer sees everything (the test's own baseline).
      const all = yield* Effect.provide(readSeen, look.pipe(Layer.provide(around)))
      expect(all.unnamed).toBe(true)
    })
  )

  it.effect("keepingOnly keeps Effect's entries and the named app services of a context", () =>
    Effect.sync(() => {
      const context = Context.make(Named, { n: 1 }).pipe(Context.add(Unnamed, { n: 2 }), Context.add(Foreign, { n: 3 }))
      const kept = keepingOnly(Named)(context)
      expect([...kept.mapUnsafe.keys()].sort()).toEqual(["agent-commerce/test/Named", "elsewhere/Foreign"])
    })
  )

  it.effect("a group built seeing nothing answers with the services its requests find", () =>
    Effect.gen(function* () {
      const api = HttpApi.make("t").add(
        HttpApiGroup.make("g").add(HttpApiEndpoint.get("n", "/n", { success: Schema.Struct({ n: Schema.Number }) }))
      )
      const group = HttpApiBuilder.group(api, "g", (h) =>
        h.handle("n", () => Effect.map(readNamed, (s) => ({ n: s.n })))
      )
      const served = HttpApiBuilder.layer(api).pipe(
        Layer.provide(groupSeeing()(group)),
        Layer.provide(NodeHttpServer.layerHttpServices),
        Layer.provideMerge(Layer.succeed(Named, { n: 7 }))
      )
      const { handler, dispose } = HttpRouter.toWebHandler(served, { disableLogger: true })
      const answer = yield* Effect.promise(() => handler(new Request("http://x/n")).then((r) => r.json()))
      yield* Effect.promise(dispose)
      expect(answer).toEqual({ n: 7 })
    })
  )
})
